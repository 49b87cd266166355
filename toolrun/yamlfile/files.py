"""Reading a plan's or a config's file, and parsing it as YAML or JSON (by its suffix)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from toolrun.errors import Location, Problem
from toolrun.yamlfile.document import Document
from toolrun.yamlfile.errors import DocumentError


def parse_text(
    text: str, file: str, *, json_syntax: bool = False, lean: bool = False
) -> Document:
    """Parse YAML, or JSON (strictly) when ``json_syntax``, into a located Document
    (``lean``: see ``parse_json``; YAML is always decoded whole).

    YAML is read by the fastest builder that reads it: the line builder (one key or
    item a line), else the event builder, else the node builder (which reads every
    construct and words every error); each answers as the next would."""
    if json_syntax:
        from toolrun.yamlfile.jsondoc import parse_json

        return parse_json(text, file, lean=lean)
    from toolrun.yamlfile.block import parse_block

    lines = parse_block(text, file)
    if lines is not None:
        return lines
    from toolrun.yamlfile.events import parse_events

    fast = parse_events(text, file)
    if fast is not None:
        return fast
    from toolrun.yamlfile.nodes import parse_nodes

    return parse_nodes(text, file)


_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def read_text(path: Path, file: str) -> str:
    """A file's UTF-8 text (a UTF-8 BOM is dropped), or DocumentError saying why not.

    Only regular files are read: a FIFO or a device would block or never end. The file is
    opened without blocking and checked after opening, so what is read is what was checked.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise DocumentError(Problem(None, "", f"{file}: no such file")) from None
    except IsADirectoryError:
        raise DocumentError(Problem(None, "", f"{file}: is a directory, not a file")) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = getattr(exc, "strerror", None) or str(exc)
        raise DocumentError(Problem(None, "", f"{file}: cannot read: {reason}")) from None
    try:
        mode = os.fstat(fd).st_mode
        for test, kind in _FILE_KINDS:
            if test(mode):
                raise DocumentError(Problem(None, "", f"{file}: is {kind}, not a file"))
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read()
    except OSError as exc:
        raise DocumentError(Problem(None, "", f"{file}: cannot read: {exc.strerror}")) from None
    finally:
        os.close(fd)
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            raise DocumentError(
                Problem(Location(file, 1, 1), "", f"{encoding} text; toolrun reads UTF-8 only")
            )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        head = raw[: exc.start]
        line = head.count(b"\n")
        column = len(head) - (head.rfind(b"\n") + 1)
        raise DocumentError(
            Problem(
                Location(file, line + 1, column + 1),
                "",
                f"not UTF-8 text (byte {exc.start})",
            )
        ) from None


def load_document(path: Path, *, display: str | None = None) -> Document:
    """Read and parse a YAML or JSON file (JSON by its ``.json`` suffix)."""
    file = display if display is not None else str(path)
    text = read_text(path, file)
    return parse_text(text, file, json_syntax=path.suffix.lower() == ".json")
