"""``type: http`` hooks POST the event's JSON (#30), against a real server on 127.0.0.1:
the response decides as a command hook's stdout; ``allowedHttpHookUrls`` keeps a hook
from contacting a URL it does not match; header ``$VAR``s expand only for the names in
``allowedEnvVars`` (and ``httpHookAllowedEnvVars``). Real ``toolrun exec`` processes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.conftest import toolrun_exec

DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "the service says no"}}


class Server:
    """Answers each path with ``(status, body)`` from ``answers``; records every request."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, str]] = {}
        self.seen: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                server.seen.append({"path": self.path, "headers": dict(self.headers),
                                    "body": json.loads(body)})
                status, text = server.answers.get(self.path, (200, ""))
                data = text.encode()
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", f"{server.url}/elsewhere")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    yield running
    running.close()


def config(hook: dict[str, Any], extra: str = "") -> str:
    return (
        "permissions: {allow: [Bash]}\nhooks:\n  PreToolUse:\n    - matcher: Bash\n"
        f"      hooks: [{json.dumps({'type': 'http', **hook})}]\n" + extra
    )


CALL = [{"tool": "Bash", "input": {"command": "touch ran.txt"}}]


def test_the_payload_is_posted_and_a_deny_denies(ws: Path, server: Server) -> None:
    server.answers["/pre"] = (200, json.dumps(DENY))
    code, (r,), _err = toolrun_exec(ws, config({"url": f"{server.url}/pre"}), CALL)
    assert code == 4 and r["status"] == "denied" and "the service says no" in r["error"]
    assert not (ws / "ran.txt").exists()
    (request,) = server.seen
    assert request["headers"]["Content-Type"] == "application/json"
    body = request["body"]
    assert body["hook_event_name"] == "PreToolUse" and body["tool_name"] == "Bash"
    assert body["tool_input"] == {"command": "touch ran.txt"} and body["session_id"] == r["run_id"]


@pytest.mark.parametrize(
    ("status", "body", "closed", "runs"),
    [
        (500, "broken", False, True),  # non-2xx: a non-blocking error
        (500, json.dumps(DENY), False, True),  # ... whatever JSON it carries
        (302, "", False, True),  # a redirect is not followed
        (500, "broken", True, False),  # hookFailure: closed denies
        (200, "plain text", False, True),  # a plain 2xx body is context
    ],
)
def test_what_a_response_means(
    ws: Path, server: Server, status: int, body: str, closed: bool, runs: bool
) -> None:
    server.answers["/pre"] = (status, body)
    extra = "toolrun: {hookFailure: closed}\n" if closed else ""
    _code, (r,), _err = toolrun_exec(ws, config({"url": f"{server.url}/pre"}, extra), CALL)
    assert (ws / "ran.txt").exists() is runs
    assert r["status"] == ("ok" if runs else "denied")
    assert [s["path"] for s in server.seen] == ["/pre"]  # never /elsewhere
    (run,) = r["hooks"][0]["runs"]
    if status == 200:
        assert run["additional_context"] == "plain text"
    else:
        assert run["failure"] == "http_error" and f"HTTP {status}" in run["error"]


def test_a_refused_connection_is_a_failure(ws: Path, server: Server) -> None:
    url = server.url
    server.close()
    _code, (r,), _err = toolrun_exec(ws, config({"url": f"{url}/pre"}), CALL)
    assert r["status"] == "ok"
    assert r["hooks"][0]["runs"][0]["failure"] == "http_error"


@pytest.mark.parametrize(
    ("patterns", "path", "contacted"),
    [
        (["{url}/ok/*"], "/ok/pre", True),
        (["{url}/ok/*"], "/other", False),
        ([], "/ok/pre", False),  # an empty list allows no http hook
        (["http://127.0.0.1:1/*", "{url}/*"], "/any", True),  # lists merge; any may match
    ],
)
def test_allowed_http_hook_urls(
    ws: Path, server: Server, patterns: list[str], path: str, contacted: bool
) -> None:
    server.answers[path] = (200, json.dumps(DENY))
    allowed = json.dumps([p.format(url=server.url) for p in patterns])
    _code, (r,), _err = toolrun_exec(
        ws, config({"url": f"{server.url}{path}"}, f"allowedHttpHookUrls: {allowed}\n"), CALL
    )
    assert bool(server.seen) is contacted
    assert r["status"] == ("denied" if contacted else "ok")
    if not contacted:
        run = r["hooks"][0]["runs"][0]
        assert run["failure"] == "url_not_allowed" and "allowedHttpHookUrls" in run["error"]


def test_a_url_not_allowed_denies_under_hook_failure_closed(ws: Path, server: Server) -> None:
    extra = "allowedHttpHookUrls: []\ntoolrun: {hookFailure: closed}\n"
    code, (r,), _err = toolrun_exec(ws, config({"url": f"{server.url}/pre"}, extra), CALL)
    assert code == 4 and r["status"] == "denied" and server.seen == []


@pytest.mark.parametrize(
    ("value", "allowed", "policy", "expected"),
    [
        ("Bearer $MY_TOKEN", ["MY_TOKEN"], None, "Bearer s3cret"),
        ("Bearer ${MY_TOKEN}", ["MY_TOKEN"], None, "Bearer s3cret"),
        ("Bearer $MY_TOKEN", [], None, "Bearer"),  # not listed: empty
        ("$MY_TOKEN-$OTHER", ["MY_TOKEN", "OTHER"], ["OTHER"], "-other"),  # intersection
    ],
)
def test_header_variables_expand_only_when_allowed(
    ws: Path, server: Server, value: str, allowed: list[str], policy: list[str] | None,
    expected: str,
) -> None:
    hook = {"url": f"{server.url}/pre", "headers": {"X-Token": value}, "allowedEnvVars": allowed}
    extra = f"httpHookAllowedEnvVars: {json.dumps(policy)}\n" if policy is not None else ""
    toolrun_exec(ws, config(hook, extra), CALL, env={"MY_TOKEN": "s3cret", "OTHER": "other"})
    (request,) = server.seen
    assert request["headers"]["X-Token"].strip() == expected


def test_an_http_hook_without_a_url_is_a_located_config_error(ws: Path) -> None:
    code, results, err = toolrun_exec(ws, config({"url": "ftp://x"}), CALL)
    assert code == 3 and results == [] and "toolrun.yaml:" in err and "url" in err
    assert not (ws / "ran.txt").exists()
