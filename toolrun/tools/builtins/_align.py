"""Line alignment for file diffs, bounded in time and memory whatever the files hold.

``difflib.SequenceMatcher`` (``autojunk=False``) is cubic on lines that repeat: a
one-token edit in 200 KB of identical lines took 32 s. Here:

1. the common head and tail of the two texts are found by comparing characters in
   chunks (C speed, no line list), then backed off to whole lines; only the part that
   differs, with ``CONTEXT`` lines around it, is split into lines, so an edit in a
   150 MB file costs one pass over it and a few lines of memory;
2. that part is aligned with Myers' O(ND) algorithm (N lines, D the lines that differ),
   which a run of identical lines does not slow down, within ``MAX_ALIGN_STEPS`` steps;
3. past the budget, the part is given as one change (every old line removed, every new
   line added): a correct diff, not the shortest, and said to be so (``minimal``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CONTEXT = 3  # lines of context around each change, as `diff -u` and Claude Code use
#: the most steps (diagonals tried plus lines compared) Myers may take: about 0.2 s here
MAX_ALIGN_STEPS = 300_000
_CHUNK = 1 << 16
# line breaks str.splitlines knows besides \n and \r
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

Change = tuple[int, int, int, int]  # old lines [i1, i2) became new lines [j1, j2)


@dataclass(frozen=True, slots=True)
class Window:
    """The lines of each text around where they differ, and where they start."""

    old_start: int  # the line number (0-based) of old_lines[0]; the same in the new text
    old_lines: list[str]
    new_lines: list[str]


@dataclass(frozen=True, slots=True)
class Alignment:
    window: Window
    changes: list[Change]  # within the window, in order
    minimal: bool  # False: the budget ran out, the changed part is one change


def align(old: str, new: str) -> Alignment:
    window = _window(old, new)
    a, b = window.old_lines, window.new_lines
    changes = _myers(a, b, MAX_ALIGN_STEPS)
    if changes is None:
        head, tail = _common_lines(a, b)
        return Alignment(window, [(head, len(a) - tail, head, len(b) - tail)], minimal=False)
    return Alignment(window, changes, minimal=True)


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    at = 0
    while at < limit and a[at : at + _CHUNK] == b[at : at + _CHUNK]:
        at += _CHUNK
    end = min(at + _CHUNK, limit)
    while at < end and a[at] == b[at]:
        at += 1
    return min(at, limit)


def _common_suffix(a: str, b: str, limit: int) -> int:
    """How many characters ``a`` and ``b`` end with in common (at most ``limit``)."""
    n, m, back = len(a), len(b), 0
    while back < limit:
        size = min(_CHUNK, limit - back)
        if a[n - back - size : n - back] != b[m - back - size : m - back]:
            break
        back += size
    while back < limit and a[n - back - 1] == b[m - back - 1]:
        back += 1
    return back


def _line_starts_before(text: str, at: int, lines: int) -> int:
    """A line start at or before ``at``, ``lines`` line breaks (\\n) back (0 at the top)."""
    for _ in range(lines + 1):
        if at <= 0:
            return 0
        at = text.rfind("\n", 0, at)
        if at < 0:
            return 0
    return at + 1


def _line_start_after(text: str, at: int, lines: int) -> int:
    """A line start (just after a \\n) at or after ``at``, then ``lines`` more lines on
    (the text's end when it has no more)."""
    for _ in range(lines + 1):
        found = text.find("\n", at)
        if found < 0:
            return len(text)
        at = found + 1
    return at


def count_lines(text: str, end: int) -> int:
    """How many lines ``str.splitlines`` finds in ``text[:end]`` (``end`` a line start)."""
    # (str.find of one character is a memchr: far faster than a regex class here)
    if any(text.find(c, 0, end) >= 0 for c in _OTHER_BREAKS):
        return len(text[:end].splitlines())
    return text.count("\n", 0, end) + text.count("\r", 0, end) - text.count("\r\n", 0, end)


def _window(old: str, new: str) -> Window:
    head = _common_prefix(old, new)
    tail = _common_suffix(old, new, min(len(old), len(new)) - head)
    # cut at \n only: a position just after one starts a line in both texts (it cannot be
    # the first half of \r\n), so the lines outside the window are the same lines in both
    start = _line_starts_before(old, head, CONTEXT)
    old_end = _line_start_after(old, len(old) - tail, CONTEXT) if tail else len(old)
    shift = len(new) - len(old)
    new_end = old_end + shift if old_end < len(old) else len(new)
    if old_end + shift < start:  # (the tail is all context: keep both ends whole)
        old_end, new_end = len(old), len(new)
    return Window(
        count_lines(old, start), old[start:old_end].splitlines(), new[start:new_end].splitlines()
    )


def _common_lines(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _myers(a: Sequence[str], b: Sequence[str], budget: int) -> list[Change] | None:
    """The changes of a shortest edit script from ``a`` to ``b`` (each run of removed
    and added lines between two equal ones is one change), or None past ``budget``."""
    head, tail = _common_lines(a, b)
    ids: dict[str, int] = {}
    x_lines = [ids.setdefault(line, len(ids)) for line in a[head : len(a) - tail]]
    y_lines = [ids.setdefault(line, len(ids)) for line in b[head : len(b) - tail]]
    n, m = len(x_lines), len(y_lines)
    if n == 0 or m == 0:
        return [(head, head + n, head, head + m)] if n or m else []
    offset = n + m + 1
    v = [0] * (2 * offset + 1)
    trace: list[list[int]] = []  # v's diagonals -d..d after each d: O(D^2), within budget
    steps = 0
    found = -1
    for d in range(n + m + 1):
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]  # down: a line of b added
            else:
                x = v[offset + k - 1] + 1  # right: a line of a removed
            y = x - k
            start = x
            while x < n and y < m and x_lines[x] == y_lines[y]:
                x += 1
                y += 1
            v[offset + k] = x
            steps += 1 + x - start
            if x >= n and y >= m:
                found = d
                break
        trace.append(v[offset - d : offset + d + 1])
        if found >= 0:
            break
        steps += d
        if steps > budget:
            return None
    return _changes(trace, n, m, head)


def _changes(trace: list[list[int]], n: int, m: int, shift: int) -> list[Change]:
    """Walk the trace back from (n, m): the single moves, merged into changes between
    runs of equal lines."""
    x, y = n, m
    moves: list[tuple[int, int, bool]] = []  # (x, y) a move starts from, removal?; last first
    for d in range(len(trace) - 1, 0, -1):
        prev = trace[d - 1]  # diagonals -(d-1)..(d-1), diagonal k at index k + d - 1
        k = x - y
        added = k == -d or (k != d and prev[k - 1 + d - 1] < prev[k + 1 + d - 1])
        k_prev = k + 1 if added else k - 1
        x = prev[k_prev + d - 1]
        y = x - k_prev
        moves.append((x, y, not added))
    changes: list[Change] = []
    for x, y, removed in reversed(moves):
        i1, j1 = x + shift, y + shift
        i2, j2 = (i1 + 1, j1) if removed else (i1, j1 + 1)
        if changes and changes[-1][1] == i1 and changes[-1][3] == j1:
            changes[-1] = (changes[-1][0], i2, changes[-1][2], j2)
        else:
            changes.append((i1, i2, j1, j2))
    return changes
