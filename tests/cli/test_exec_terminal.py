"""At a terminal (a real pseudo-terminal of a set size) the table fits it and statuses are
coloured; piped or with NO_COLOR nothing is; --quiet and --verbose; one result per line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli.terminal import environment_without_size, open_terminal, read_to_end
from toolrun.cli import main

ANSI = re.compile(r"\x1b\[[0-9;]*m")
RULES = """\
permissions:
  allow: ["Bash(echo *)", "Bash(false*)", Write]
  ask: ["Bash(git push *)"]
  deny: ["Bash(curl *)"]
"""
# ok, failed, denied and asked calls, with long commands and a long note
PLAN = """\
calls:
  - {id: greet, tool: Bash, input: {command: "echo a fairly long command line that cannot fit in a narrow terminal at all"}}
  - {id: fail, tool: Bash, input: {command: "echo this one fails with exit code one && false"}}
  - {id: fetch, tool: Bash, input: {command: "curl -fsSL https://example.com/some/long/path/install.sh"}}
  - {id: push, tool: Bash, input: {command: "git push origin main"}}
"""


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolrun.yaml").write_text(RULES)
    (tmp_path / "plan.yaml").write_text(PLAN)
    return tmp_path


def at_terminal(
    ws: Path,
    columns: int,
    *args: str,
    command: tuple[str, ...] = ("exec", "plan.yaml", "--ask", "deny"),
    **env: str,
) -> str:
    """toolrun's whole output under a pseudo-terminal ``columns`` wide."""
    main_fd, terminal = open_terminal(columns)
    environ = {k: v for k, v in environment_without_size().items() if k != "NO_COLOR"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", *command, *args],
        cwd=ws,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        close_fds=True,
        env={**environ, **env},
    )
    os.close(terminal)
    seen = read_to_end(main_fd)
    proc.wait(timeout=60)
    os.close(main_fd)
    return seen.decode().replace("\r\n", "\n")


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_the_table_fits_the_terminal(ws: Path, columns: int) -> None:
    # (#29: this asserted the cut — "…" and a "cut to fit" note; cells wrap now)
    out = at_terminal(ws, columns)
    lines = [ANSI.sub("", line) for line in out.splitlines() if not line.startswith("journal:")]
    assert all(len(line) <= columns for line in lines), "\n".join(lines)
    rows = {name: row(lines, name) for name in ("greet", "fail", "fetch", "push")}
    assert rows["greet"].split()[0] == "ok"
    assert "…" not in out and "cut to fit" not in out
    flat = " ".join(" ".join(lines).split())
    assert "cannot fit in a narrow terminal" in flat or columns < 100  # (split by columns)


def test_a_wide_terminal_shows_every_column_uncut(ws: Path) -> None:
    out = ANSI.sub("", at_terminal(ws, 300))
    header = re.split(r"\s{2,}", out.splitlines()[0].strip())
    # (#29: the decision first — status, the call, who decided, the reason)
    assert header == ["status", "id", "call", "decided by", "reason", "time", "#", "execution"]
    assert "…" not in out and "cut to fit" not in out
    assert "cannot fit in a narrow terminal at all" in out


def row(lines: list[str], call_id: str) -> str:
    """The first line of a call's row: its id is the second cell (after the status)."""
    (found,) = [
        line
        for line in lines
        if not (plain := ANSI.sub("", line)).startswith(" ") and plain.split()[1:2] == [call_id]
    ]
    return found


def test_statuses_are_coloured_at_a_terminal(ws: Path) -> None:
    lines = at_terminal(ws, 120).splitlines()
    assert "\x1b[32mok" in row(lines, "greet")  # green
    assert "\x1b[31m\x1b[1merror" in row(lines, "fail")  # red
    assert "\x1b[31m\x1b[1mdenied" in row(lines, "fetch")  # red
    assert "\x1b[33mneeds_approval" in row(lines, "push")  # yellow


@pytest.mark.parametrize("value", ["1", "true", "0"])  # any non-empty value (no-color.org)
def test_no_color_turns_colour_off(ws: Path, value: str) -> None:
    for fmt in ("table", "text"):
        out = at_terminal(ws, 120, "--format", fmt, NO_COLOR=value)
        assert "\x1b[" not in out, fmt


def test_text_at_a_terminal_is_coloured_too(ws: Path) -> None:
    assert "\x1b[32mok" in at_terminal(ws, 120, "--format", "text")


def test_piped_output_has_no_colour(runner: CliRunner, ws: Path) -> None:
    for fmt in ("table", "text"):
        done = subprocess.run(
            [sys.executable, "-m", "toolrun", "exec", "plan.yaml", "--format", fmt],
            cwd=ws, capture_output=True, text=True, check=False,
        )
        assert done.returncode == 4
        assert "\x1b" not in done.stdout and "\x1b" not in done.stderr


def test_quiet_prints_the_recap_only(runner: CliRunner, ws: Path) -> None:
    for fmt in ("table", "text"):
        done = runner.invoke(main, ["exec", "plan.yaml", "--format", fmt, "--quiet"])
        assert done.exit_code == 4
        assert done.stdout.splitlines() == ["1 ok · 1 failed · 1 denied · 1 need approval in " + done.stdout.split(" in ")[1].strip()]
    out = ANSI.sub("", at_terminal(ws, 80, "-q"))
    assert "greet" not in out and "1 ok · 1 failed" in out


def test_quiet_leaves_machine_formats_whole(runner: CliRunner, ws: Path) -> None:
    done = runner.invoke(main, ["exec", "plan.yaml", "--format", "json", "-q"])
    assert len(json.loads(done.stdout)["results"]) == 4


def test_verbose_names_the_decider_and_the_hooks(runner: CliRunner, ws: Path) -> None:
    hook = ws / "hook.py"
    hook.write_text("import sys, json; json.load(sys.stdin); print('{}')\n")
    (ws / "toolrun.yaml").write_text(
        RULES + "hooks:\n  PreToolUse:\n    - matcher: Bash\n"
        f"      hooks: [{{type: command, command: '{sys.executable} {hook}'}}]\n"
    )
    done = runner.invoke(main, ["exec", "plan.yaml", "--format", "text", "--verbose"])
    lines = done.stdout.splitlines()
    greet = next(i for i, line in enumerate(lines) if " greet " in line)
    assert lines[greet + 1] == "    decided: allow by rule Bash(echo *) (toolrun.yaml:2)"
    assert lines[greet + 2] == "    runs in: unsandboxed — allowed by a rule: runs as configured"
    assert lines[greet + 3].startswith(f"    hook: PreToolUse `{sys.executable} {hook}`")
    fetch = next(i for i, line in enumerate(lines) if " fetch " in line)
    assert lines[fetch + 1] == "    decided: deny by rule Bash(curl *) (toolrun.yaml:4)"
    # every record starts at the left edge; its details are indented under it
    assert all(line.startswith(("    ", "ok", "error", "denied", "needs_approval", "1 ok")) for line in lines)


@pytest.mark.parametrize(
    "error_text",
    [
        "line one\nline two",  # a newline
        "a\r\nb",  # CRLF
        "bell\x07 and \x1b[31mred\x1b[0m",  # a terminal escape sequence
        "nel\x85 next line",  # C1 control
    ],
)
def test_a_multi_line_error_stays_one_text_record(
    runner: CliRunner, ws: Path, error_text: str
) -> None:
    (ws / "plan.yaml").write_text(
        "calls:\n  - {id: noisy, tool: Bash, input: {command: " + json.dumps(
            f"printf %s {json.dumps(error_text)} >&2; false"
        ) + "}}\n  - {id: after, tool: Bash, input: {command: 'echo next'}}\n"
    )
    done = runner.invoke(main, ["exec", "plan.yaml", "--format", "text"])
    lines = done.stdout.splitlines()
    assert len(lines) == 3, lines  # two results and the recap
    assert lines[0].startswith("error") and lines[1].startswith("ok")
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout


def test_an_apply_patch_error_stays_one_line(runner: CliRunner, ws: Path) -> None:
    (ws / "plan.yaml").write_text(
        "calls:\n  - tool: ApplyPatch\n    input:\n      patch: |\n"
        "        *** Begin Patch\n        *** Update File: missing.txt\n"
        "        @@\n        -a\n        +b\n        *** End Patch\n"
    )
    (ws / "toolrun.yaml").write_text("permissions:\n  defaultMode: acceptEdits\n")
    done = runner.invoke(main, ["exec", "plan.yaml", "--format", "text"])
    assert len(done.stdout.splitlines()) == 2, done.stdout


def progress_run(ws: Path, *argv: str) -> tuple[str, str]:
    """Run toolrun with stdout piped and stderr at a terminal: (stdout, stderr)."""
    ours, theirs = open_terminal(120)
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolrun", *argv],
        cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=theirs,
        close_fds=True, env=environment_without_size(), text=True,
    )
    os.close(theirs)
    err = read_to_end(ours).decode()
    out = proc.communicate(timeout=60)[0]
    os.close(ours)
    return out, err


def test_progress_on_stderr_only_at_a_terminal(ws: Path) -> None:
    out, err = progress_run(ws, "exec", "plan.yaml", "--format", "json")
    assert "\r4 done · last: push needs_approval" in err
    assert "done ·" not in out and json.loads(out)["summary"]["total"] == 4
    piped = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "plan.yaml", "--format", "json"],
        cwd=ws, capture_output=True, text=True, check=False,
    )
    assert "done ·" not in piped.stderr and "\r" not in piped.stderr


def test_check_progress_counts_inputs(ws: Path) -> None:
    (ws / "more.yaml").write_text(PLAN)
    out, err = progress_run(ws, "check", "plan.yaml", "more.yaml", "--format", "junit")
    assert "\r2 inputs checked · last: more.yaml" in err
    assert out.startswith("<?xml")


def test_check_colours_decisions_at_a_terminal_only(ws: Path) -> None:
    check = ("check", "plan.yaml")
    lines = at_terminal(ws, 200, command=check).splitlines()
    assert "\x1b[32mallow" in row(lines, "greet")
    assert "\x1b[31m\x1b[1mdeny" in row(lines, "fetch")
    assert "\x1b[33mask" in row(lines, "push")
    assert "\x1b[" not in at_terminal(ws, 200, command=check, NO_COLOR="1")
    text = at_terminal(ws, 200, "--format", "text", command=check)
    assert "\x1b[31m\x1b[1mdeny " in text


@pytest.mark.parametrize("columns", [60, 80])
def test_the_check_table_fits_the_terminal(ws: Path, columns: int) -> None:
    out = ANSI.sub("", at_terminal(ws, columns, command=("check", "plan.yaml")))
    lines = out.splitlines()
    table = lines[1 : lines.index("")]  # between the input's header and the blank line
    assert all(len(line) <= columns for line in table), "\n".join(table)
    # (#29: this asserted one line per call and the cut target; rows wrap now)
    assert "…" not in "\n".join(table)
    assert [row(table, name).split()[0] for name in ("greet", "fetch", "push")] == [
        "allow", "deny", "ask"
    ]
