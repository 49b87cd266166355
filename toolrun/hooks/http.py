"""``type: http`` hooks: the event's JSON POSTed to a URL (docs/hooks "HTTP hook fields").

The response is read as a command hook's stdout (a 2xx JSON body decides as JSON on
exit 0 does, a plain 2xx body is context); anything else is an ``http_error``: a
non-2xx status, a redirect (never followed: it could carry the payload to a URL
``allowedHttpHookUrls`` does not allow), a connection that fails. Claude Code calls
those non-blocking; with ``hookFailure: closed`` they block, like a crashed command
hook. A URL that ``allowedHttpHookUrls`` does not match is never contacted.

Header values expand ``$VAR`` / ``${VAR}`` only for names in the hook's
``allowedEnvVars`` (and, when ``httpHookAllowedEnvVars`` is set, in it too); any
other reference becomes the empty string, as in Claude Code, so a header can never
leak a variable nobody listed.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence

import anyio
import anyio.to_thread

from toolrun.config.models import HookCommand
from toolrun.hooks.process import MAX_OUTPUT_BYTES, ProcessResult

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def url_allowed(url: str, patterns: Sequence[str] | None) -> bool:
    """Claude Code's ``allowedHttpHookUrls``: None allows every URL, an empty list none;
    ``*`` in a pattern matches any characters, the rest is literal and the whole URL
    must match."""
    if patterns is None:
        return True
    for pattern in patterns:
        regex = ".*".join(re.escape(part) for part in pattern.split("*"))
        if re.fullmatch(regex, url, flags=re.DOTALL):
            return True
    return False


def expand_header(
    value: str, env: Mapping[str, str], allowed: Sequence[str], policy: Sequence[str] | None
) -> str:
    """``$VAR`` / ``${VAR}`` of a header value: listed names from ``env``, others empty."""
    names = set(allowed) if policy is None else set(allowed) & set(policy)

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, "") if name in names else ""

    return _VAR.sub(one, value)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # a 3xx is the hook's answer, not a place to go


def _post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method="POST", headers=dict(headers))
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, response.read(MAX_OUTPUT_BYTES)
    except urllib.error.HTTPError as exc:  # a status that is not 2xx (or a 3xx)
        with exc:
            return exc.code, exc.read(MAX_OUTPUT_BYTES)


async def post_hook(
    hook: HookCommand,
    body: bytes,
    *,
    env: Mapping[str, str],
    time_limit: float,
    allowed_urls: Sequence[str] | None,
    allowed_env_vars: Sequence[str] | None,
) -> ProcessResult:
    """POST ``body`` to the hook's URL; the answer as a :class:`ProcessResult` (never raises
    for the hook's own failures)."""
    start = time.monotonic()
    url = hook.url or ""
    if not url_allowed(url, allowed_urls):
        return ProcessResult(
            None, "", "", 0, failure="url_not_allowed",
            spawn_error=f"{url} matches no allowedHttpHookUrls pattern",
        )  # fmt: skip
    headers = {"Content-Type": "application/json"}
    for name, value in hook.headers:
        expanded = expand_header(value, env, hook.allowed_env_vars, allowed_env_vars)
        if any(c in expanded for c in "\r\n\0") or any(c in name for c in "\r\n\0:"):
            return ProcessResult(
                None, "", "", 0, failure="http_error",
                spawn_error=f"header {name!r} holds a line break or NUL: not sent",
            )  # fmt: skip
        headers[name] = expanded
    try:
        with anyio.fail_after(time_limit):
            status, data = await anyio.to_thread.run_sync(
                _post, url, body, headers, time_limit, abandon_on_cancel=True
            )
    except TimeoutError:
        return ProcessResult(None, "", "", _ms(start), timed_out=True)
    except (OSError, ValueError) as exc:  # refused, unreachable, a bad URL, TLS
        reason = getattr(exc, "reason", None) or exc
        return ProcessResult(
            None, "", "", _ms(start), failure="http_error", spawn_error=f"{url}: {reason}"
        )
    text = data.decode("utf-8", "replace")
    if not 200 <= status < 300:
        return ProcessResult(
            None, "", text, _ms(start), http_status=status, failure="http_error",
            spawn_error=f"{url} answered HTTP {status}" + (f": {text.strip()[:500]}" if text.strip() else ""),
        )  # fmt: skip
    return ProcessResult(0, text, "", _ms(start), http_status=status)


def _ms(start: float) -> int:
    return round((time.monotonic() - start) * 1000)
