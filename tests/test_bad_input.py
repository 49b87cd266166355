"""Bad input files get one answer everywhere (issue 12): validate, check, exec and
exec --dry-run all refuse them with the same located problem and exit 3, nothing runs,
and check still checks the other inputs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

COMMANDS = (["validate"], ["check"], ["exec", "--dry-run"], ["exec"])
# Every bad plan would also create this file if any of its calls ran.
TOUCH = "{tool: Bash, input: {command: touch ran}}"
TOUCH_JSON = '{"tool": "Bash", "input": {"command": "touch ran"}}'

BAD: dict[str, tuple[str, bytes, str]] = {
    # name: (file name, content, the start of the one problem every command reports)
    "recursive alias": ("p.yaml", b"calls: &x\n  - *x\n", "p.yaml:1:8: calls[0]: an alias"),
    "alias in a mapping": (
        "p.yaml",
        f"calls:\n  - {TOUCH}\n  - &a {{tool: Bash, input: {{command: *a}}}}\n".encode(),
        "p.yaml:3:5: calls[1].input.command: an alias inside its own anchor",
    ),
    "deep JSON": ("p.json", b"[" * 1000 + b"]" * 1000, "p.json:1:101: nested more than"),
    "deep JSON inside a call": (
        "p.json",
        f'{{"calls": [{TOUCH_JSON}, {{"tool": "Bash", "input": {{"command": "ls", "x": '.encode()
        + b"[" * 150
        + b"]" * 150
        + b"}}]}",
        "p.json:1:",
    ),
    "deep block YAML": (
        "p.yaml",
        f"calls:\n  - {TOUCH}\n".encode() + "".join(" " * i + "a:\n" for i in range(600)).encode(),
        "p.yaml:",
    ),
    "tag int": (
        "p.yaml",
        f"calls:\n  - {TOUCH}\n  - tool: Bash\n    input:\n      command: !!int x\n".encode(),
        "p.yaml:5:16: cannot read 'x' as !!int",
    ),
    "tag float": ("p.yaml", b"calls: !!float abc\n", "p.yaml:1:8: cannot read 'abc' as !!float"),
    "lone surrogate": (
        "p.json",
        f'{{"calls": [{TOUCH_JSON}, {{"tool": "Bash", "input": {{"command": "echo \\ud800"}}}}]}}'.encode(),
        "p.json:1:",
    ),
    "NUL in a path": (
        "p.json",
        f'{{"calls": [{TOUCH_JSON}, {{"tool": "Read", "input": {{"file_path": "a\\u0000"}}}}]}}'.encode(),
        "p.json:1:",
    ),
    "UTF-16": ("p.yaml", "\ufeffcalls: []\n".encode("utf-16"), "p.yaml:1:1: UTF-16 text"),
    "latin-1": ("p.yaml", f"calls:\n  - {TOUCH}\n# caf\xe9\n".encode("latin-1"), "p.yaml:3:6: "),
    "65 calls in a turn": (
        "p.yaml",
        ("calls:\n" + f"  - {TOUCH}\n" * 65).encode(),
        "p.yaml:66:5: calls[64]: a turn holds at most 64 calls",
    ),
}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", list(BAD))
def test_every_command_refuses_a_bad_file_the_same_way(
    runner: CliRunner, ws: Path, name: str
) -> None:
    file, content, start = BAD[name]
    (ws / file).write_bytes(content)
    answers = set()
    for command in COMMANDS:
        result = runner.invoke(main, [*command, file])
        assert result.exit_code == 3, (command, result.output, result.exception)
        first = result.stderr.splitlines()[0]
        assert first.startswith(start), (command, first)
        assert re.match(r"^p\.(yaml|json):\d+:\d+: ", first), first
        answers.add(first)
    assert len(answers) == 1  # one answer, word for word
    assert not (ws / "ran").exists()
    assert not (ws / ".toolrun").exists()  # no run was even started


def test_the_turn_limit_follows_the_config_everywhere(runner: CliRunner, ws: Path) -> None:
    (ws / "toolrun.yaml").write_text("toolrun: {maxCallsPerTurn: 3}\n")
    (ws / "p.yaml").write_text(
        "turns:\n  - calls:\n" + "      - {tool: LS, input: {path: .}}\n" * 4
    )
    for command in COMMANDS:
        result = runner.invoke(main, [*command, "p.yaml"])
        assert result.exit_code == 3, command
        assert result.stderr.splitlines()[0] == (
            "p.yaml:6:9: turns[0].calls[3]: a turn holds at most 3 calls "
            "(toolrun.maxCallsPerTurn) and this one has 4: split it into several turns or "
            "raise the limit"
        )
    (ws / "toolrun.yaml").write_text("toolrun: {maxCallsPerTurn: 4}\n")
    for command in COMMANDS:
        assert runner.invoke(main, [*command, "p.yaml"]).exit_code == 0, command


def test_a_transcript_turn_over_the_limit_is_invalid(runner: CliRunner, ws: Path) -> None:
    blocks = [
        {"type": "tool_use", "id": f"t{i}", "name": "LS", "input": {"path": "."}} for i in range(65)
    ]
    (ws / "chat.json").write_text(json.dumps([{"role": "assistant", "content": blocks}]))
    result = runner.invoke(main, ["check", "chat.json"])
    assert result.exit_code == 3
    assert "a turn holds at most 64 calls" in result.stderr
    assert result.stderr.startswith("chat.json:1:")


def test_check_goes_on_after_bad_inputs_and_names_them(runner: CliRunner, ws: Path) -> None:
    for name, (file, content, _) in BAD.items():
        stem = re.sub(r"\W+", "-", name)
        (ws / f"{stem}{Path(file).suffix}").write_bytes(content)
    (ws / "good.yaml").write_text("calls:\n  - {tool: LS, input: {path: .}}\n")
    os.mkfifo(ws / "fifo.yaml")
    (ws / "folder.yaml").mkdir()
    result = runner.invoke(main, ["check", "--format", "json", "*.yaml", "*.json", "fifo.yaml"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    valid = {i["file"]: i["valid"] for i in report["inputs"]}
    assert valid.pop("good.yaml") is True
    assert len(valid) == len(BAD) + 1 and not any(valid.values())  # the FIFO too
    assert [r["id"] for r in report["results"]] == ["call-1"]  # good.yaml was decided
    problems = {p["text"] for p in report["problems"]}
    assert "fifo.yaml: is a FIFO, not a file" in problems


def test_check_reports_an_input_it_fails_on_and_goes_on(
    runner: CliRunner, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fault injection: whatever goes wrong inside one input stays with that input
    from toolrun.plan import importers

    real = importers.load_input

    def load_input(path: Path, *args: object, **kwargs: object) -> object:
        if path.name == "a.yaml":
            raise RuntimeError("injected")
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importers, "load_input", load_input)
    for name in ("a.yaml", "b.yaml"):
        (ws / name).write_text("calls:\n  - {tool: LS, input: {path: .}}\n")
    result = runner.invoke(main, ["check", "a.yaml", "b.yaml"])
    assert result.exit_code == 3
    assert "a.yaml: could not be checked (RuntimeError: injected)" in result.stderr
    assert "b.yaml (toolrun): 1 turn, 1 call" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--call", '{"tool": "Bash", "input": {"command": "echo \\ud800"}}'], "lone surrogate"),
        (["--call", "[" * 5000], "nested more than 100 levels"),
        (["--call", '{"tool": "Read", "input": {"file_path": "a\\u0000"}}'], "NUL character"),
        (["mcp__s__t", '{"a": "\\udc00"}'], "lone surrogate"),
    ],
)
def test_explain_permission_refuses_what_a_plan_could_not_hold(
    ws: Path, args: list[str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "explain-permission", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_explain_permission_refuses_arguments_that_are_not_utf8(ws: Path) -> None:
    (ws / "toolrun.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n"
        "      hooks: [{type: command, command: 'cat > hook-ran'}]\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "explain-permission", "--hooks", "Bash", b"echo \xff"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "not UTF-8 text" in done.stderr
    assert not (ws / "hook-ran").exists()


@pytest.mark.parametrize(
    "kind", ["directory", "fifo", "missing", "device", "symlink loop", "read error"]
)
def test_what_is_not_a_readable_file_gets_one_answer(
    runner: CliRunner, ws: Path, kind: str
) -> None:
    name = {
        "directory": "plans",
        "fifo": "plan.yaml",
        "missing": "gone.yaml",
        "device": "/dev/null",
        "symlink loop": "loop.yaml",
        "read error": "/proc/self/mem",  # a regular file whose read fails (EIO), even for root
    }[kind]
    if kind == "directory":
        (ws / name).mkdir()
    elif kind == "fifo":
        os.mkfifo(ws / name)  # no writer: reading it would block for ever
    elif kind == "symlink loop":
        (ws / name).symlink_to(name)
    answers = set()
    for command in COMMANDS:
        result = runner.invoke(main, [*command, name])
        assert result.exit_code == 3, (command, result.output)
        answers.add(result.stderr.splitlines()[0])
    assert len(answers) == 1
    assert answers.pop().startswith(f"{name}: ")
