"""The approval prompt at a real pseudo-terminal, and approvals without one.

"always" adds exactly the suggested (narrowest) rule for the rest of the run; every later
call is still decided by the rules, protected and critical paths and the workspace
boundary. Ctrl-D at the prompt is "no". ``--ask allow`` never approves a protected or
critical path.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

QUESTION = b"Allow? y = yes, n = no"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    monkeypatch.chdir(workspace)
    return workspace


class Terminal:
    """toolrun exec under a pseudo-terminal: read what it shows, type answers."""

    def __init__(self, ws: Path, *args: str) -> None:
        import pty

        self.main_fd, child = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolrun", "exec", *args],
            cwd=ws,
            stdin=child,
            stdout=child,
            stderr=child,
        )
        os.close(child)
        self.seen = b""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def until(self, marker: bytes) -> None:
        deadline = time.monotonic() + 30
        while marker not in self.seen and time.monotonic() < deadline:
            ready, _, _ = select.select([self.main_fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(self.main_fd, 4096)
            except OSError:  # EIO: the child side is closed
                break
            if not chunk:
                break
            self.seen += chunk
        assert marker in self.seen, self.seen.decode(errors="replace")

    def answer(self, text: bytes) -> None:
        self.until(QUESTION)
        self.seen = self.seen[self.seen.index(QUESTION) + len(QUESTION) :]
        os.write(self.main_fd, text)

    def finish(self) -> int:
        """Read to the end (EIO once the child side closes) and the exit code."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.main_fd], [], [], 0.5)
            if not ready:
                if self.proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(self.main_fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk
        code = self.proc.wait(timeout=5)
        os.close(self.main_fd)
        return code

    def prompts(self) -> int:
        return self.seen.count(QUESTION)


@pytest.fixture
def terminal(ws: Path) -> Iterator[Callable[..., Terminal]]:
    started: list[Terminal] = []

    def start(*args: str) -> Terminal:
        started.append(Terminal(ws, *args))
        return started[-1]

    yield start
    for term in started:
        term.close()


def journal_results(ws: Path) -> list[dict[str, object]]:
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    return [r for r in records if r.get("event") == "result"]


def plan(ws: Path, *commands: str) -> None:
    calls = "".join(f"  - {{tool: Bash, input: {{command: {json.dumps(c)}}}}}\n" for c in commands)
    (ws / "plan.yaml").write_text("calls:\n" + calls)


@pytest.fixture
def victim(ws: Path) -> Iterator[Path]:
    """A directory outside the workspace that ``rm -rf ../x`` would delete."""
    target = ws.parent / "x"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    yield target


def test_always_adds_only_the_suggested_rule_and_later_calls_are_still_decided(
    ws: Path, victim: Path, terminal: Callable[..., Terminal]
) -> None:
    (ws / "toolrun.yaml").write_text('permissions:\n  ask: ["Bash(git push *)"]\n')
    plan(
        ws,
        "touch src/a",
        "touch src/a",  # the same call: approved by the rule "always" added
        "rm -rf ../x",  # outside the workspace: asks again
        "touch src/a && rm -rf ../x",  # the approved part does not carry the rest
        "touch src/a; rm -rf ../x",
        "touch src/b",  # not the same command: asks again
        "git push origin main",  # an ask rule: asks again
    )
    term = terminal("plan.yaml", "--format", "jsonl")
    term.until(b'"always" adds the allow rule Bash(touch src/a) for the rest of this run')
    term.answer(b"a\n")
    for _ in range(5):
        term.answer(b"n\n")
    code = term.finish()
    assert term.prompts() == 0  # exactly six prompts were answered, no seventh
    assert code == 4
    assert victim.joinpath("keep.txt").read_text() == "keep"
    assert (ws / "src" / "a").exists() and not (ws / "src" / "b").exists()
    results = journal_results(ws)
    assert [r["status"] for r in results] == ["ok", "ok"] + ["denied"] * 5
    first, second = results[0], results[1]
    assert first["decided_by"] == {"kind": "user", "rule": "always", "source": None}
    assert second["decided_by"] == {
        "kind": "rule",
        "rule": "Bash(touch src/a)",
        "source": "this run ('always' at the prompt)",
    }
    assert all(
        r["decided_by"] == {"kind": "user", "rule": "no", "source": None} for r in results[2:]
    )


def test_always_on_an_ask_ruled_command_does_not_approve_it_again(
    ws: Path, terminal: Callable[..., Terminal]
) -> None:
    (ws / "toolrun.yaml").write_text('permissions:\n  ask: ["Bash(git push *)"]\n')
    plan(ws, "git push origin main", "git push origin main")
    term = terminal("plan.yaml", "--format", "jsonl", "--no-journal")
    term.until(b'"always" is not offered: no allow rule can approve it')
    term.answer(b"y\n")
    term.answer(b"n\n")  # asked again: an ask rule always asks
    assert term.finish() == 4


def test_ctrl_d_at_the_prompt_means_no(ws: Path, terminal: Callable[..., Terminal]) -> None:
    (ws / "plan.yaml").write_text(
        "calls:\n  - {tool: Write, input: {file_path: a.txt, content: a}}\n"
        "  - {tool: Write, input: {file_path: b.txt, content: b}}\n"
    )
    term = terminal("plan.yaml", "--format", "jsonl")
    term.answer(b"\x04")  # Ctrl-D: end of input on the terminal
    term.until(b"n (end of input)")
    term.answer(b"\x04")
    code = term.finish()
    assert code == 4
    assert b"Traceback" not in term.seen and b"ExceptionGroup" not in term.seen
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()
    results = journal_results(ws)
    assert [(r["status"], r["decided_by"]) for r in results] == [
        ("denied", {"kind": "user", "rule": "no", "source": None})
    ] * 2


@pytest.mark.parametrize(
    ("config", "command"),
    [
        ("", "rm -rf ."),
        ("", "rm -rf ~"),
        ("", "echo x > .git/config"),
        ('permissions:\n  ask: ["Bash(rm *)"]\n', "rm -rf ."),  # ask rule + critical path
        ("permissions:\n  allow: [Bash]\n", "true && rm -r ./"),
        ("permissions:\n  defaultMode: bypassPermissions\n", "rm -rf $PWD"),
    ],
)
def test_ask_allow_never_approves_a_critical_or_protected_path(
    runner: CliRunner, ws: Path, config: str, command: str
) -> None:
    (ws / ".git").mkdir()
    (ws / "keep.txt").write_text("keep")
    if config:
        (ws / "toolrun.yaml").write_text(config)
    plan(ws, command)
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl", "--ask", "allow"])
    (r,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (r["status"], r["decision"], result.exit_code) == ("needs_approval", "ask", 5)
    assert "--ask allow never approves a protected or critical path" in r["error"]
    assert "use --ask allow" not in r["error"]
    assert (ws / "keep.txt").exists() and (ws / ".git").is_dir()
    assert not (ws / ".git" / "config").exists()


def test_ask_allow_still_approves_an_ordinary_ask(runner: CliRunner, ws: Path) -> None:
    plan(ws, "touch src/a")
    result = runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl", "--ask", "allow"])
    (r,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (r["status"], r["decided_by"]["kind"], result.exit_code) == ("ok", "flag", 0)


def test_an_unanswered_ask_has_its_own_status_everywhere(runner: CliRunner, ws: Path) -> None:
    plan(ws, "touch src/a")
    text = runner.invoke(main, ["exec", "plan.yaml", "--format", "text"])
    assert text.exit_code == 5
    line = text.stdout.splitlines()[0]
    assert line.startswith("needs_approval call-1")
    assert "approval needed: needs approval" not in text.stdout
    assert "needs approval: " not in line  # the status says it once
    assert "1 need approval in " in text.stdout  # the recap counts it
    report = json.loads(runner.invoke(main, ["exec", "plan.yaml", "--format", "json"]).stdout)
    assert report["summary"]["needs_approval"] == 1 and report["summary"]["denied"] == 0
    table = runner.invoke(main, ["exec", "plan.yaml", "--format", "table"])
    assert "needs_approval" in table.stdout and table.exit_code == 5


def test_always_on_a_file_write_covers_that_file_only(
    ws: Path, terminal: Callable[..., Terminal]
) -> None:
    (ws / "plan.yaml").write_text(
        "calls:\n"
        "  - {tool: Write, input: {file_path: src/a.txt, content: one}}\n"
        "  - {tool: Edit, input: {file_path: src/a.txt, old_string: one, new_string: two}}\n"
        "  - {tool: Write, input: {file_path: src/b.txt, content: b}}\n"
        "  - {tool: Write, input: {file_path: src/../.git/config, content: x}}\n"
    )
    (ws / ".git").mkdir()
    term = terminal("plan.yaml", "--format", "jsonl")
    term.until(b'"always" adds the allow rule Edit(./src/a.txt) for the rest of this run')
    term.answer(b"a\n")
    term.answer(b"n\n")  # src/b.txt: another file asks again
    term.until(b'"always" is not offered')  # .git/config: a protected path
    term.answer(b"n\n")
    assert term.finish() == 4
    assert (ws / "src" / "a.txt").read_text() == "two"
    assert not (ws / "src" / "b.txt").exists() and not (ws / ".git" / "config").exists()
    edit = journal_results(ws)[1]
    assert edit["decided_by"] == {
        "kind": "rule",
        "rule": "Edit(./src/a.txt)",
        "source": "this run ('always' at the prompt)",
    }
