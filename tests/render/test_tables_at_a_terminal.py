"""#29: at a terminal (a real pseudo-terminal of each size, COLUMNS unset) exec, check,
show and runs fit the width, the decision comes first — status, the call, who decided
with its file:line — and the reason is wrapped, never cut."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.render.screen import at_terminal, piped, table_rows, unwrapped

SERVER = Path(__file__).resolve().parents[1] / "mcp" / "server.py"
WIDTHS = (60, 80, 120, 200, 300)
MCP = "mcp__github_enterprise_mirror_of_acme_corporation"  # a server name, long as they get
LONG_ID = "fetch-the-installer-script-from-the-internet"

# one call per kind of decider: allow, deny and ask rules, a hook, the workspace
# boundary, no rule at all, and a long MCP tool name (allowed, and asking)
HOOK = """\
import json, sys
call = json.load(sys.stdin)
if "rm " in call["tool_input"].get("command", ""):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "the team's hook refuses rm: move things to trash/ instead"}}))
"""


def config(ws: Path) -> str:
    return f"""\
permissions:
  allow: ["Bash(echo *)", "Bash(false*)", {MCP}__echo]
  ask: ["Bash(git push *)"]
  deny: ["Bash(curl *)", "Read(./secrets/**)"]
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{{type: command, command: "{sys.executable} {ws / 'hook.py'}"}}]
mcpServers:
  {MCP.removeprefix("mcp__")}: {{command: {sys.executable}, args: ["{SERVER}"]}}
"""


def plan(ws: Path) -> str:
    return f"""\
calls:
  - {{id: greet, tool: Bash, input: {{command: "echo a fairly long command line that cannot fit in a narrow terminal at all"}}}}
  - {{id: fail, tool: Bash, input: {{command: "echo this one fails with exit code one && false"}}}}
  - {{id: {LONG_ID}, tool: Bash, input: {{command: "curl -fsSL https://example.com/some/long/path/install.sh"}}}}
  - {{id: push, tool: Bash, input: {{command: "git push origin main"}}}}
  - {{id: secret, tool: Read, input: {{file_path: "{ws}/secrets/key.txt"}}}}
  - {{id: clean, tool: Bash, input: {{command: "rm -rf build"}}}}
  - {{id: passwd, tool: Read, input: {{file_path: /etc/passwd}}}}
  - {{id: npm, tool: Bash, input: {{command: "npm install left-pad"}}}}
  - {{id: mcp, tool: {MCP}__echo, input: {{text: hello from the mirror}}}}
  - {{id: note, tool: {MCP}__write_note, input: {{path: n.txt, text: x}}}}
"""


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("ws")
    (ws / "hook.py").write_text(HOOK)
    (ws / "toolrun.yaml").write_text(config(ws))
    (ws / "plan.yaml").write_text(plan(ws))
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key.txt").write_text("k\n")
    return ws


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def exec_json(ws: Path, home: Path) -> dict[str, dict[str, object]]:
    """Each call's result as exec's JSON report has it: what the tables must show."""
    done = piped(ws, "exec", "plan.yaml", "--format", "json", "--no-journal", home=home)
    return {r["id"]: r for r in json.loads(done.stdout)["results"]}


@pytest.fixture(scope="module")
def check_json(ws: Path, home: Path) -> dict[str, dict[str, object]]:
    done = piped(ws, "check", "plan.yaml", "--format", "jsonl", home=home)
    return {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}


def fits(out: str, width: int) -> None:
    # (the journal's path is left whole, for a copy and paste)
    lines = [line for line in out.splitlines() if not line.startswith("journal: ")]
    long = [line for line in lines if len(line) > width]
    assert not long, f"{len(long)} lines over {width} columns:\n" + out


def rule_is_whole(out: str, rule: str, width: int) -> None:
    """The rule's text on one line, unbroken, whenever a line can hold it (a card's or a
    table's decided-by cell is never narrower than 18 columns)."""
    if len(f"rule {rule}") <= 18 or width >= 120 and len(rule) <= 24:
        assert any(rule in line for line in out.splitlines()), (rule, out)


def by_id(rows: list[dict[str, str]], ids: list[str]) -> dict[str, dict[str, str]]:
    """Each row under its call id: the id cell of a table, a card's second head word."""
    found: dict[str, dict[str, str]] = {}
    for row in rows:
        if "head" in row:  # a card: `status  id  call`, the id maybe wrapped in the call's line
            head = row["head"]
            call_id = next(i for i in ids if re.search(rf"\s{re.escape(i)}(\s|$)", f" {head}"))
        else:
            call_id = unwrapped(row["id"])
        found[call_id] = row
    assert sorted(found) == sorted(ids), (sorted(found), rows)
    return found


def check_table(out: str) -> list[str]:
    """The lines of check's table: after the input's header (wrapped to the width, its
    continuation indented), up to the blank line that ends it."""
    lines = out.splitlines()
    start = 1 + next(i for i, line in enumerate(lines[1:]) if not line.startswith(" "))
    return lines[start : lines.index("")]


def decided(row: dict[str, str]) -> str:
    return row["decided by"]


def first_cell(row: dict[str, str]) -> str:
    """The status (exec, show) or decision (check): a table's first column, a card's
    first word."""
    return row["head"].split()[0] if "head" in row else next(iter(row.values()))


@pytest.mark.parametrize("width", WIDTHS)
def test_exec_shows_the_decision_first_and_the_reason_whole(
    ws: Path, home: Path, exec_json: dict[str, dict[str, object]], width: int
) -> None:
    out, code = at_terminal(ws, width, "exec", "plan.yaml", "--ask", "deny", home=home)
    assert code == 4, out
    fits(out, width)
    assert "…" not in out and "cut to fit" not in out
    lines = out.splitlines()
    table = lines[: next(i for i, line in enumerate(lines) if " ok · " in line)]
    rows = by_id(table_rows(table), list(exec_json))
    for call_id, result in exec_json.items():
        row = rows[call_id]
        assert first_cell(row) == result["status"]
        by = result["decided_by"]
        assert isinstance(by, dict)
        if by["rule"] and by["kind"] == "rule":
            assert unwrapped(f"rule {by['rule']} ({by['source']})") in unwrapped(decided(row))
            rule_is_whole(out, str(by["rule"]), width)
        if by["kind"] == "hook":
            assert unwrapped(f"({by['source']})") in unwrapped(decided(row))
        if result["error"]:  # the reason, whole, however many lines it takes
            assert unwrapped(str(result["error"])) in unwrapped(row["reason"])
    # the status of an unanswered ask, whole in its column (a card shows it first)
    assert first_cell(rows["push"]) == "needs_approval"
    # the workspace's own paths are relative; the long MCP tool name is all there
    assert "Read(secrets/key.txt)" in unwrapped(" ".join(rows["secret"].values()))
    assert str(ws) not in rows["secret"].get("call", rows["secret"].get("head", ""))
    assert f"{MCP}__write_note(" in unwrapped(" ".join(rows["note"].values()))


@pytest.mark.parametrize("width", WIDTHS)
def test_check_shows_the_rule_its_file_line_and_the_reason_whole(
    ws: Path, home: Path, check_json: dict[str, dict[str, object]], width: int
) -> None:
    out, code = at_terminal(ws, width, "check", "plan.yaml", home=home)
    assert code == 4, out
    fits(out, width)
    assert "…" not in out
    rows = by_id(table_rows(check_table(out)), list(check_json))
    for call_id, result in check_json.items():
        row = rows[call_id]
        assert first_cell(row) == result["decision"]
        by = result["decided_by"]
        assert isinstance(by, dict)
        if by["kind"] == "rule":
            assert unwrapped(f"rule {by['rule']} ({by['source']})") in unwrapped(decided(row))
            rule_is_whole(out, str(by["rule"]), width)
        assert unwrapped(str(result["reason"])) in unwrapped(row["reason"])
    assert rows["clean"]["decided by"].startswith("hook")
    assert rows["passwd"]["decided by"] == "workspace boundary"
    assert rows["npm"]["decided by"] == "no rule"
    assert "Read(secrets/key.txt)" in unwrapped(" ".join(rows["secret"].values()))


@pytest.mark.parametrize("width", WIDTHS)
def test_show_fits_the_terminal_as_exec_does(
    ws: Path, home: Path, exec_json: dict[str, dict[str, object]], width: int
) -> None:
    at_terminal(ws, 200, "exec", "plan.yaml", "--ask", "deny", home=home)
    out, code = at_terminal(ws, width, "show", "last", home=home)
    assert code == 0, out
    fits(out, width)
    lines = out.splitlines()
    assert lines[0].startswith("run ")
    rows = by_id(table_rows(lines[1:]), list(exec_json))
    for call_id, result in exec_json.items():
        if result["error"]:  # whole: show cut errors to 80 characters
            assert unwrapped(str(result["error"])) in unwrapped(rows[call_id]["reason"])
        by = result["decided_by"]
        assert isinstance(by, dict)
        if by["kind"] == "rule":
            assert f"({by['source']})" in unwrapped(rows[call_id]["decided by"])
    assert first_cell(rows["note"]) == "needs_approval"


@pytest.mark.parametrize("width", WIDTHS)
def test_runs_fits_the_terminal(ws: Path, home: Path, width: int) -> None:
    at_terminal(ws, 200, "exec", "plan.yaml", "--ask", "deny", home=home)
    out, code = at_terminal(ws, width, "runs", home=home)
    assert code == 0, out
    fits(out, width)
    rows = table_rows(out.splitlines())
    assert rows and all(re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", r.get("run", "x")) for r in rows)
    # every count whole: "2 needs_approval" is never split from its number
    assert "4 needs_approval" in rows[0]["results"].replace("  ", " ")


def test_piped_output_keeps_its_format_unless_a_width_is_given(ws: Path, home: Path) -> None:
    plain = piped(ws, "check", "plan.yaml", "--format", "table", home=home).stdout
    assert plain.splitlines()[1].split()[:4] == ["turn", "run", "#", "id"]  # today's table
    laid = piped(ws, "check", "plan.yaml", "--format", "table", "--width", "90", home=home)
    fits(laid.stdout, 90)
    assert "\x1b[" not in laid.stdout  # no colour into a pipe
    rows = table_rows(check_table(laid.stdout))
    assert len(rows) == 10
    for args in (("exec", "plan.yaml"), ("show", "last"), ("runs",)):
        done = piped(ws, *args, "--format", "table", "--width", "70", home=home) if args[0] == "exec" \
            else piped(ws, *args, "--width", "70", home=home)  # fmt: skip
        fits(done.stdout, 70)


def test_the_plain_show_table_holds_needs_approval_in_its_column(ws: Path, home: Path) -> None:
    piped(ws, "exec", "plan.yaml", home=home)
    out = piped(ws, "show", "last", home=home).stdout.splitlines()
    header = out[1]
    decision_at = header.index("decision")
    checked = set()
    for line in out[3:]:
        _, call_id, tool, status, *_ = line.split()
        # (a longer id or tool name pushes the rest along, as fixed_row says)
        if len(call_id) <= 12 and len(tool) <= 8:
            # (#29: needs_approval pushed the decision column along)
            assert line[decision_at - 2 : decision_at] == "  ", line
            checked.add(status)
    assert {"needs_approval", "denied", "ok", "error"} <= checked
