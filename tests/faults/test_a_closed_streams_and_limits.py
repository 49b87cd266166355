"""#27 item 12: toolrun started with closed standard streams, or where no process or
thread may be made (``ulimit -u``), gives no traceback: every call has its one result,
the journal has its end record (never "incomplete forever")."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.support_a import write_plan

CALLS = [
    {"id": "a", "tool": "Bash", "input": {"command": "echo one"}},
    {"id": "b", "tool": "Write", "input": {"file_path": "w.txt", "content": "two\n"}},
    {"id": "c", "tool": "Bash", "input": {"command": "cat w.txt"}},
]


def records(ws: Path) -> list[dict[str, object]]:
    (path,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]  # every line JSON


@pytest.mark.parametrize("closed", [(0, 1, 2), (0,), (1,), (2,), (1, 2)])
def test_a_closed_standard_streams_run_the_plan_without_a_traceback(
    tmp_path: Path, closed: tuple[int, ...]
) -> None:
    (tmp_path / "toolrun.yaml").write_text("permissions:\n  allow: [Bash, Write]\n")
    write_plan(tmp_path, CALLS)

    def close() -> None:
        for fd in closed:
            os.close(fd)

    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.json"], cwd=tmp_path,
        capture_output=True, text=True, timeout=120, preexec_fn=close, check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    if 1 not in closed:
        assert "3 ok in" in done.stdout
    got = records(tmp_path)
    assert [(r["id"], r["status"]) for r in got if r["event"] == "result"] == [
        ("a", "ok"), ("b", "ok"), ("c", "ok")
    ]
    assert got[-1]["event"] == "end"
    (c,) = (r for r in got if r.get("id") == "c" and r["event"] == "result")
    assert c["output"] == "two\n"


def can_drop_to_nobody() -> bool:
    return os.geteuid() == 0 and all(shutil.which(t) for t in ("unshare", "setpriv", "prlimit"))


@pytest.fixture
def shared_ws() -> Iterator[Path]:
    """A workspace another user can write (pytest's own are private to us)."""
    ws = Path(tempfile.mkdtemp(prefix="toolrun-nproc-"))
    ws.chmod(0o777)
    yield ws
    shutil.rmtree(ws, ignore_errors=True)


AS_NOBODY = """#!/bin/sh
# "$@" as nobody under RLIMIT_NPROC=$NPROC (root is exempt from it), in a private mount
# namespace where the interpreter (under /root, which nobody cannot enter) is reachable
set -e
b=$(mktemp -d)
mount --bind /root "$b"
mount -t tmpfs -o mode=755 tmpfs /root
for d in "$b"/.* "$b"/*; do
  n=$(basename "$d"); [ "$n" = . ] || [ "$n" = .. ] || [ ! -d "$d" ] && continue
  mkdir -p "/root/$n" && mount --bind "$d" "/root/$n"
done
exec prlimit --nproc="$NPROC" setpriv --reuid 65534 --regid 65534 --clear-groups "$@"
"""


@pytest.mark.skipif(not can_drop_to_nobody(), reason="needs root, unshare, setpriv and prlimit")
@pytest.mark.parametrize("limit", [1, 2, 3, 4])
def test_a_no_process_to_be_had_gives_every_call_an_error_and_the_journal_its_end(
    shared_ws: Path, limit: int
) -> None:
    (shared_ws / "toolrun.yaml").write_text("permissions:\n  allow: [Bash, Write]\n")
    write_plan(shared_ws, CALLS)
    script = shared_ws / "as-nobody.sh"
    script.write_text(AS_NOBODY)
    script.chmod(0o755)
    env = {**os.environ, "NPROC": str(limit), "HOME": str(shared_ws)}
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", str(script),
         sys.executable, "-m", "toolrun", "exec", "plan.json"],
        cwd=shared_ws, capture_output=True, text=True, timeout=120, env=env, check=False,
    )
    if "Permission denied" in done.stderr and "python" in done.stderr:
        pytest.skip(f"the interpreter cannot be run as nobody here: {done.stderr[-200:]}")
    assert "Traceback" not in done.stderr, done.stderr
    got = records(shared_ws)
    results = [r for r in got if r["event"] == "result"]
    assert [r["id"] for r in results] == ["a", "b", "c"]  # one result each
    assert done.returncode == (0 if all(r["status"] == "ok" for r in results) else 1)
    for r in results:
        if r["status"] != "ok":
            assert "ulimit -u" in str(r["error"]) or "thread" in str(r["error"])
    assert any(r["status"] != "ok" for r in results)  # (the limit did bite)
    assert got[-1]["event"] == "end"
    listed = subprocess.run([sys.executable, "-m", "toolrun", "runs"], cwd=shared_ws,
                            capture_output=True, text=True, check=False)
    assert "incomplete" not in listed.stdout and "crashed" not in listed.stdout
