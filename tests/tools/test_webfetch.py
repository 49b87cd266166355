"""WebFetch against a local HTTP server on 127.0.0.1 (no other address is contacted)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import ValidationError

from toolrun.errors import ToolError, ToolTimeoutError
from toolrun.stored import OutputStore
from toolrun.tools.base import ToolContext
from toolrun.tools.builtins import webfetch as webfetch_module
from toolrun.tools.builtins.webfetch import WebFetchInput, WebFetchTool

pytestmark = pytest.mark.anyio

webfetch = WebFetchTool()

PAGE = """<!doctype html>
<html><head><title>Demo  page</title><style>p { color: red }</style>
<script>var secret = 1;</script></head>
<body><h1>Welcome</h1><p>First   paragraph
with a line break.</p><ul><li>one</li><li>two &amp; three</li></ul></body></html>"""

ROUTES: dict[str, tuple[int, str, bytes]] = {
    "/plain": (200, "text/plain; charset=iso-8859-1", "café\n".encode("latin-1")),
    "/page": (200, "text/html; charset=utf-8", PAGE.encode()),
    "/data.json": (200, "application/json", b'{"ok": true}'),
    "/image.png": (200, "image/png", b"\x89PNG\r\n\x1a\n"),
    "/broken": (500, "text/plain", b"boom"),
}


class Server:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                if self.path == "/moved":
                    self.redirect("/plain")
                elif self.path == "/elsewhere":
                    self.redirect(f"http://localhost:{server.port}/plain")
                elif self.path == "/metadata":
                    self.redirect("http://169.254.169.254/latest/meta-data/")
                elif self.path == "/decimal":
                    self.redirect(f"http://2130706433:{server.port}/plain")
                elif self.path == "/slow":
                    server.release.wait(5)
                    self.reply(200, "text/plain", b"late")
                elif self.path in ROUTES:
                    self.reply(*ROUTES[self.path])
                else:
                    self.reply(404, "text/plain", b"no such page")

            def redirect(self, location: str) -> None:
                self.send_response(302)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def reply(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    for name in (
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ):
        monkeypatch.delenv(name, raising=False)
    running = Server()
    running.thread.start()
    yield running
    running.close()


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    """The local test server is reachable only because a rule names its host exactly
    (as ``WebFetch(domain:127.0.0.1)`` does): see test_webfetch_addresses.py."""
    return replace(ToolContext.for_workspace(ws), private_hosts=frozenset({"127.0.0.1"}))


async def fetch(url: str, ctx: ToolContext) -> str:
    result = await webfetch.run(WebFetchInput(url=url, prompt="summarise"), ctx)
    assert not result.is_error
    return result.output


async def test_plain_text_is_decoded_by_its_charset(server: Server, ctx: ToolContext) -> None:
    result = await webfetch.run(WebFetchInput(url=f"{server.url}/plain"), ctx)

    assert result.output == "café\n"
    assert result.metadata == {
        "url": f"{server.url}/plain",
        "status": 200,
        "content_type": "text/plain",
        "bytes": 5,
    }


async def test_html_becomes_markdown(server: Server, ctx: ToolContext) -> None:
    assert await fetch(f"{server.url}/page", ctx) == (
        # Markdown, as Claude Code's WebFetch gives (it used to be plain text)
        "# Demo page\n\n# Welcome\n\nFirst paragraph\nwith a line break.\n\n- one\n- two & three"
    )


async def test_json_is_returned_as_is(server: Server, ctx: ToolContext) -> None:
    assert await fetch(f"{server.url}/data.json", ctx) == '{"ok": true}'


async def test_redirects_on_the_same_host_are_followed(server: Server, ctx: ToolContext) -> None:
    result = await webfetch.run(WebFetchInput(url=f"{server.url}/moved"), ctx)

    assert result.output == "café\n"
    assert result.metadata["url"] == f"{server.url}/plain"


async def test_a_redirect_to_another_host_is_reported_not_followed(
    server: Server, ctx: ToolContext
) -> None:
    port = server.port

    result = await webfetch.run(WebFetchInput(url=f"{server.url}/elsewhere"), ctx)

    assert result.output == (
        f"{server.url}/elsewhere redirects to another host: http://localhost:{port}/plain\n"
        "Fetch that URL with WebFetch to follow the redirect."
    )
    assert result.metadata["redirect"] == f"http://localhost:{port}/plain"
    assert server.requests == ["/elsewhere"]


async def test_http_errors(server: Server, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await fetch(f"{server.url}/missing", ctx)
    assert str(e.value) == f"HTTP 404 Not Found for {server.url}/missing"

    with pytest.raises(ToolError) as e:
        await fetch(f"{server.url}/broken", ctx)
    assert str(e.value) == f"HTTP 500 Internal Server Error for {server.url}/broken"


async def test_a_refused_connection(ctx: ToolContext) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Nothing listens on the port any more.

    with pytest.raises(ToolError) as e:
        await fetch(f"http://127.0.0.1:{port}/", ctx)
    assert str(e.value) == f"cannot fetch http://127.0.0.1:{port}/: Connection refused"


async def test_only_http_and_https(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await fetch("file:///etc/passwd", ctx)
    assert str(e.value) == (
        "unsupported URL scheme 'file' in file:///etc/passwd; WebFetch fetches http(s) URLs"
    )


async def test_binary_content_is_refused(server: Server, ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as e:
        await fetch(f"{server.url}/image.png", ctx)
    assert (
        str(e.value) == f"{server.url}/image.png is image/png, not text; WebFetch returns text only"
    )


async def test_long_content_is_cut(
    server: Server, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webfetch_module, "MAX_CHARS", 3)

    assert await fetch(f"{server.url}/data.json", ctx) == '{"o\n[... 9 more characters not shown]'


async def test_a_cut_page_is_stored_whole_beside_the_journal(
    server: Server, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(webfetch_module, "MAX_CHARS", 3)
    store = OutputStore(tmp_path / "run", "run", "exec_w", 1 << 20)
    shown = await fetch(f"{server.url}/data.json", replace(ctx, stored_output=store))
    assert shown == (
        '{"o\n[... 9 more characters not shown; all of it is stored: '
        "toolrun show run exec_w --full]"
    )
    assert (store.folder / "exec_w.out").read_bytes() == ROUTES["/data.json"][2]


async def test_a_slow_server_times_out(
    server: Server, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webfetch_module, "TIMEOUT_S", 0.2)

    with pytest.raises(ToolTimeoutError) as e:
        await fetch(f"{server.url}/slow", ctx)
    assert str(e.value) == f"fetching {server.url}/slow timed out after 0.2 s"


def test_flags() -> None:
    call = WebFetchInput(url="https://example.com", prompt="what is it?")

    assert webfetch.is_concurrency_safe(call)
    assert webfetch.is_retry_safe
    assert webfetch.kind == "network"
    with pytest.raises(ValidationError):
        WebFetchInput.model_validate({"url": "https://example.com", "method": "POST"})
