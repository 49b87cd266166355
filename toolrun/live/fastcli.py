"""``python -m toolrun hook`` without click: the warm path of every tool call.

Importing click (and the dataclasses the command's option objects need) costs more than
the rest of a warm hook call put together: about 40 ms of CPU on a loaded 2-core
machine, against 80 ms for the whole call. ``toolrun/__main__.py`` hands ``hook`` here
first. The options of :mod:`toolrun.cli.hook` are read by hand, and only in the spellings
click itself takes (``--opt value``, ``--opt=value``); anything else (``--help``, an
unknown option, a missing value, a bad choice) returns None before stdin is read, and
click's command runs as for ``toolrun hook``, with its messages. A test holds the two
option tables equal.

Only the C parts of the standard library and ``os`` (through :mod:`toolrun.live.client`)
until no server answers -- no pathlib, json, re or typing, each an import a regular
install's interpreter has not done at start-up; then the call is decided in this process,
exactly as the click command decides it.
"""

from __future__ import annotations

import os
import sys

from toolrun.live.client import MAX_PAYLOAD_BYTES, ask_server, server_off, socket_path

TYPE_CHECKING = False  # (typing's own costs an import on every call)
if TYPE_CHECKING:
    from typing import Any

#: option -> (the HookOptions key, its choices; None: a free value, () a flag)
OPTIONS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "--format": ("protocol", ("claude", "gemini")),
    "--fail": ("fail", ("open", "closed")),
    "--allow-read-only": ("allow_read_only", ()),
    "--workspace": ("workspace", None),
    "--config": ("config_file", None),
    "--settings": ("settings_files", None),
    "--no-journal": ("journal", ()),
}


def parse(argv: list[str], env: Any) -> dict[str, Any] | None:
    """The options as :meth:`HookOptions.to_json` gives them, or None: let click parse."""
    options: dict[str, Any] = {
        "protocol": None,
        "fail": "open",
        "allow_read_only": False,
        "workspace": None,
        "config_file": env.get("TOOLRUN_CONFIG") or None,
        "settings_files": [],
        "journal": True,
    }
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, eq, value = arg.partition("=")
        spec = OPTIONS.get(name)
        if spec is None:
            return None
        key, choices = spec
        if choices == ():  # a flag
            if eq:
                return None
            options[key] = key != "journal"
            continue
        if not eq:
            if not args:
                return None
            value = args.pop(0)
        if choices is not None and value not in choices:
            return None
        if not value and choices is None:
            return None  # click refuses an empty path
        if key == "settings_files":
            options[key].append(value)
        else:
            options[key] = value
    return options


def main(argv: list[str]) -> int | None:
    """Answer the hook and return the exit code; None: the click command must run."""
    env = os.environ
    options = parse(argv, env)
    if options is None:
        return None
    cwd = os.getcwd()
    raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    reply: tuple[str, str, int] | None = None
    warm = len(raw) <= MAX_PAYLOAD_BYTES and not server_off(env)
    path = socket_path(env) if warm else None
    if path is not None:
        reply = ask_server(path, raw, options, cwd)
    if reply is None and path is not None and b"SessionStart" in raw:
        from toolrun.live.client import started_for_session

        reply = started_for_session(path, raw, options, cwd)
    if reply is None:
        reply = _here(raw, options, cwd)
        if path is not None:
            from toolrun.live.client import start_server

            start_server(path)
    stdout, stderr, code = reply
    if stdout:
        sys.stdout.write(stdout)
        sys.stdout.flush()
    if stderr:
        sys.stderr.write(stderr)
    return code


def _here(raw: bytes, options: dict[str, Any], cwd: str) -> tuple[str, str, int]:
    from pathlib import Path

    from toolrun.live.hook import HookOptions, answer_hook, failure

    hook_options = HookOptions.from_json(options)
    if len(raw) > MAX_PAYLOAD_BYTES:
        protocol = hook_options.protocol or "claude"
        event = "BeforeTool" if protocol == "gemini" else "PreToolUse"
        message = f"toolrun hook: the payload is over {MAX_PAYLOAD_BYTES} bytes"
        reply = failure(message, hook_options, protocol, event)
    else:
        reply = answer_hook(raw, hook_options, cwd=Path(cwd))
    return reply.stdout, reply.stderr, reply.exit_code
