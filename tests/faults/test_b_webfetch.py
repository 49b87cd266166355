"""WebFetch of a body that trickles (#27 item 7): a real slow HTTP server on 127.0.0.1 and
a real ``python -m toolrun exec``. The call ends at its timeout and toolrun exits; one
Ctrl-C, SIGTERM or SIGHUP ends it; with no timeout the fetch has a total deadline."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.b_support import BOUND_S, SlowServer, nothing_left, run, signalled
from toolrun.errors import ToolTimeoutError
from toolrun.tools.builtins import webfetch

MODES = ["body", "headers", "chunked", "silent"]  # four spellings of "it trickles"


@pytest.fixture(params=MODES)
def slow(request: pytest.FixtureRequest) -> Iterator[SlowServer]:
    server = SlowServer(request.param)
    yield server
    server.close()


def _plan(ws: Path, url: str, timeout: float | None = None) -> None:
    (ws / "toolrun.yaml").write_text(
        json.dumps({"permissions": {"allow": ["WebFetch(domain:127.0.0.1)", "Bash"]}})
    )
    fetch: dict[str, object] = {"tool": "WebFetch", "input": {"url": url}}
    if timeout is not None:
        fetch["timeout"] = timeout
    # a concurrent run: the Bash call must get its result while the fetch hangs
    calls = [fetch, {"tool": "Bash", "input": {"command": "echo still-here"}}]
    (ws / "plan.json").write_text(json.dumps({"calls": calls}))


def test_a_trickling_fetch_ends_at_its_timeout_and_toolrun_exits(
    tmp_path: Path, slow: SlowServer
) -> None:
    _plan(tmp_path, slow.url, timeout=2)
    ended = run(tmp_path, "exec", "plan.json", "--format", "jsonl")
    assert ended.statuses() == ["timeout", "ok"], ended.stderr
    assert "still-here" in ended.results[1]["output"]
    assert ended.code == 1
    assert ended.seconds < 2 + BOUND_S
    assert slow.closed.wait(5)  # the connection was let go of, not left reading
    assert not nothing_left(tmp_path)


@pytest.mark.parametrize(
    ("sig", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 130), (signal.SIGHUP, 129)],
)
def test_one_signal_ends_a_trickling_fetch(
    tmp_path: Path, slow: SlowServer, sig: int, code: int
) -> None:
    _plan(tmp_path, slow.url)
    ended = signalled(tmp_path, sig, slow.connected.is_set, "exec", "plan.json", "--format",
                      "jsonl")
    assert ended.code == code, ended.stderr
    assert len(ended.results) == 2  # every call has exactly one result
    assert ended.results[0]["status"] == "interrupted"
    assert ended.seconds < BOUND_S
    assert "Traceback" not in ended.stderr
    assert not nothing_left(tmp_path)


def test_without_a_timeout_a_fetch_has_a_total_deadline(slow: SlowServer) -> None:
    # every read gets its byte well within the per-read limit: only the deadline ends it
    with pytest.raises(ToolTimeoutError, match=r"took longer than 1\.5 s"):
        webfetch.fetch(slow.url, 30.0, frozenset({"127.0.0.1"}), deadline=1.5)
    assert webfetch.DEADLINE_S == 120.0  # the default the README names


def test_a_fetch_that_is_aborted_says_so_and_is_no_page(slow: SlowServer) -> None:
    import threading

    job = webfetch.Fetch(slow.url, 30.0, frozenset({"127.0.0.1"}))
    threading.Thread(target=lambda: (slow.connected.wait(10), job.abort()), daemon=True).start()
    with pytest.raises(webfetch.ToolError, match="was cancelled"):
        job.run()
