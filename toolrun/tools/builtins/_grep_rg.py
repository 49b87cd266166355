"""Grep with ripgrep: run ``rg --json`` and collect the lines it reports.

rg runs under toolrun's reaper (:mod:`toolrun.reaper.run`), like Bash: the call's timeout
and Ctrl-C stop it, and it never outlives toolrun (kill -9 included).
"""

from __future__ import annotations

import base64
import json
import os
from functools import partial
from typing import Any

from toolrun.errors import ToolError
from toolrun.tools.builtins._grep_core import (
    Found,
    Hits,
    Line,
    Query,
    drop_hidden,
    invalid_regex,
    split_lines,
    unknown_type,
)
from toolrun.tools.builtins._hidden import Hide

#: Settings that would make the result depend on the machine rather than the files.
FIXED_FLAGS = (
    "--json",
    "--no-config",  # no RIPGREP_CONFIG_PATH
    "--no-ignore-global",  # no core.excludesFile
    "--no-ignore-exclude",  # no .git/info/exclude
    "--no-require-git",  # .gitignore applies in or out of a git repository
)


def command(rg: str, query: Query) -> list[str]:
    args = [rg, *FIXED_FLAGS]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if query.before:
        args += ["--before-context", str(query.before)]
    if query.after:
        args += ["--after-context", str(query.after)]
    if query.first_match_only:
        args += ["--max-count", "1"]
    if query.glob is not None:
        args += ["--glob", query.glob]
    if query.file_type is not None:
        args += ["--type", query.file_type]
    return [*args, "--regexp", query.pattern, "--", query.root]


def files_command(rg: str, query: Query) -> list[str]:
    """``rg --files`` over the same files :func:`command` searches (NUL-separated)."""
    args = [rg, "--files", "--null", *(f for f in FIXED_FLAGS if f != "--json")]
    if query.glob is not None:
        args += ["--glob", query.glob]
    if query.file_type is not None:
        args += ["--type", query.file_type]
    return [*args, "--", query.root]


async def search(rg: str, query: Query, hide: Hide | None = None) -> Found:
    """The hits; with ``hide``, without the files it covers (rg searches them, they are
    dropped afterwards) and with how many of the files searched it covers."""
    # --glob patterns are relative to rg's working directory: make that the search root.
    cwd = query.root if query.root_is_dir else os.path.dirname(query.root)
    hits = await _search(rg, query, cwd)
    if hide is None:
        return Found(hits)
    _, listed, _ = await _rg(files_command(rg, query), cwd)
    # Whatever it could list (an unreadable folder makes it fail, like the search).
    searched = [os.fsdecode(p) for p in listed.split(b"\0") if p]
    from toolrun.tools.builtins._blocking import run_blocking

    return await run_blocking(partial(drop_hidden, hits, searched, hide))


#: How long rg may run when the call sets no timeout (its timeout and Ctrl-C end it sooner).
RG_LIMIT_S = 24 * 3600.0


async def _rg(argv: list[str], cwd: str) -> tuple[int, bytes, bytes]:
    """Run rg to its end: its exit status, stdout and stderr."""
    from toolrun.reaper.run import run_command

    out, err = bytearray(), bytearray()
    try:
        code = await run_command(argv, cwd=cwd, env=os.environ, time_limit=RG_LIMIT_S,
                                 stdout=out.extend, stderr=err.extend)
    except OSError as exc:
        raise ToolError(f"ripgrep could not be started: {exc.strerror or exc}") from None
    return (code if code is not None else -1), bytes(out), bytes(err)


async def _search(rg: str, query: Query, cwd: str) -> Hits:
    code, stdout, stderr_bytes = await _rg(command(rg, query), cwd)
    if code not in (0, 1):
        stderr = stderr_bytes.decode("utf-8", "replace").strip()
        if "regex parse error" in stderr or "error parsing regex" in stderr:
            raise invalid_regex(query.pattern, stderr)
        if "unrecognized file type" in stderr and query.file_type is not None:
            raise unknown_type(query.file_type)
        if not stdout:
            raise ToolError(f"ripgrep failed: {stderr}")
        # Otherwise some files could not be read: keep what was found, as rg does.
    return parse(stdout)


def parse(output: bytes) -> Hits:
    hits: Hits = {}
    for raw in output.splitlines():
        message = json.loads(raw)
        kind = message["type"]
        if kind not in ("match", "context"):
            continue
        data = message["data"]
        path = _text(data["path"], path=True)
        lines = hits.setdefault(path, {})
        for offset, text in enumerate(split_lines(_text(data["lines"]))):
            number = data["line_number"] + offset
            if kind == "match" or number not in lines:
                lines[number] = Line(text, kind == "match")
    return {p: found for p, found in hits.items() if any(x.is_match for x in found.values())}


def _text(value: dict[str, Any], *, path: bool = False) -> str:
    """rg's ``{"text": ...}`` or ``{"bytes": base64}`` (for bytes that are not UTF-8)."""
    if "text" in value:
        return str(value["text"])
    data = base64.b64decode(value["bytes"])
    return os.fsdecode(data) if path else data.decode("utf-8", "replace")
