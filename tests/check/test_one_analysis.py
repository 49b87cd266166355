"""One analysis per command (#28): a check parses each distinct Bash command once. The
decision is made on that analysis, and the grouping of calls into runs and the marks of
earlier writes read it from the decision; no cache stands in for that (the caches are
turned off here, so a second analysis anywhere would be counted)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.check.helpers import write
from toolrun.commands.check import CheckRequest, check
from toolrun.permissions import bash, readonly


class _Forgets(dict[Any, Any]):
    """A memo that never remembers."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every whole-command analysis (the tree-sitter parse or its plain-words reading),
    counted by command, with the parse memo and the verdict memo turned off."""
    seen: Counter[str] = Counter()
    real = bash._analyse

    def counting(command: str, depth: int) -> Any:
        if depth == 0:
            seen[command] += 1
        return real(command, depth)

    def uncached(command: str) -> Any:
        return bash._analyse(command, 0)

    monkeypatch.setattr(bash, "_analyse", counting)
    monkeypatch.setattr(bash, "analyse", uncached)
    monkeypatch.setattr(readonly, "analyse", uncached)
    monkeypatch.setattr(readonly, "_verdicts", _Forgets())
    return seen


def _plan(ws: Path, calls: list[dict[str, Any]], name: str = "plan.json") -> Path:
    turns = [{"calls": calls[i : i + 5]} for i in range(0, len(calls), 5)]
    return write(ws / name, json.dumps({"turns": turns}))


def _bash(command: str) -> dict[str, Any]:
    return {"tool": "Bash", "input": {"command": command}}


COMMANDS = [
    "git log -n 3 --oneline && ls src | head -2",  # compound, read-only
    "ls src/d1 | head -4",
    "cd src && cat a.py",  # a cd: ends its run, its directory is an anchor of its reads
    "echo hi > out.txt",  # writes a file: exclusive, its write marks later reads
    "cat out.txt",  # reads what the call before wrote: marked
    "rm -rf build",  # not read-only
    "grep -rn TODO src | wc -l",
    "for f in a b; do echo $f; done",  # through the tree-sitter parse
    "cat ../outside.txt",  # outside the workspace: asks
    "git status",
]


def test_each_distinct_command_is_parsed_once_per_check(ws: Path, parses: Counter[str]) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x\n")
    calls = [_bash(c) for c in COMMANDS] * 3  # repeated: decided once, from the memo
    calls += [{"tool": "Read", "input": {"file_path": "src/a.py"}}]
    _plan(ws, calls)
    report = check(CheckRequest(inputs=["plan.json"], workspace=ws, jobs=1))
    assert report.counts()["calls"] == len(calls)
    assert dict(parses) == dict.fromkeys(COMMANDS, 1)
    (plan,) = report.plans
    by_command = {c.input["command"]: c for c in plan.calls if c.tool == "Bash"}
    assert "depends on" in by_command["cat out.txt"].reason  # the marks saw the write


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_runs_are_the_ones_the_read_only_set_makes(
    ws: Path, parses: Counter[str], jobs: int
) -> None:
    (ws / "src").mkdir()
    commands = [
        "ls src && git log -n 2 --oneline",  # read-only: concurrent
        "head -3 src/a.py | wc -l",  # read-only: concurrent with it
        "ls > listing.txt",  # writes: alone
        "cat src/a.py",
        "cd src",  # read-only, but moves the directory: ends its run
        "ls",
        "touch src/new.py",  # alone
    ]
    _plan(ws, [_bash(c) for c in commands] * 2, name="runs.json")
    report = check(CheckRequest(inputs=["runs.json"], workspace=ws, jobs=jobs))
    (plan,) = report.plans
    kinds = [(c.input["command"], c.run_kind) for c in plan.calls][: len(commands)]
    assert kinds == [
        ("ls src && git log -n 2 --oneline", "concurrent"),
        ("head -3 src/a.py | wc -l", "concurrent"),
        ("ls > listing.txt", "exclusive"),
        ("cat src/a.py", "concurrent"),
        ("cd src", "concurrent"),
        ("ls", "concurrent"),
        ("touch src/new.py", "exclusive"),
    ]
    # the cd ends its run: `ls` after it starts a new one
    runs = {c.input["command"]: c.run for c in plan.calls[: len(commands)]}
    assert runs["cat src/a.py"] == runs["cd src"] != runs["ls"]
    assert max(parses.values()) == 1  # each part process parses its own commands once


def test_a_wider_boundary_still_groups_by_the_workspace_alone(
    ws: Path, tmp_path_factory: pytest.TempPathFactory, parses: Counter[str]
) -> None:
    # The grouping's read-only set is the workspace's (as exec's is); the decision's
    # boundary holds additionalDirectories too, so its verdict answers another question
    # and the grouping works its own out: the runs are what they were.
    other = tmp_path_factory.mktemp("other")
    (other / "notes.txt").write_text("x\n")
    write(ws / "toolrun.yaml", json.dumps({"permissions": {"additionalDirectories": [str(other)]}}))
    command = f"cat {other}/notes.txt"
    _plan(ws, [_bash("ls"), _bash(command), _bash("ls -a")])
    report = check(CheckRequest(inputs=["plan.json"], workspace=ws, jobs=1))
    (plan,) = report.plans
    kinds = {c.input["command"]: (c.decision, c.run_kind) for c in plan.calls}
    assert kinds == {
        "ls": ("allow", "concurrent"),
        command: ("allow", "exclusive"),  # outside the workspace: not for the grouping
        "ls -a": ("allow", "concurrent"),
    }
