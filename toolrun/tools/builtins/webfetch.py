"""WebFetch: HTTP GET a URL and return its text (HTML crudely turned into text)."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from functools import partial
from typing import IO, Any

import toolrun
from toolrun.errors import ToolError, ToolTimeoutError
from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._blocking import run_blocking
from toolrun.tools.builtins._capture import store_whole
from toolrun.tools.builtins._html import html_to_markdown
from toolrun.tools.inputs import InputSpec, Params, optional, pydantic_models, string

#: The longest wait for one read (or the connection) before the fetch fails.
TIMEOUT_S = 30.0
#: The longest a whole fetch may take, however the server trickles (the call's own
#: ``timeout`` ends it sooner).
DEADLINE_S = 120.0
#: Bytes read at a time: the deadline is looked at between reads.
CHUNK_BYTES = 65536
MAX_BYTES = 5 * 1024 * 1024
MAX_CHARS = 100_000
TEXT_TYPES = ("application/json", "application/xml", "application/javascript")


@dataclass(frozen=True, slots=True)
class WebFetchParams(Params):
    """A validated WebFetch input (its schema and messages: :class:`WebFetchInput`)."""

    url: str
    prompt: str | None = None


INPUT = InputSpec(WebFetchParams, "WebFetchInput", url=string, prompt=optional(string))


class WebFetchTool(BaseTool[WebFetchParams]):
    name = "WebFetch"
    description = (
        "Fetch a URL with HTTP GET and return its content as text (HTML reduced to "
        "readable text). Redirects to another host are reported, not followed."
    )
    kind = ToolKind.NETWORK
    is_retry_safe = True
    concurrency = "always"
    input_spec = INPUT

    def is_concurrency_safe(self, input: WebFetchParams, ctx: ToolContext | None = None) -> bool:
        return True

    async def run(self, input: WebFetchParams, ctx: ToolContext) -> ToolOutput:
        scheme = urllib.parse.urlsplit(input.url).scheme
        if scheme not in ("http", "https"):
            raise ToolError(
                f"unsupported URL scheme {scheme!r} in {input.url}; WebFetch fetches http(s) URLs"
            )
        job = Fetch(input.url, TIMEOUT_S, ctx.private_hosts)
        try:
            page = await run_blocking(job.run)
        finally:
            job.abort()  # cancelled (timeout, Ctrl-C): its sockets shut, its thread ends
        meta = {
            "url": page.url,
            "status": page.status,
            "content_type": page.content_type,
            "bytes": page.size,
        }
        if page.redirect is not None:
            return ToolOutput(
                f"{input.url} redirects to another host: {page.redirect}\n"
                "Fetch that URL with WebFetch to follow the redirect.",
                metadata={**meta, "redirect": page.redirect},
            )
        text = page.text
        if len(text) > MAX_CHARS:
            where = store_whole(ctx.stored_output, text)  # the page as converted, whole
            more = len(text) - MAX_CHARS
            text = text[:MAX_CHARS] + f"\n[... {more} more characters not shown{where}]"
        return ToolOutput(text, metadata=meta)


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    status: int
    content_type: str
    size: int
    text: str
    redirect: str | None = None


class _CrossHostRedirect(Exception):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects on the same host only: a permission rule named that host."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        new, old = urllib.parse.urlsplit(newurl), urllib.parse.urlsplit(req.full_url)
        if new.scheme not in ("http", "https") or new.hostname != old.hostname:
            fp.close()
            raise _CrossHostRedirect(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def guarded_connection(
    private_hosts: frozenset[str],
) -> Callable[..., socket.socket]:
    """``socket.create_connection`` that resolves the host once, refuses it if any of
    its addresses is loopback, private, link-local, this host's own, ... (unless
    ``private_hosts`` names the host), then connects to an address it checked: never a
    second lookup that a rebinding DNS server could answer differently. The check is
    the sandbox proxy's too (:mod:`toolrun.permissions.addresses`)."""

    from toolrun.permissions.addresses import checked_addresses, connect_first, stream_addresses
    from toolrun.permissions.domains import connect_host

    def connect(
        address: tuple[str, int],
        timeout: float | None = None,
        source_address: tuple[str, int] | None = None,
    ) -> socket.socket:
        host, port = address

        def refused(shown: str, why: str) -> str:
            return (
                f"refused to connect to {shown}: {why}; WebFetch reaches loopback, "
                "link-local, private and metadata addresses only for a host that a "
                f"WebFetch(domain:{connect_host(host)}) allow rule names"
            )

        infos = checked_addresses(
            host,
            port,
            exempt=connect_host(host) in private_hosts,
            resolve=stream_addresses,
            refused=refused,
        )
        return connect_first(infos, timeout, source_address)

    return connect


def _handlers(
    private_hosts: frozenset[str], opened: Callable[[socket.socket], None] | None = None
) -> list[urllib.request.BaseHandler]:
    """``opened`` gets each connection's socket once connected (TLS wrapped, for https)."""
    connect = guarded_connection(private_hosts)

    class _HTTP(http.client.HTTPConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

        def connect(self) -> None:
            super().connect()
            if opened is not None:
                opened(self.sock)

    class _HTTPS(http.client.HTTPSConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

        def connect(self) -> None:
            super().connect()
            if opened is not None:
                opened(self.sock)

    class _HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(_HTTP, req)

    class _HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(_HTTPS, req, context=self._context)  # type: ignore[attr-defined]

    # No proxy from the environment: the address checked must be the address reached.
    return [urllib.request.ProxyHandler({}), _HTTPHandler(), _HTTPSHandler(),
            _SameHostRedirects()]


def fetch(
    url: str,
    timeout: float,
    private_hosts: frozenset[str] = frozenset(),
    deadline: float = DEADLINE_S,
) -> Page:
    """GET ``url`` (blocking), within ``deadline`` seconds in all. Expected failures are
    :class:`ToolError`."""
    return Fetch(url, timeout, private_hosts, deadline).run()


class Fetch:
    """One GET, which :meth:`abort` (from any thread) or its deadline ends at once.

    The per-read socket timeout alone let a server that sends a byte every few seconds
    hold a fetch for days, and a blocked read cannot be cancelled: both shut the
    connection's sockets down, which ends the read where it waits.
    """

    def __init__(
        self,
        url: str,
        timeout: float,
        private_hosts: frozenset[str] = frozenset(),
        deadline: float = DEADLINE_S,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.private_hosts = private_hosts
        self.deadline = deadline
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._ended = False  # aborted or past its deadline: every socket is shut
        self._expired = False

    def _opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            ended = self._ended
        if ended:
            _shut(sock)

    def abort(self, *, expired: bool = False) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended, self._expired = True, expired
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def run(self) -> Page:
        timer = threading.Timer(self.deadline, partial(self.abort, expired=True))
        timer.daemon = True
        timer.start()
        try:
            page = self._get()
        except (ToolError, OSError):
            if self._ended:  # a shut socket fails its read in more ways than one
                raise self._why_ended() from None
            raise
        finally:
            timer.cancel()
        if self._ended:  # a shut socket reads as the end: what came is not the page
            raise self._why_ended()
        return page

    def _why_ended(self) -> ToolError:
        if self._expired:
            return ToolTimeoutError(f"fetching {self.url} took longer than {self.deadline:g} s")
        return ToolError(f"fetching {self.url} was cancelled")

    def _get(self) -> Page:
        url, timeout = self.url, self.timeout
        opener = urllib.request.build_opener(*_handlers(self.private_hosts, self._opened))
        request = urllib.request.Request(
            url,
            headers={
                "User-Agent": f"toolrun/{toolrun.__version__}",
                "Accept": "text/html, text/*;q=0.9, application/json;q=0.8, */*;q=0.1",
            },
        )
        try:
            with opener.open(request, timeout=timeout) as response:
                data = self._read(response)
                return _page(response.geturl(), response.status, response.headers, data)
        except _CrossHostRedirect as e:
            return Page(url, 0, "", 0, "", redirect=e.url)
        except urllib.error.HTTPError as e:
            e.close()
            raise ToolError(f"HTTP {e.code} {e.reason} for {url}") from None
        except urllib.error.URLError as e:
            from toolrun.permissions.addresses import AddressRefused

            if isinstance(e.reason, AddressRefused):
                raise ToolError(f"cannot fetch {url}: {e.reason}") from None
            if isinstance(e.reason, TimeoutError):
                raise ToolTimeoutError(f"fetching {url} timed out after {timeout:g} s") from None
            raise ToolError(f"cannot fetch {url}: {_reason(e.reason)}") from None
        except TimeoutError:
            raise ToolTimeoutError(f"fetching {url} timed out after {timeout:g} s") from None
        except (ConnectionError, http.client.HTTPException) as e:
            raise ToolError(f"cannot fetch {url}: {_reason(e)}") from None

    def _read(self, response: http.client.HTTPResponse) -> bytes:
        """Up to MAX_BYTES + 1 bytes of the body (the deadline's shutdown ends a read)."""
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_BYTES and not self._ended:
            chunk = response.read1(min(CHUNK_BYTES, MAX_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _reason(reason: Any) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason)


def _page(url: str, status: int, headers: Message, data: bytes) -> Page:
    content_type = headers.get_content_type()
    if not (content_type.startswith("text/") or content_type in TEXT_TYPES
            or content_type.endswith(("+json", "+xml"))):  # fmt: skip
        raise ToolError(f"{url} is {content_type}, not text; WebFetch returns text only")
    truncated = len(data) > MAX_BYTES
    charset = headers.get_content_charset() or "utf-8"
    try:
        text = data[:MAX_BYTES].decode(charset, "replace")
    except LookupError:
        text = data[:MAX_BYTES].decode("utf-8", "replace")
    if content_type in ("text/html", "application/xhtml+xml"):
        text = html_to_markdown(text)
    if truncated:
        text += f"\n[... download stopped at {MAX_BYTES} bytes]"
    return Page(url, status, content_type, len(data[:MAX_BYTES]), text)


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("WebFetchInput")
