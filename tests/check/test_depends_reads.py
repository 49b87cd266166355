"""What a decision read, sorted into the paths whose writes may change it (``reads_of``)."""

from __future__ import annotations

import itertools

from toolrun.execution.depends import _holders, _holds, reads_of, searches_of

PATHS = ["/", "//", "/w", "/w/", "/w//", "/wx", "/w/s", "/w/s/", "/w/s/t", "/w/st", "/v",
         "/w/s/..", "/x/../w", "w", ""]  # fmt: skip
ANCHORS = ["/", "/w", "/w/", "/w/s", "/w//s", "/w/./s", "/x/../w", "/w/s/t"]


def test_a_path_holds_an_anchor_by_the_sets_exactly_as_by_holds() -> None:
    """The two set lookups stand for ``any(_holds(p, a) for a in anchors)`` (issue 31:
    worked out for every allow of a later part of a split check), odd spellings too."""
    for n in (1, 2, 3):
        for anchors in itertools.permutations(ANCHORS, n):
            same, parents = _holders(anchors)
            for p in PATHS:
                held = p in same or p.rstrip("/") in parents
                assert held is any(_holds(p, a) for a in anchors), (p, anchors)


def _realpath(path: str) -> str:
    return path


def _glob(pattern: str) -> list[str]:
    return []


def _guarded_below(path: str) -> bool:
    return False


def _repository(path: str) -> None:
    return None


class _Resolved:
    """A value with the ``forms`` of a ResolvedPath."""

    def __init__(self, *forms: object) -> None:
        self.forms = forms


def _registered(name: str) -> bool:
    return True


_registered.__name__ = "registered"


LOG = [
    (_realpath, ("/w",), "/w"),  # the workspace itself: a line, no search of it
    (_realpath, ("/w/src/a.py",), "/w/src/a.py"),
    (_realpath, ("/w/src//b.py",), "/w/src/./b.py"),  # normalised, once
    (_glob, ("/w/src/",), []),
    (_guarded_below, ("/w/d",), False),
    (_repository, ("/w/sub", 3), None),
    (_realpath, ("relative",), None),  # no path in it: anything may change it
]


def test_what_a_decision_read_goes_where_its_writes_may_change_it() -> None:
    reads = reads_of(LOG, ["/w", "/w/sub"], extra=["/w/sub/x", "/"], repo="/w")
    assert set(reads.lines) == {"/w", "/"}
    assert set(reads.trees) == {"/w/src/a.py", "/w/src/b.py", "/w/src", "/w/d", "/", "/w/sub/x"}
    assert set(reads.repos) == {"/w", "/w/sub"}
    assert set(reads.searches) == {"/w/src", "/w/d", "/"}


def test_a_decision_s_searches_alone_are_those_of_all_it_read() -> None:
    """``searches_of`` (all that contents-only writes can meet) is ``reads_of``'s searches,
    in the same order, whatever the log holds (issue 31: worked out without a generator)."""
    log = [
        *LOG,
        (_realpath, ("rel",), _Resolved("also-rel", 3)),  # no path: "/"
        (_realpath, ("rel",), _Resolved("/w/r", "/w/r2")),  # a path, in its forms
        (_guarded_below, ("/w/g/", _Resolved("/w/g2")), True),
        (_guarded_below, ("rel",), None),  # a guarded walk of nothing placed: "/"
        (_glob, ("/",), []),
        (_registered, ("x",), True),  # the registry: never a read of the disk
        (_repository, ("/w",), None),
    ]
    for n in range(len(log) + 1):
        for part in (log[:n], log[n:], log[::-1][:n]):
            assert searches_of(part) == reads_of(part, ["/w"]).searches, part
