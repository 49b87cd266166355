from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: CliRunner) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.yaml").write_text(
        "calls:\n  - {id: hello, tool: Bash, input: {command: 'echo hello; echo 1; echo 2; echo 3'}}\n"
        "  - {tool: Write, input: {file_path: x, content: y}}\n"
    )
    assert runner.invoke(main, ["exec", "plan.yaml", "--format", "jsonl"]).exit_code == 5
    return tmp_path


def test_runs_lists_journalled_runs(runner: CliRunner, ws: Path) -> None:
    result = runner.invoke(main, ["runs"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["run", "started", "plans", "results", "note"]
    assert "plan.yaml" in lines[2] and "1 needs_approval 1 ok" in lines[2]
    (row,) = json.loads(runner.invoke(main, ["runs", "--format", "json"]).stdout)
    assert row["summary"] == {"ok": 1, "needs_approval": 1}
    assert row["finished"] is True and row["interrupted"] is False


def test_show_a_run_and_one_calls_full_output(runner: CliRunner, ws: Path) -> None:
    (journal,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    run_id = journal.stem
    table = runner.invoke(main, ["show", run_id[:10]])
    assert table.exit_code == 0
    assert table.stdout.startswith(f"run {run_id}: plan.yaml\n")
    call = runner.invoke(main, ["show", "last", "hello"])
    assert call.exit_code == 0
    assert call.stdout.splitlines()[0] == "hello  Bash  ok"
    assert call.stdout.endswith("\nhello\n1\n2\n3\n")
    denied = runner.invoke(main, ["show", "last", "2"])
    assert "decision:  ask by" in denied.stdout


def test_show_errors(runner: CliRunner, ws: Path) -> None:
    assert runner.invoke(main, ["show", "nope"]).exit_code == 2
    missing = runner.invoke(main, ["show", "last", "nope"])
    assert missing.exit_code == 2
    assert "has no call 'nope'" in missing.stderr


def test_no_runs_yet(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["runs", "--workspace", str(tmp_path)])
    assert result.stdout == "no runs recorded yet\n"
    shown = runner.invoke(main, ["show", "last", "--workspace", str(tmp_path)])
    assert shown.exit_code == 2 and "no runs recorded" in shown.stderr


def journal_of(ws: Path) -> Path:
    (path,) = (ws / ".toolrun" / "runs").glob("*.jsonl")
    return path


@pytest.mark.parametrize(
    "bad",
    [
        b"\xff\xfe not utf-8\n",
        b"[1, 2, 3]\n",
        b'{"event": "result", "index": "x", "id": "a", "status": "ok"}\n',
        b'{"event": "result", "index": true, "id": "a", "status": "ok"}\n',
        b'{"event": "started", "index": 0, "id": "a", "execution_id": 7}\n',
        b'{"event": "end", "wall_ms": "soon"}\n',
        b'"just a string"\n',
        b"{not json\n",
    ],
)
def test_bad_lines_are_skipped_and_counted(runner: CliRunner, ws: Path, bad: bytes) -> None:
    path = journal_of(ws)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([lines[0], bad, *lines[1:], bad]))
    listed = runner.invoke(main, ["runs", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.stdout)
    assert row["bad_lines"] == 2 and row["summary"] == {"ok": 1, "needs_approval": 1}
    assert "2 bad lines skipped" in runner.invoke(main, ["runs"]).stdout
    shown = runner.invoke(main, ["show", "last"])
    assert shown.exit_code == 0, shown.output
    assert "2 lines of the journal are not records; skipped" in shown.stdout
    assert runner.invoke(main, ["show", "last", "hello"]).exit_code == 0


def test_a_torn_last_line_is_reported(runner: CliRunner, ws: Path) -> None:
    path = journal_of(ws)
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b'"wall_ms"')])  # cut inside the end record
    (row,) = json.loads(runner.invoke(main, ["runs", "--format", "json"]).stdout)
    assert row["torn"] is True and row["finished"] is False
    assert "torn last line" in runner.invoke(main, ["runs"]).stdout
    assert "last line is torn" in runner.invoke(main, ["show", "last"]).stdout
    # a line that parses but lost its newline is cut off all the same
    path.write_bytes(data.rstrip(b"\n"))
    (row,) = json.loads(runner.invoke(main, ["runs", "--format", "json"]).stdout)
    assert row["torn"] is True


def test_one_bad_file_never_hides_the_other_runs(runner: CliRunner, ws: Path) -> None:
    folder = ws / ".toolrun" / "runs"
    (folder / "garbage.jsonl").write_bytes(b"\x00\x01\x02" * 1000)
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "folder.jsonl").mkdir()  # cannot be read as a file at all
    listed = runner.invoke(main, ["runs", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    rows = {r["run_id"]: r for r in json.loads(listed.stdout)}
    assert len(rows) == 4
    assert rows["garbage"]["torn"] or rows["garbage"]["bad_lines"]
    assert rows["folder"]["unreadable"]
    good = [r for r in rows.values() if r["plans"] == ["plan.yaml"]]
    assert good[0]["summary"] == {"ok": 1, "needs_approval": 1}
    assert runner.invoke(main, ["runs"]).exit_code == 0


def test_runs_are_sorted_by_start_time_not_by_name(runner: CliRunner, ws: Path) -> None:
    """Two runs in the same second: the ids' random part must not decide which is last."""
    first = journal_of(ws)
    records = [json.loads(line) for line in first.read_text().splitlines()]
    folder = first.parent
    second_of = first.stem[: len("20261129T190312Z")]
    for suffix, started, label in (("000000", 2.0, "newer"), ("ffffff", 1.0, "older")):
        run = {**records[0], "run_id": f"{second_of}-{suffix}", "started_at": started}
        run["plans"] = [label]
        (folder / f"{second_of}-{suffix}.jsonl").write_text(json.dumps(run) + "\n")
    first.unlink()
    shown = runner.invoke(main, ["show", "last"])
    assert shown.stdout.startswith(f"run {second_of}-000000: newer\n")
    rows = json.loads(runner.invoke(main, ["runs", "--format", "json"]).stdout)
    assert [r["plans"] for r in rows] == [["newer"], ["older"]]


def test_show_picks_a_call_by_plan_when_plans_share_ids(runner: CliRunner, ws: Path) -> None:
    for name in ("a", "b"):
        (ws / f"{name}.yaml").write_text(
            f"calls:\n  - {{id: same, tool: Bash, input: {{command: 'echo from-{name}'}}}}\n"
        )
    assert runner.invoke(main, ["exec", "a.yaml", "b.yaml", "--format", "jsonl"]).exit_code == 0
    ambiguous = runner.invoke(main, ["show", "last", "same"])
    assert ambiguous.exit_code == 2
    assert "a.yaml" in ambiguous.stderr and "b.yaml" in ambiguous.stderr
    assert "--plan" in ambiguous.stderr
    for name in ("a", "b"):
        for plan in (f"{name}.yaml", name):
            picked = runner.invoke(main, ["show", "last", "same", "--plan", plan])
            assert picked.exit_code == 0, picked.output
            assert picked.stdout.endswith(f"from-{name}\n")
    assert runner.invoke(main, ["show", "last", "1", "--plan", "b"]).stdout.endswith("from-b\n")
    missing = runner.invoke(main, ["show", "last", "same", "--plan", "c.yaml"])
    assert missing.exit_code == 2 and "in plan 'c.yaml'" in missing.stderr


def test_show_lists_one_plans_calls(runner: CliRunner, ws: Path) -> None:
    for name in ("a", "b"):
        (ws / f"{name}.yaml").write_text(f"calls:\n  - {{tool: Bash, input: {{command: 'echo {name}'}}}}\n")
    assert runner.invoke(main, ["exec", "a.yaml", "b.yaml", "--format", "jsonl"]).exit_code == 0
    listed = runner.invoke(main, ["show", "last", "--plan", "b"]).stdout.splitlines()
    rows = listed[next(i for i, line in enumerate(listed) if line.startswith("----")) + 1 :]
    assert [row.split()[0] for row in rows] == ["b.yaml"]
