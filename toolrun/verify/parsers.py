"""Verifier reports to diagnostics: pure functions, one per format.

- ``sarif``: SARIF 2.1.0 (``runs[].results[]``: ``ruleId``, ``level``, ``message.text``,
  the first ``physicalLocation``'s ``artifactLocation.uri`` and ``region``).
- ``json``: recognised by shape: ruff (``ruff check --output-format json``: a list of
  ``{filename, code, location: {row, column}, message}``), eslint (``-f json``: a list of
  ``{filePath, messages: [{ruleId, severity 1|2, line, column, message}]}``), pyright
  (``--outputjson``: ``{generalDiagnostics: [{file, severity, rule, range, message}]}``,
  0-based positions) and mypy (``-O json``: one object per line, ``{file, line, column,
  severity, code, message}``, 0-based column).
- ``text``: one diagnostic per line, ``file:line[:col]: [severity[:]] message [[code]]``
  (gcc, mypy, flake8, ruff's concise output ...) or tsc's ``file(line,col): error TSn:
  message``; other lines are ignored.

A report that is not what its format says raises :class:`ReportError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from toolrun import boundedjson
from toolrun.errors import ToolrunError, UntrustedJSONError
from toolrun.verify.models import Diagnostic, severity_of


class ReportError(ToolrunError):
    """A verifier's output does not parse as its configured format."""


def parse(fmt: str, text: str) -> list[Diagnostic]:
    """Every diagnostic in ``text``, a report in format ``fmt`` (unfiltered)."""
    if fmt == "text":
        return parse_text(text)
    if not text.strip():
        return []  # some tools print nothing at all when nothing is wrong
    return parse_sarif(_json(text)) if fmt == "sarif" else parse_json(text)


def _json(text: str) -> Any:
    try:
        return boundedjson.loads(text)
    except UntrustedJSONError as exc:
        raise ReportError(f"the report is not JSON: {exc}") from None


# -- SARIF ------------------------------------------------------------------------------


def parse_sarif(data: Any) -> list[Diagnostic]:
    if not isinstance(data, Mapping) or not isinstance(data.get("runs"), list):
        raise ReportError("not a SARIF log: no 'runs' list")
    out = []
    for run in data["runs"]:
        for result in map(_map, _items(run, "results")):
            locations = _items(result, "locations")
            physical = _map(_map(locations[0] if locations else None).get("physicalLocation"))
            region = _map(physical.get("region"))
            message = _map(result.get("message"))
            out.append(
                Diagnostic(
                    file=_uri_path(str(_map(physical.get("artifactLocation")).get("uri", ""))),
                    line=_int(region.get("startLine")),
                    column=_int(region.get("startColumn")),
                    severity=severity_of(result.get("level", "warning")),  # SARIF's default
                    code=str(result.get("ruleId") or ""),
                    message=str(message.get("text") or message.get("markdown") or ""),
                )
            )
    return out


def _uri_path(uri: str) -> str:
    """A SARIF ``uri``: a ``file://`` URI stays whole (the filter reads it); a relative
    URI reference is percent-decoded (``a%20b.py`` is ``a b.py``)."""
    if uri.startswith("file:"):
        return uri
    from urllib.parse import unquote

    return unquote(uri)


# -- JSON -------------------------------------------------------------------------------


def parse_json(text: str) -> list[Diagnostic]:
    try:
        data = boundedjson.loads(text)
    except UntrustedJSONError:
        return _mypy_lines(text)  # mypy -O json: one object per line
    if isinstance(data, Mapping):
        if "generalDiagnostics" in data:
            return _pyright(data)
        if "file" in data and "message" in data:
            return _mypy_lines(text)
        raise ReportError("a JSON object that is neither pyright's nor mypy's report")
    if not isinstance(data, list):
        raise ReportError("a JSON report must be a list or an object")
    out: list[Diagnostic] = []
    for item in data:
        item = _map(item)
        if "messages" in item and "filePath" in item:
            out.extend(_eslint(item))
        elif "filename" in item and "location" in item:
            out.append(_ruff(item))
        else:
            raise ReportError(f"an entry of unknown shape: {sorted(item)[:6]}")
    return out


def _ruff(item: Mapping[str, Any]) -> Diagnostic:
    location = _map(item.get("location"))
    return Diagnostic(
        file=str(item["filename"]),
        line=_int(location.get("row")),
        column=_int(location.get("column")),
        severity=severity_of(item.get("severity") or "error"),  # older ruff: no severity
        code=str(item.get("code") or ""),
        message=str(item.get("message", "")),
    )


def _eslint(item: Mapping[str, Any]) -> Iterator[Diagnostic]:
    for message in map(_map, _items(item, "messages")):
        yield Diagnostic(
            file=str(item["filePath"]),
            line=_int(message.get("line")),
            column=_int(message.get("column")),
            severity=severity_of(message.get("severity", 2)),
            code=str(message.get("ruleId") or ""),
            message=str(message.get("message", "")),
        )


def _pyright(data: Mapping[str, Any]) -> list[Diagnostic]:
    out = []
    for item in map(_map, _items(data, "generalDiagnostics")):
        start = _map(_map(item.get("range")).get("start"))
        out.append(
            Diagnostic(
                file=str(item.get("file", "")),
                line=_int(start.get("line"), base=0),
                column=_int(start.get("character"), base=0),
                severity=severity_of(item.get("severity", "error")),
                code=str(item.get("rule") or ""),
                message=str(item.get("message", "")),
            )
        )
    return out


def _mypy_lines(text: str) -> list[Diagnostic]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = boundedjson.loads(line)
        except UntrustedJSONError as exc:
            raise ReportError(f"line {number} of the report is not JSON: {exc}") from None
        item = _map(item)
        if "file" not in item:
            raise ReportError(f"line {number}: not a mypy diagnostic")
        message = str(item.get("message", ""))
        if item.get("hint"):
            message += f" ({item['hint']})"
        out.append(
            Diagnostic(
                file=str(item["file"]),
                line=_int(item.get("line")),
                column=_int(item.get("column"), base=0),
                severity=severity_of(item.get("severity", "error")),
                code=str(item.get("code") or ""),
                message=message,
            )
        )
    return out


# -- text -------------------------------------------------------------------------------

#: ``path:line[:col]: [severity[:]] message [code]``; a Windows drive letter never
#: starts a path here (toolrun runs on POSIX)
TEXT_LINE = re.compile(
    r"^(?P<file>[^:\n]+?):(?P<line>\d+)(?::(?P<col>\d+))?:\s*"
    r"(?:(?P<severity>error|warning|warn|note|info|hint)\b:?\s*)?"
    r"(?P<message>.*?)\s*(?:\[(?P<code>[\w./@-]+)\])?$",
    re.IGNORECASE,
)
#: tsc: ``path(line,col): error TS2322: message``
TSC_LINE = re.compile(
    r"^(?P<file>[^(\n]+)\((?P<line>\d+),(?P<col>\d+)\):\s*(?P<severity>error|warning|message)"
    r"\s+(?P<code>TS\d+):\s*(?P<message>.*)$"
)


def parse_text(text: str) -> list[Diagnostic]:
    out = []
    for line in text.splitlines():
        line = line.rstrip("\r")
        found = TSC_LINE.match(line) or TEXT_LINE.match(line)
        if found is None:
            continue
        parts = found.groupdict()
        message = (parts["message"] or "").strip()
        code = parts.get("code") or ""
        if not code:
            # flake8 / ruff concise: "F401 `os` imported but unused"
            head = re.match(r"([A-Z]+\d+)\s+(.*)$", message)
            if head is not None:
                code, message = head.group(1), head.group(2)
        out.append(
            Diagnostic(
                file=parts["file"].strip(),
                line=int(parts["line"]),
                column=int(parts["col"] or 0),
                severity=severity_of(parts["severity"] or "error"),
                code=code,
                message=message,
            )
        )
    return out


# -- helpers ----------------------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _items(value: Any, key: str) -> Sequence[Any]:
    items = _map(value).get(key)
    return items if isinstance(items, list) else []


def _int(value: Any, *, base: int = 1) -> int:
    """A 1-based position (``base`` 0: a 0-based one made 1-based); 0 when not given."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value + (1 - base)


