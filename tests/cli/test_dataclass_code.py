"""The cache of the code ``@dataclass`` generates (toolrun.dataclass_code), in real processes.

Each test runs a fresh interpreter (the cache is per process and installs once), with a
cache file in ``tmp_path``; the second process must take the code from the file and make
classes that behave exactly as compiled ones do.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path

import pytest

import toolrun

SOURCE = str(Path(toolrun.__file__).resolve().parent.parent)

#: Makes a few dataclasses under the cache at argv[1], prints what they do and the cache's
#: figures (compiled: texts not taken from the file).
SCRIPT = """\
import json, sys
from toolrun.dataclass_code import install
cache = install(sys.argv[1])
import dataclasses
from dataclasses import dataclass, field, FrozenInstanceError

@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: str = "a"
    tags: tuple = field(default_factory=tuple)

@dataclass(order=True)
class Item:
    rank: int
    name: str = "n"

p = Point(1)
try:
    p.x = 2
    frozen = False
except FrozenInstanceError:
    frozen = True
print(json.dumps({
    "repr": repr(p), "eq": p == Point(1, "a", ()), "ne": p == Point(2),
    "hash": hash(p) == hash(Point(1)), "frozen": frozen,
    "order": sorted([Item(2), Item(1, "b")]) == [Item(1, "b"), Item(2)],
    "annotations": {k: getattr(v, "__name__", repr(v))
                    for k, v in Point.__init__.__annotations__.items()},
    "filename": Point.__init__.__code__.co_filename,
    "replace": repr(dataclasses.replace(p, y="b")),
    "compiled": cache.compiled,
}))
cache.save()
print(json.dumps({"after_save": cache.compiled}))
"""


def run(cache: Path, *, write: bool = True, script: str = SCRIPT) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = SOURCE
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", script, str(cache)],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    first, *_ = done.stdout.splitlines()
    result: dict[str, object] = json.loads(first)
    return result


EXPECTED = {
    "repr": "Point(x=1, y='a', tags=())",
    "eq": True,
    "ne": False,
    "hash": True,
    "frozen": True,
    "order": True,
    # real objects, as dataclasses' own exec makes them: the cache's compile must not
    # inherit the `from __future__ import annotations` of the module that compiles
    "annotations": {"x": "int", "y": "str", "tags": "tuple", "return": "None"},
    "filename": "<string>",
    "replace": "Point(x=1, y='b', tags=())",
}


def test_the_second_process_compiles_nothing_and_its_classes_behave_the_same(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "code.marshal"
    first = run(cache)
    assert cache.is_file()
    second = run(cache)
    assert first.pop("compiled") > 0
    assert second.pop("compiled") == 0  # every method's code came from the file
    assert first == second == EXPECTED


def test_a_class_whose_fields_changed_misses_and_is_compiled(tmp_path: Path) -> None:
    cache = tmp_path / "code.marshal"
    run(cache)
    changed = SCRIPT.replace("    y: str = \"a\"\n", "    y: str = \"a\"\n    z: int = 0\n")
    result = run(cache, script=changed)
    assert result["compiled"] > 0
    assert result["repr"] == "Point(x=1, y='a', z=0, tags=())"


def _poisoned(cache: Path, mode: int) -> None:
    """The cache file with every text mapped to code that prints POISON: what a file
    someone else could write might hold."""
    table = marshal.loads(cache.read_bytes()[len(MAGIC_NUMBER) :])
    bad = marshal.dumps(compile("print('POISON')", "<string>", "exec"))
    cache.write_bytes(MAGIC_NUMBER + marshal.dumps(dict.fromkeys(table, bad)))
    cache.chmod(mode)


@pytest.mark.parametrize("mode", [0o666, 0o664, 0o646, 0o622])
def test_a_file_others_may_write_is_never_run(tmp_path: Path, mode: int) -> None:
    cache = tmp_path / "code.marshal"
    run(cache)
    _poisoned(cache, mode)
    result = run(cache, write=False)
    assert result["compiled"] > 0
    assert {k: v for k, v in result.items() if k != "compiled"} == EXPECTED


def test_the_file_is_what_runs_when_it_is_ours_alone(tmp_path: Path) -> None:
    # (the other side of the test above: the file's code is the code that runs)
    cache = tmp_path / "code.marshal"
    run(cache)
    _poisoned(cache, 0o644)
    env = {**os.environ, "PYTHONPATH": SOURCE}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(cache)], capture_output=True,
                          text=True, check=False, env=env)
    assert "POISON" in done.stdout


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: b"\0\0\0\0" + data[4:],  # another interpreter's magic number
        lambda data: MAGIC_NUMBER + marshal.dumps(["not", "a", "table"]),
        lambda data: MAGIC_NUMBER + marshal.dumps(  # each text's code unreadable
            dict.fromkeys(marshal.loads(data[len(MAGIC_NUMBER) :]), b"\xff\x00garbage")
        ),
        lambda data: MAGIC_NUMBER + marshal.dumps(  # each text's "code" not code
            dict.fromkeys(marshal.loads(data[len(MAGIC_NUMBER) :]), marshal.dumps("text"))
        ),
        lambda data: b"",
    ],
)
def test_a_damaged_file_is_ignored_and_written_again(tmp_path: Path, damage: object) -> None:
    cache = tmp_path / "code.marshal"
    run(cache)
    cache.write_bytes(damage(cache.read_bytes()))  # type: ignore[operator]
    result = run(cache)
    assert result["compiled"] > 0
    assert {k: v for k, v in result.items() if k != "compiled"} == EXPECTED
    assert run(cache)["compiled"] == 0  # and it was written whole again


def test_nothing_is_written_when_bytecode_may_not_be(tmp_path: Path) -> None:
    cache = tmp_path / "code.marshal"
    result = run(cache, write=False)
    assert result == {**EXPECTED, "compiled": result["compiled"]}
    assert not cache.exists()


def _installed_after(argv: list[str], **env: str) -> bool:
    """Whether ``toolrun ARGV`` (its entry point, in a fresh process) installed the cache."""
    script = (
        "import sys, dataclasses\n"
        f"sys.argv = {['toolrun', *argv]!r}\n"
        "import toolrun.__main__ as m\n"
        "try:\n    m.run()\nexcept SystemExit:\n    pass\n"
        "print('installed' if 'exec' in vars(dataclasses) else 'not installed')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env})
    return done.stdout.strip().splitlines()[-1] == "installed"


def test_the_cli_installs_it_and_the_library_does_not() -> None:
    check = (
        "import dataclasses, sys\n"
        "import toolrun.cli, toolrun.commands.exec\n"
        "print('exec' in vars(dataclasses))\n"
    )
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
    assert _installed_after(["no-such-command"])
    assert _installed_after(["check", "--help"])


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["--version"], [], ["hook", "--help"]])
def test_the_light_commands_do_not_read_it(argv: list[str]) -> None:
    # a dozen dataclasses: reading the cache would cost them more than it saves; and the
    # hook's warm path must not even import dataclasses for it
    assert not _installed_after(argv)


def test_a_tab_completion_does_not_read_it() -> None:
    assert not _installed_after([], _TOOLRUN_COMPLETE="bash_complete", COMP_WORDS="toolrun ",
                                COMP_CWORD="1")


#: Builds the tools' input validators and a plan's calls under the cache (generated code
#: too: the validators and the slots builders are kept as a dataclass's methods are).
VALIDATORS = """\
import json, sys
from toolrun.dataclass_code import install
cache = install(sys.argv[1])
from toolrun.tools.builtins import BUILTIN_CLASSES, builtin_tool
from toolrun.plan.loader import plan_from_document
from toolrun.tools import default_registry
from toolrun.yamlfile import parse_text
answers = {}
for name in BUILTIN_CLASSES:
    spec = builtin_tool(name).input_spec
    answers[name] = [repr(spec.fast(d)) for d in ({"command": "ls"}, {"pattern": "x", "-i": True},
                                                  {"file_path": "a"}, {})]
doc = parse_text('{"calls": [{"tool": "Read", "input": {"file_path": "a"}}]}', "p.json",
                 json_syntax=True)
print(json.dumps({"answers": answers, "compiled": cache.compiled,
                  "plan": repr(plan_from_document(doc, default_registry()))}))
"""


def test_the_input_validators_code_is_kept_and_gives_the_same_answers(tmp_path: Path) -> None:
    cache = tmp_path / "code.marshal"
    first = run(cache, script=VALIDATORS + "cache.save()\n")
    second = run(cache, script=VALIDATORS)
    assert first.pop("compiled") > 0
    assert second.pop("compiled") == 0  # the validators' code came from the file too
    assert first == second
    assert "BashParams(command='ls'" in str(first["answers"])
    assert "Call(index=0, turn=0, id='call-1', tool='Read'" in str(first["plan"])
