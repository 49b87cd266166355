"""The Python Grep engine's matching: files read a chunk at a time, lines matched with ``re``.

Run in a process of its own (``python -I -S _grep_scan.py``, the standard library only,
nothing of toolrun imported): ``re`` holds the GIL for as long as one match takes, and a
pattern such as ``(a+)+$`` on a long line of ``a`` takes for ever, so in toolrun's own
process it froze everything (the call's timeout, Ctrl-C, the other calls). A process can
be killed: the call's timeout and a signal end it (:mod:`toolrun.reaper` starts it, so it
also ends with toolrun, however toolrun ends).

Files are never read whole: a line is searched as it comes (a 4 GB file costs a chunk),
and a file that holds a NUL byte is skipped when it was not named directly (ripgrep's
binary files), as soon as the NUL is seen. A line longer than :data:`MAX_TEXT_BYTES` (in
multiline mode: a file) is searched in its first :data:`MAX_TEXT_BYTES` only, and counted
(``cut``) for the output to say so.

Protocol: the request as JSON on stdin (``pattern``, ``ignore_case``, ``multiline``,
``before``, ``after``, ``first_match_only``, ``explicit``, ``paths``); on stdout one JSON
line per file with hits, ``[path, [[number, text, is_match], ...]]``, then ``{"cut": N}``.
"""

from __future__ import annotations

import bisect
import collections
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from typing import Any

#: The most of one line (multiline: of one file) that is searched.
MAX_TEXT_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 1 << 20
BOM = b"\xef\xbb\xbf"

#: line number -> (text, is_match)
Found = dict[int, tuple[str, bool]]


class _Binary(Exception):
    """A NUL byte in a file that was not named directly: it is skipped."""


class Scan:
    def __init__(self, request: dict[str, Any]) -> None:
        flags = re.IGNORECASE if request.get("ignore_case") else 0
        self.multiline = bool(request.get("multiline"))
        if self.multiline:
            flags |= re.MULTILINE | re.DOTALL
        self.regex = re.compile(request["pattern"], flags)
        self.before = int(request.get("before") or 0)
        self.after = int(request.get("after") or 0)
        self.first_only = bool(request.get("first_match_only"))
        self.explicit = bool(request.get("explicit"))
        self.cut = 0  # lines (multiline: files) searched in their first MAX_TEXT_BYTES only

    def file(self, path: str) -> Found:
        """The hits of one file (nothing for one that does not open or is binary)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return {}
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO: a read may never end
                return {}
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", buffering=0) as f:
                fd = -1
                if self.multiline:
                    return self._whole(f)
                return self._lines(f)
        except (_Binary, OSError):
            return {}
        finally:
            if fd >= 0:
                os.close(fd)

    def _chunks(self, f: Any) -> Iterator[bytes]:
        first = True
        while chunk := f.read(CHUNK_BYTES):
            if first:
                chunk = chunk.removeprefix(BOM)  # as "utf-8-sig" decodes
                first = False
            if not self.explicit and b"\0" in chunk:
                raise _Binary
            yield chunk

    def _raw_lines(self, f: Any) -> Iterator[bytes]:
        """The lines without their ``\\n``, each cut at MAX_TEXT_BYTES; no empty line
        after a final newline."""
        tail = bytearray()
        cutting = False  # past MAX_TEXT_BYTES of the current line: skip to its end
        for chunk in self._chunks(f):
            view, start = memoryview(chunk), 0
            while True:
                newline = chunk.find(b"\n", start)
                if not cutting:  # (a line being cut costs no copy of its rest)
                    end = len(chunk) if newline < 0 else newline
                    room = MAX_TEXT_BYTES - len(tail)
                    if end - start > room:
                        end, cutting = start + room, True
                        self.cut += 1
                    tail += view[start:end]
                if newline < 0:
                    break
                yield bytes(tail)
                tail.clear()
                cutting = False
                start = newline + 1
        if tail or cutting:
            yield bytes(tail)

    def _lines(self, f: Any) -> Found:
        found: Found = {}
        search = self.regex.search
        before: collections.deque[tuple[int, str]] = collections.deque(maxlen=self.before or 1)
        after_left = 0
        matched = False
        number = 0
        for number, raw in enumerate(self._raw_lines(f), start=1):
            if matched and self.first_only:
                if self.explicit:
                    break
                continue  # only the NUL check remains (the whole file is read for it)
            line = raw.decode("utf-8", "replace")
            if search(line):
                matched = True
                for n, text in before if self.before else ():
                    found.setdefault(n, (text, False))
                found[number] = (line, True)
                after_left = self.after
            elif after_left:
                found.setdefault(number, (line, False))
                after_left -= 1
            if self.before:
                before.append((number, line))
        return found if matched else {}

    def _whole(self, f: Any) -> Found:
        data = bytearray()
        for chunk in self._chunks(f):
            room = MAX_TEXT_BYTES - len(data)
            if len(chunk) > room:
                data += chunk[:room]
                self.cut += 1
                if not self.explicit:  # the rest is read for the NUL check only
                    for _ in self._chunks(f):
                        pass
                break
            data += chunk
        text = data.decode("utf-8", "replace")
        lines = _split_lines(text)
        touched = _multiline_matches(self.regex, text)
        if self.first_only:
            touched = touched[:1]
        found: Found = {n: (lines[n - 1], True) for n in touched}
        for n in touched:
            for c in range(max(1, n - self.before), min(len(lines), n + self.after) + 1):
                found.setdefault(c, (lines[c - 1], False))
        return found


def _split_lines(text: str) -> list[str]:
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def _multiline_matches(regex: re.Pattern[str], text: str) -> list[int]:
    """Every line that a match touches (1-based, sorted)."""
    if not text:
        return []
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    touched: set[int] = set()
    for m in regex.finditer(text):
        if m.start() == len(text) and text.endswith("\n"):
            continue  # the empty "line" after the final newline is not a line
        first = bisect.bisect_right(starts, m.start())
        last = bisect.bisect_right(starts, m.end() - 1) if m.end() > m.start() else first
        touched.update(range(first, last + 1))
    return sorted(touched)


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    scan = Scan(request)
    out = sys.stdout
    for path in request["paths"]:
        found = scan.file(path)
        if found:
            lines = [[n, text, hit] for n, (text, hit) in sorted(found.items())]
            out.write(json.dumps([path, lines]) + "\n")
    out.write(json.dumps({"cut": scan.cut}) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
