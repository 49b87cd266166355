"""#27 item 1: JSON from outside (hooks, verifiers, a journal read back) is bounded in
depth and size. A hook printing 3,000-deep JSON is a hook that printed bad JSON (as
``hookFailure`` says), not a traceback; every call keeps its one result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.faults.support_a import journal, results, toolrun, write_plan
from toolrun import boundedjson
from toolrun.errors import UntrustedJSONError
from toolrun.verify.parsers import ReportError, parse

#: the reported spelling (objects) and three more of the same class
DEEP = {
    "objects": '{"a":' * 3000 + "1" + "}" * 3000,
    "lists": "{\"x\": " + "[" * 3000 + "]" * 3000 + "}",
    "mixed": '{"a":' + '[{"b":' * 1500 + "0" + "}]" * 1500 + "}",
    "just past the bound": '{"a":' * 101 + "1" + "}" * 101,
}


def hook_script(ws: Path, text: str) -> str:
    script = ws / "hook.py"
    script.write_text(f"import sys\nsys.stdin.read()\nsys.stdout.write({text!r})\n")
    return f"{sys.executable} {script}"


def config(ws: Path, event: str, command: str, failure: str = "open") -> None:
    ws.joinpath("toolrun.yaml").write_text(
        json.dumps(
            {
                "toolrun": {"hookFailure": failure},
                "permissions": {"allow": ["Bash(echo *)"]},
                "hooks": {event: [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]},
            }
        )
    )


CALLS = [
    {"id": "one", "tool": "Bash", "input": {"command": "echo one"}},
    {"id": "two", "tool": "Bash", "input": {"command": "echo two"}},
]


@pytest.mark.parametrize("spelling", list(DEEP))
def test_a_post_hook_printing_deep_json_is_a_hook_error_and_every_call_has_its_result(
    tmp_path: Path, spelling: str
) -> None:
    config(tmp_path, "PostToolUse", hook_script(tmp_path, DEEP[spelling]))
    write_plan(tmp_path, CALLS)
    done = toolrun(tmp_path, "exec", "plan.json", "--format", "json")
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr
    got = results(done)
    assert [(r["id"], r["status"], r["output"]) for r in got] == [
        ("one", "ok", "one\n"), ("two", "ok", "two\n")
    ]
    for r in got:
        (run,) = r["hooks"][0]["runs"]
        assert run["failure"] == "invalid_json" and "nested more than 100 levels" in run["error"]
    records = journal(tmp_path)
    assert [r["id"] for r in records if r["event"] == "result"] == ["one", "two"]
    assert records[-1]["event"] == "end" and records[-1]["interrupted"] is False


@pytest.mark.parametrize("spelling", list(DEEP))
def test_a_pre_hook_printing_deep_json_fails_closed_when_told_to(
    tmp_path: Path, spelling: str
) -> None:
    config(tmp_path, "PreToolUse", hook_script(tmp_path, DEEP[spelling]), failure="closed")
    write_plan(tmp_path, CALLS)
    done = toolrun(tmp_path, "exec", "plan.json", "--format", "json")
    assert "Traceback" not in done.stderr and done.returncode == 4, done.stderr
    assert [(r["id"], r["status"]) for r in results(done)] == [("one", "denied"), ("two", "denied")]
    assert not any(r["event"] == "started" for r in journal(tmp_path))  # nothing ran


def test_a_pre_hook_with_deep_json_and_hook_failure_open_lets_the_calls_run(tmp_path: Path) -> None:
    config(tmp_path, "PreToolUse", hook_script(tmp_path, DEEP["objects"]))
    write_plan(tmp_path, CALLS)
    done = toolrun(tmp_path, "exec", "plan.json", "--format", "json")
    assert done.returncode == 0 and [r["output"] for r in results(done)] == ["one\n", "two\n"]


def test_a_hook_json_as_deep_as_the_bound_is_still_read(tmp_path: Path) -> None:
    # 100 levels: the hook's answer (a block) is honoured
    deep = "{" + '"x":{' * 98 + "}" * 98 + ', "decision": "block", "reason": "no"}'
    assert not boundedjson.too_deep(deep)
    config(tmp_path, "PostToolUse", hook_script(tmp_path, deep))
    write_plan(tmp_path, CALLS[:1])
    done = toolrun(tmp_path, "exec", "plan.json", "--format", "json")
    (run,) = results(done)[0]["hooks"][0]["runs"]
    assert run["outcome"] != "non_blocking_error" and run["decision"] == "block"


@pytest.mark.parametrize("spelling", list(DEEP))
def test_a_verifier_report_nested_too_deep_is_a_report_error(spelling: str) -> None:
    for fmt in ("sarif", "json"):
        with pytest.raises(ReportError, match="nested more than 100 levels"):
            parse(fmt, DEEP[spelling].replace('"a"', '"runs"'))


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000,  # never closed
        "[" * 200 + "]" * 199,  # one short
        '{"s": "' + "[" * 500 + '"}',  # brackets in a string are text: fine
        '{"s": "\\"' + "{" * 500 + '"}',  # after an escaped quote too
    ],
)
def test_a_bounded_loads_judges_brackets_outside_strings_only(text: str) -> None:
    if '"s"' in text:
        assert boundedjson.loads(text)["s"].endswith("[" * 500) or boundedjson.loads(text)
        return
    with pytest.raises(UntrustedJSONError):
        boundedjson.loads(text)


def test_a_bounded_loads_refuses_text_over_its_size_before_decoding() -> None:
    with pytest.raises(UntrustedJSONError, match="over the limit of 10"):
        boundedjson.loads('{"a": "12345678"}', max_bytes=10)


@pytest.mark.parametrize("spelling", list(DEEP))
def test_a_journal_line_nested_too_deep_is_a_bad_line_not_a_traceback(
    tmp_path: Path, spelling: str
) -> None:
    write_plan(tmp_path, [{"id": "w", "tool": "Write", "input": {"file_path": "a.txt", "content": "x"}}])
    assert toolrun(tmp_path, "exec", "plan.json", "--mode", "acceptEdits").returncode == 0
    (path,) = (tmp_path / ".toolrun" / "runs").glob("*.jsonl")
    lines = path.read_text().splitlines()
    deep = DEEP[spelling]
    path.write_text("\n".join([lines[0], deep, *lines[1:]]) + "\n")
    for args in (("runs",), ("show", "last"), ("show", "last", "w")):
        done = toolrun(tmp_path, *args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
    assert "1 bad lines skipped" in toolrun(tmp_path, "runs").stdout
