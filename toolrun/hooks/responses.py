"""``tool_response`` for PostToolUse hooks, in the shapes Claude Code sends.

Hook scripts written for Claude Code read ``tool_response`` by its field names
(``filePath`` for Write, ``stdout`` for Bash, ``file.content`` for Read, ...), so
every built-in tool's response is given in that tool's Claude Code shape. Fields
toolrun has no honest value for (Edit's ``originalFile``, ``structuredPatch``)
are left out rather than faked. ``output`` (the text toolrun shows) is kept in
every response, so toolrun's own hooks keep working.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Builder = Callable[[Mapping[str, Any], str, Mapping[str, Any], int], dict[str, Any]]


def _paths(text: str) -> list[str]:
    # Tools list one absolute path a line; notes ("No files found", "(showing ...)") are not paths.
    return [line for line in text.splitlines() if line.startswith("/")]


def _bash(inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int) -> dict[str, Any]:
    # toolrun's Bash merges stdout and stderr into one stream, as the agent sees it.
    return {
        "stdout": out,
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "exitCode": meta.get("exit_code"),
        "cwd": meta.get("cwd"),
    }


def _read(inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int) -> dict[str, Any]:
    # The text without toolrun's "     N\t" line-number gutter, as Claude Code gives it.
    lines = [line.partition("\t")[2] for line in out.splitlines()] if meta.get("lines") else []
    start = int(meta.get("start_line", 1))
    file: dict[str, Any] = {
        "filePath": meta.get("path", inp.get("file_path")),
        "content": "\n".join(lines),
        "numLines": len(lines),
        "startLine": start,
    }
    if not meta.get("more"):
        file["totalLines"] = start - 1 + len(lines)
    return {"type": "text", "file": file}


def _write(inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int) -> dict[str, Any]:
    return {
        "type": "create" if meta.get("created") else "update",
        "filePath": meta.get("path", inp.get("file_path")),
        "content": inp.get("content", ""),
        "success": True,
    }


def _edit(inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int) -> dict[str, Any]:
    return {
        "filePath": meta.get("path", inp.get("file_path")),
        "oldString": inp.get("old_string", ""),
        "newString": inp.get("new_string", ""),
        "replaceAll": bool(inp.get("replace_all", False)),
        "userModified": False,
        "success": True,
    }


def _multiedit(
    inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int
) -> dict[str, Any]:
    return {
        "filePath": meta.get("path", inp.get("file_path")),
        "edits": list(inp.get("edits", ())),
        "userModified": False,
        "success": True,
    }


def _glob(inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int) -> dict[str, Any]:
    names = _paths(out)
    return {
        "filenames": names,
        "numFiles": len(names),
        "truncated": bool(meta.get("truncated", False)),
        "durationMs": ms,
    }


def _grep(inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int) -> dict[str, Any]:
    mode = inp.get("output_mode") or "files_with_matches"
    response: dict[str, Any] = {"mode": mode, "numFiles": int(meta.get("files", 0))}
    if mode == "files_with_matches":
        response["filenames"] = _paths(out)
    else:
        response["filenames"] = []
        response["content"] = out
        response["numLines"] = int(meta.get("lines", 0))
    return response


def _ls(inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int) -> dict[str, Any]:
    return {"path": meta.get("path", inp.get("path")), "result": out}


def _webfetch(
    inp: Mapping[str, Any], out: str, meta: Mapping[str, Any], ms: int
) -> dict[str, Any]:
    code = meta.get("status")
    return {
        "url": meta.get("url", inp.get("url")),
        "code": code,
        "codeText": _reason(code),
        "bytes": meta.get("bytes", 0),
        "result": out,
        "durationMs": ms,
    }


def _reason(code: Any) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(int(code)).phrase
    except (TypeError, ValueError):
        return ""


_BUILDERS: dict[str, Builder] = {
    "Bash": _bash,
    "Read": _read,
    "Write": _write,
    "Edit": _edit,
    "MultiEdit": _multiedit,
    "Glob": _glob,
    "Grep": _grep,
    "LS": _ls,
    "WebFetch": _webfetch,
}


def tool_response(
    tool: str,
    tool_input: Mapping[str, Any],
    output: str,
    metadata: Mapping[str, Any],
    *,
    duration_ms: int = 0,
) -> dict[str, Any]:
    """The ``tool_response`` of a call that succeeded (other tools: output + metadata)."""
    builder = _BUILDERS.get(tool)
    shaped = builder(tool_input, output, metadata, duration_ms) if builder else dict(metadata)
    return {**shaped, "output": output}
