"""The side process starts from side.py's bytecode when that is current, else from side.py."""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

from toolrun.reaper.link import _side_script

SCRIPT = """\
import sys
print(__name__, sys.argv[0].rsplit("/", 1)[-1], *sys.argv[1:], sep="|")

"""


def _script(tmp_path: Path, text: str = SCRIPT) -> Path:
    script = tmp_path / "side.py"
    script.write_text(text)
    return script


def _run(argv: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-I", "-S", *argv, "12", "345"],
                          capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_a_current_cache_is_run_and_the_script_sees_its_own_argv(tmp_path: Path) -> None:
    script = _script(tmp_path)
    cached = py_compile.compile(str(script), doraise=True)
    argv = _side_script(str(script))
    assert argv[0] == "-c"  # the loader
    assert argv[2:] == [str(script), cached]
    assert str(script) in argv  # (its command line still names side.py)
    # The source is removed: only the bytecode can have run.
    script.unlink()
    assert _run(argv)[0] == "__main__|side.py|12|345"


def test_a_stale_or_missing_cache_runs_the_source(tmp_path: Path) -> None:
    script = _script(tmp_path)
    assert _side_script(str(script)) == [str(script)]  # no cache at all
    py_compile.compile(str(script), doraise=True)
    # the source changed since (another size, a later time): the cache is not used
    script.write_text(SCRIPT.replace("print(__name__", "print('new', __name__"))
    stat = script.stat()
    os.utime(script, (stat.st_atime, stat.st_mtime + 10))
    argv = _side_script(str(script))
    assert argv == [str(script)]
    assert _run(argv)[0] == "new|__main__|side.py|12|345"


def test_bytecode_that_will_not_load_falls_back_to_the_source(tmp_path: Path) -> None:
    script = _script(tmp_path)
    cached = Path(py_compile.compile(str(script), doraise=True))
    argv = _side_script(str(script))
    cached.write_bytes(cached.read_bytes()[:16] + b"\x00garbage")  # same header, bad code
    assert _run(argv)[0] == "__main__|side.py|12|345"
