"""A command's output as a result shows it: the head and the tail, the whole kept aside.

The display keeps the first and the last :data:`KEEP_BYTES` bytes. Memory stays at
that however much a command prints: the rest is streamed to the call's stored output
(:mod:`toolrun.stored`) when the journal is on, and only counted when it is
off. Nothing touches the disk until the output outgrows the display: up to then, head
and tail together are the whole output, so the spill starts with them.
:func:`store_whole` keeps the text of a tool that has it all at once and shows a part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolrun.stored import OutputStore, Spill

#: Output shown: this many bytes from the start and this many from the end.
KEEP_BYTES = 512 * 1024
_CHUNK = 1024 * 1024


@dataclass(slots=True)
class Capture:
    """Merged output: the head and the tail for the display, all of it to ``store``."""

    store: OutputStore | None = None
    keep: int = KEEP_BYTES
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0
    _spill: Spill | None = None
    _spilling: bool = False

    def add(self, chunk: bytes) -> None:
        if self._spill is not None:
            self._spill.write(chunk)
        elif (
            not self._spilling
            and self.store is not None
            and len(self.head) + len(self.tail) + len(chunk) > 2 * self.keep
        ):
            self._spilling = True  # once: a spill that cannot open is not retried
            self._spill = self.store.open()
            for part in (self.head, self.tail, chunk):
                self._spill.write(bytes(part))
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.keep:
            extra = len(self.tail) - self.keep
            del self.tail[:extra]
            self.dropped += extra

    def close(self) -> None:
        """The call is over (done, timed out or cancelled): keep what was printed."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def text(self) -> str:
        middle = ""
        if self.dropped:
            middle = f"\n[... {self.dropped} bytes of output omitted{self._where()} ...]\n"
        return _decode(self.head) + middle + _decode(self.tail)

    def _where(self) -> str:
        return stored_note(self.store)


def stored_note(store: OutputStore | None) -> str:
    """``; all of it is stored: toolrun show RUN EXEC --full`` when ``store`` holds the
    call's whole output (the first part, when it was cut), else nothing."""
    if store is None or store.stored is None:
        return ""
    whole = "the first part" if store.stored.truncated_at is not None else "all of it"
    return f"; {whole} is stored: toolrun show {store.run_id} {store.execution_id} --full"


def store_whole(store: OutputStore | None, text: str) -> str:
    """Keep ``text`` whole in ``store``, for a tool that shows only part of it: the note
    that says where it is (:func:`stored_note`)."""
    if store is None:
        return ""
    data = text.encode("utf-8", "surrogateescape")
    spill = store.open()
    for start in range(0, len(data), _CHUNK):
        spill.write(data[start : start + _CHUNK])
    spill.close()
    return stored_note(store)


def _decode(data: bytearray) -> str:
    return data.decode("utf-8", "backslashreplace")
