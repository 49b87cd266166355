"""Hook scripts written for Claude Code read toolrun's stdin by Claude Code's field names.

One real ``toolrun exec`` runs every built-in tool with a PreToolUse, a PostToolUse and
a PostToolUseFailure hook; the hook indexes each documented field (a missing one
raises, and the hook's log line is missing) and logs what it read.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolrun.cli import main

#: The fields Claude Code documents for each tool's tool_response (README "Hooks").
SHAPES = {
    "Bash": ["stdout", "stderr", "interrupted", "isImage"],
    "Read": ["type", "file.filePath", "file.content", "file.numLines", "file.startLine",
             "file.totalLines"],
    "Write": ["type", "filePath", "content", "success"],
    "Edit": ["filePath", "oldString", "newString", "replaceAll", "userModified"],
    "MultiEdit": ["filePath", "edits", "userModified"],
    "Glob": ["filenames", "numFiles", "truncated", "durationMs"],
    "Grep": ["mode", "numFiles", "filenames"],
    "LS": ["path", "result"],
    "WebFetch": ["url", "code", "codeText", "bytes", "result", "durationMs"],
}
COMMON = ["session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
          "tool_name", "tool_input", "tool_use_id"]

HOOK = """
import json, sys
event = json.load(sys.stdin)
shapes = json.loads(sys.argv[2])

def get(obj, dotted):
    for key in dotted.split("."):
        obj = obj[key]          # KeyError: the field is missing, the hook fails
    return obj

read = {f: get(event, f) for f in json.loads(sys.argv[3])}
name = event["hook_event_name"]
if name == "PostToolUse":
    read["tool_response"] = {f: get(event["tool_response"], f) for f in shapes[event["tool_name"]]}
    read["duration_ms"] = event["duration_ms"]
elif name == "PostToolUseFailure":
    read["error"] = event["error"]
    read["is_interrupt"] = event["is_interrupt"]
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(read) + "\\n")
"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html><body><h1>Title</h1><p>Some <a href='/x'>link</a></p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/page"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def test_a_claude_code_hook_reads_every_documented_field(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    (tmp_path / "hook.py").write_text(HOOK)
    log = tmp_path / "seen.jsonl"  # outside the workspace, so Grep and Glob do not see it
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    (ws / "old.txt").write_text("alpha\nbeta\n")
    command = (f"{sys.executable} {tmp_path / 'hook.py'} {log} "
               f"'{json.dumps(SHAPES)}' '{json.dumps(COMMON)}'")
    hook = f"[{{type: command, command: {json.dumps(command)}}}]"
    (ws / "toolrun.yaml").write_text(
        "permissions: {allow: [Bash, Write, Edit, MultiEdit, 'WebFetch(domain:127.0.0.1)']}\n"
        "hooks:\n"
        + "".join(f"  {event}:\n    - hooks: {hook}\n"
                  for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"))
    )
    calls = [
        {"tool": "Bash", "input": {"command": "echo hi"}},
        {"tool": "Read", "input": {"file_path": "old.txt"}},
        {"tool": "Write", "input": {"file_path": "new.txt", "content": "one\ntwo\n"}},
        {"tool": "Edit", "input": {"file_path": "new.txt", "old_string": "one",
                                   "new_string": "uno"}},
        {"tool": "MultiEdit", "input": {"file_path": "new.txt", "edits": [
            {"old_string": "two", "new_string": "dos"}]}},
        {"tool": "Glob", "input": {"pattern": "*.txt"}},
        {"tool": "Grep", "input": {"pattern": "be[t]a"}},
        {"tool": "LS", "input": {"path": "."}},
        {"tool": "WebFetch", "input": {"url": page, "prompt": "title"}},
        {"tool": "Bash", "input": {"command": "exit 3"}},
    ]
    (ws / "plan.json").write_text(json.dumps({"calls": calls}))
    result = runner.invoke(main, ["exec", "plan.json", "--format", "jsonl"])
    statuses = [json.loads(line)["status"] for line in result.stdout.splitlines()]
    assert statuses == ["ok"] * 9 + ["error"], result.output
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    events = [(s["hook_event_name"], s["tool_name"]) for s in seen]
    expected = []
    for call in calls[:-1]:
        expected += [("PreToolUse", call["tool"]), ("PostToolUse", call["tool"])]
    expected += [("PreToolUse", "Bash"), ("PostToolUseFailure", "Bash")]
    assert sorted(events) == sorted(expected)  # concurrent runs log in any order
    post = {s["tool_name"]: s["tool_response"] for s in seen if "tool_response" in s}
    assert post["Bash"]["stdout"] == "hi\n" and post["Bash"]["interrupted"] is False
    assert post["Read"]["file.content"] == "alpha\nbeta"
    assert post["Read"]["file.filePath"] == str(ws / "old.txt")
    assert post["Write"] == {"type": "create", "filePath": str(ws / "new.txt"),
                             "content": "one\ntwo\n", "success": True}
    assert post["Edit"]["oldString"] == "one" and post["Edit"]["newString"] == "uno"
    assert post["MultiEdit"]["edits"] == [{"old_string": "two", "new_string": "dos"}]
    assert sorted(post["Glob"]["filenames"]) == [str(ws / "new.txt"),
                                                 str(ws / "old.txt")]
    assert post["Glob"]["numFiles"] == 2
    assert post["Grep"] == {"mode": "files_with_matches", "numFiles": 1,
                            "filenames": [str(ws / "old.txt")]}
    assert "new.txt" in post["LS"]["result"]
    assert post["WebFetch"]["code"] == 200 and post["WebFetch"]["codeText"] == "OK"
    assert "Title" in post["WebFetch"]["result"]
    (failure,) = [s for s in seen if s["hook_event_name"] == "PostToolUseFailure"]
    assert failure["error"] and failure["is_interrupt"] is False
    journal = seen[0]["transcript_path"]
    assert journal.endswith(".jsonl") and Path(journal).parent == ws / ".toolrun" / "runs"
    assert {s["session_id"] for s in seen} == {Path(journal).stem}
    assert {s["cwd"] for s in seen} == {str(ws)}
    assert {s["permission_mode"] for s in seen} == {"default"}
