"""``check --shard K/N``: a stable split of the inputs, so N CI jobs check one corpus.

An input belongs to shard ``sha256(name) mod N + 1``, where the name is what the report
shows (the path relative to the working directory, or the pattern that matched nothing).
The hash is sha256, not Python's ``hash``: every job of a matrix, on any machine or Python,
puts each input in the same shard, so the shards cover the corpus exactly once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

_SPEC = re.compile(r"([0-9]{1,6})/([0-9]{1,6})")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``; after selection, where its inputs were.

    ``total`` and ``inputs_digest`` describe the whole expansion of the inputs (every
    shard sees the same), ``positions`` the place of each of this shard's inputs in it:
    what a merge needs to rebuild the unsharded order and to tell shards of another
    corpus apart.
    """

    index: int
    count: int
    total: int = 0
    inputs_digest: str = ""
    positions: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"2/4"`` → Shard(2, 4); ValueError saying what is wrong otherwise."""
    match = _SPEC.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not K/N (for example 1/4)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"{text!r}: K must be between 1 and N (N at least 1)")
    return Shard(index, count)


def shard_of(name: str, count: int) -> int:
    """The 1-based shard an input named ``name`` belongs to, among ``count``."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def select(names: Sequence[str], items: Sequence[T], shard: Shard) -> tuple[Shard, list[T]]:
    """The items whose name falls in ``shard``, and the shard filled in with where they were."""
    positions = [i for i, name in enumerate(names) if shard_of(name, shard.count) == shard.index]
    filled = Shard(
        shard.index,
        shard.count,
        total=len(names),
        inputs_digest=names_digest(names),
        positions=tuple(positions),
    )
    return filled, [items[i] for i in positions]


def names_digest(names: Sequence[str]) -> str:
    """One sha256 of the whole list of inputs (in order): equal for every shard of a run."""
    h = hashlib.sha256()
    for name in names:
        h.update(name.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


def files_digest(files: Sequence[tuple[str, Path]]) -> str:
    """One sha256 of the config files' shown names and bytes: shards decided under other
    rules cannot be merged as one check (an unreadable file counts by its name alone)."""
    h = hashlib.sha256()
    for shown, file in files:
        h.update(shown.encode("utf-8", "surrogateescape") + b"\0")
        try:
            h.update(file.read_bytes())
        except OSError:
            h.update(b"\0unreadable")
        h.update(b"\0")
    return h.hexdigest()
