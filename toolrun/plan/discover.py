"""The inputs a folder holds: what ``toolrun check DIR`` reads, as ruff and pytest recurse.

A folder given on the command line is walked (sorted, hidden folders and files, ``.toolrun``,
``node_modules`` and symlinked folders left out) for the files toolrun reads: YAML and JSON
plans, JSON conversations and JSONL session logs. A file in it counts only when its content
is one of those formats, so a repository's ``package.json`` or CI YAML is not a "problem":
it was never meant as a plan. A file named outright is always read (and its problems said).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from toolrun.plan.formats import document_format, record_format

SUFFIXES = frozenset({".yaml", ".yml", ".json", ".jsonl", ".ndjson"})
#: Folders never walked: tool output, dependencies, version control (hidden ones too).
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "venv"})
#: A config beside plans is their config, not a plan.
CONFIG_NAMES = frozenset({"toolrun.yaml", "toolrun.yml"})
#: How much of a file is read to tell its format: a plan says so at the top.
_SNIFF_BYTES = 64 << 10
_PLAN_KEY = re.compile(r"^(?:calls|turns)\s*:", re.MULTILINE)


def files_in(folder: Path) -> Iterator[Path]:
    """The files under ``folder`` toolrun can read, in sorted order, depth first."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in SKIPPED_FOLDERS:
                yield from files_in(path)
        elif (
            entry.is_file()
            and path.suffix.lower() in SUFFIXES
            and entry.name not in CONFIG_NAMES
            and is_input(path)
        ):
            yield path


def is_input(path: Path) -> bool:
    """Whether the file's content is a plan or a session toolrun reads (cheap: its start)."""
    try:
        with path.open("rb") as stream:
            head = stream.read(_SNIFF_BYTES)
    except OSError:
        return False
    text = head.decode("utf-8", "replace")
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return _PLAN_KEY.search(text) is not None
    if suffix in (".jsonl", ".ndjson") or _two_object_lines(text):
        for line in text.splitlines()[:20]:
            record = _object(line)
            if record is not None and (record_format(record) is not None or _is_call(record)):
                return True
        return False
    return _document_is_input(path, text, len(head) < _SNIFF_BYTES)


def _document_is_input(path: Path, head: str, whole: bool) -> bool:
    if not whole:
        try:
            head = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    try:
        data = json.loads(head)
    except (ValueError, RecursionError):
        return False
    if isinstance(data, dict) and ("turns" in data or "calls" in data):
        return True
    return document_format(data) is not None


def _object(line: str) -> dict[str, object] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _two_object_lines(text: str) -> bool:
    lines = [line for line in text.splitlines()[:3] if line.strip()]
    return len(lines) >= 2 and all(_object(line) is not None for line in lines[:2])


def _is_call(record: dict[str, object]) -> bool:
    """A line of a call stream: ``{"tool": ..., "input": {...}}``."""
    return isinstance(record.get("tool"), str) and isinstance(record.get("input", {}), dict)
