"""Read: a text file, numbered like ``cat -n``."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from toolrun.errors import ToolError
from toolrun.tools.base import BaseTool, ToolContext, ToolKind, ToolOutput
from toolrun.tools.builtins._blocking import run_blocking
from toolrun.tools.builtins._files import (
    TargetChangedError,
    decided_real,
    not_regular,
    opened_elsewhere,
)
from toolrun.tools.inputs import InputSpec, Params, integer, optional, pydantic_models, string

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
BINARY_SNIFF_BYTES = 8192
TRUNCATION_MARK = "… [line truncated]"
INLINE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class ReadParams(Params):
    """A validated Read input (its schema and messages: :class:`ReadInput`)."""

    file_path: str
    offset: int | None = None
    limit: int | None = None


INPUT = InputSpec(
    ReadParams,
    "ReadInput",
    file_path=string,
    offset=optional(integer(ge=0)),
    limit=optional(integer(ge=1)),
)


class ReadTool(BaseTool[ReadParams]):
    name = "Read"
    description = (
        "Read a text file. Lines are numbered from 1 like `cat -n`; use offset and limit "
        "for a part of a long file."
    )
    kind = ToolKind.READ
    is_retry_safe = True
    concurrency = "always"
    input_spec = INPUT

    def is_concurrency_safe(self, input: ReadParams, ctx: ToolContext | None = None) -> bool:
        return True

    def affected_paths(self, input: ReadParams, ctx: ToolContext) -> tuple[Path, ...]:
        return (ctx.resolve(input.file_path),)

    async def run(self, input: ReadParams, ctx: ToolContext) -> ToolOutput:
        # (the path as a string: a Path object per call cost more than the read itself)
        path = ctx.resolve_text(input.file_path, "file_path")
        decided = decided_real(path, ctx)
        start = max(input.offset or 1, 1)
        limit = input.limit or DEFAULT_LIMIT
        # A small regular file reads faster than a hop to a worker thread.
        small = _read_small(path, start, limit, decided)
        if small is not None:
            return small
        # A slow or huge file: in a thread that the call's timeout and Ctrl-C abandon.
        return await run_blocking(partial(_read, Path(path), start, limit, decided))

    def run_now(self, input: ReadParams, ctx: ToolContext) -> ToolOutput | None:
        """:meth:`run` for a file read at once (a small regular one), without a coroutine;
        None, having read nothing, when :meth:`run` has to be awaited (a large file, a
        FIFO, one that does not open: its error is worded, and maybe retried, there)."""
        path = ctx.resolve_text(input.file_path, "file_path")
        decided = decided_real(path, ctx)
        return _read_small(path, max(input.offset or 1, 1), input.limit or DEFAULT_LIMIT,
                           decided, at_once=True)


def _check(path: Path | str, fd: int, decided: str | None) -> None:
    """The file opened must be the file decided on (no symlink swapped in since)."""
    actual = opened_elsewhere(fd, decided)
    if actual is not None:
        raise TargetChangedError(
            f"{path}: target changed after the decision (it led to {decided}, now to {actual})"
        )


def _read_small(
    path: str, start: int, limit: int, decided: str | None = None, *, at_once: bool = False
) -> ToolOutput | None:
    """_read for a regular file small enough to take in one read(): the same output, with
    one open, fstat and read; None for anything else (a large file, a FIFO, a device),
    which _read takes in a worker thread. ``at_once``: None too for a file that does not
    open (else _read words the error here)."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it goes to _read)
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        if at_once:
            return None
        return _read(Path(path), start, limit, decided)  # the slow path words the error
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > INLINE_BYTES:
            return None
        _check(path, fd, decided)
        data = os.read(fd, st.st_size + 1)
        if len(data) > st.st_size:  # it grew since: read it to the end, as _read would
            data += b"".join(iter(partial(os.read, fd, INLINE_BYTES), b""))
    finally:
        os.close(fd)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise ToolError(f"{path} is a binary file; Read shows text files only")
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":
        raw_lines.pop()
    end = start - 1 + limit
    out: list[str] = []
    truncated_lines = 0
    for n, raw in enumerate(raw_lines[start - 1 : end], start=start):
        line = raw.removesuffix(b"\r").decode("utf-8", "replace")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + TRUNCATION_MARK
            truncated_lines += 1
        out.append(f"{n:>6}\t{line}")
    if not out and start > 1:
        raise ToolError(f"offset {start} is beyond the end of {path} ({len(raw_lines)} lines)")
    return _output(path, out, start, len(raw_lines) > end, truncated_lines)


def _output(
    path: Path | str, out: list[str], start: int, more: bool, truncated_lines: int
) -> ToolOutput:
    return ToolOutput(
        "\n".join(out),
        metadata={
            "path": str(path),
            "start_line": start,
            "lines": len(out),
            "more": more,
            "truncated_lines": truncated_lines,
        },
    )


def _read(path: Path, start: int, limit: int, decided: str | None = None) -> ToolOutput:
    if path.is_dir():
        raise ToolError(f"{path} is a directory, use LS to list it")
    try:
        # O_NONBLOCK: a FIFO opens without waiting for a writer, and is refused below
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ToolError(f"{path} does not exist") from None
    try:
        kind = not_regular(os.fstat(fd))
        if kind is not None:  # a FIFO, a device, a socket: a read may never end
            raise ToolError(f"{path} is not a regular file ({kind}); Read reads files only")
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    out: list[str] = []
    truncated_lines = 0
    more = False
    seen = 0
    with f:
        _check(path, f.fileno(), decided)
        if b"\0" in f.read(BINARY_SNIFF_BYTES):
            raise ToolError(f"{path} is a binary file; Read shows text files only")
        f.seek(0)
        for seen, raw in enumerate(f, start=1):
            if seen < start:
                continue
            if len(out) == limit:
                more = True
                break
            line = raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "replace")
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + TRUNCATION_MARK
                truncated_lines += 1
            out.append(f"{seen:>6}\t{line}")
    if not out and start > 1:
        raise ToolError(f"offset {start} is beyond the end of {path} ({seen} lines)")
    return _output(path, out, start, more, truncated_lines)


#: the pydantic model (schemas, messages), imported with pydantic on first use
__getattr__ = pydantic_models("ReadInput")
