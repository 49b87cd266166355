from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolrun.execution.partition import Grouping, Run, partition


def safe(name: str) -> bool:
    return name.startswith("r")


def test_consecutive_safe_calls_share_a_run_and_others_run_alone() -> None:
    runs = partition(["r1", "r2", "w1", "r3", "w2", "w3", "r4", "r5"], safe)
    assert runs == [
        Run("concurrent", ("r1", "r2")),
        Run("exclusive", ("w1",)),
        Run("concurrent", ("r3",)),
        Run("exclusive", ("w2",)),
        Run("exclusive", ("w3",)),
        Run("concurrent", ("r4", "r5")),
    ]


def test_empty_turn() -> None:
    assert partition([], safe) == []


def test_a_safety_check_that_raises_counts_as_exclusive() -> None:
    def flaky(name: str) -> bool:
        if name == "boom":
            raise ValueError("cannot parse")
        return True

    assert partition(["a", "boom", "b"], flaky) == [
        Run("concurrent", ("a",)),
        Run("exclusive", ("boom",)),
        Run("concurrent", ("b",)),
    ]


calls = st.lists(st.tuples(st.integers(0, 10_000), st.booleans()), max_size=60)


@given(calls)
def test_every_call_appears_once_in_order(items: list[tuple[int, bool]]) -> None:
    runs = partition(items, lambda c: c[1])
    flat = [c for run in runs for c in run.calls]
    assert flat == items


@given(calls)
def test_no_run_mixes_an_exclusive_call_with_anything(items: list[tuple[int, bool]]) -> None:
    for run in partition(items, lambda c: c[1]):
        if run.kind == "exclusive":
            assert len(run.calls) == 1 and not run.calls[0][1]
        else:
            assert run.calls and all(c[1] for c in run.calls)


@given(calls)
def test_concurrent_runs_are_maximal(items: list[tuple[int, bool]]) -> None:
    runs = partition(items, lambda c: c[1])
    for a, b in itertools.pairwise(runs):
        assert not (a.kind == "concurrent" and b.kind == "concurrent")


def test_a_call_that_moves_the_working_directory_ends_its_concurrent_run() -> None:
    def moves(name: str) -> bool:
        return name.startswith("rcd")

    assert partition(["r1", "rcd", "r2", "r3", "w1", "rcd2"], safe, moves) == [
        Run("concurrent", ("r1", "rcd")),
        Run("concurrent", ("r2", "r3")),
        Run("exclusive", ("w1",)),
        Run("concurrent", ("rcd2",)),
    ]


def test_when_it_cannot_tell_whether_a_call_moves_it_assumes_so() -> None:
    def unsure(name: str) -> bool:
        raise ValueError(name)

    assert partition(["r1", "r2"], safe, unsure) == [
        Run("concurrent", ("r1",)),
        Run("concurrent", ("r2",)),
    ]


def taken(grouping: Grouping[Any]) -> list[Run[Any]]:
    """Every run of a Grouping, taken as exec's workers take them."""
    runs: list[Run[Any]] = []
    while (first := grouping.start()) is not None:
        kind, call = first
        group = [call]
        if kind == "concurrent":
            while (more := grouping.more()) is not None:
                group.append(more)
        runs.append(Run(kind, tuple(group)))
    return runs


# a call: (its number, safe, ends its run, asking whether it is safe raises, asking
# whether it ends its run raises)
flagged = st.lists(
    st.tuples(st.integers(0, 10_000), st.booleans(), st.booleans(), st.booleans(), st.booleans()),
    max_size=40,
)


@given(flagged)
def test_runs_taken_one_call_at_a_time_are_partitions_runs(items: list[Any]) -> None:
    """exec starts a concurrent run's first calls before the rest are grouped: the runs it
    gets that way are exactly partition's, each question asked once a call, in order."""
    asked: list[tuple[str, int]] = []

    def is_safe(call: Any) -> bool:
        asked.append(("safe", call[0]))
        if call[3]:
            raise ValueError("cannot tell")
        return bool(call[1])

    def ends_run(call: Any) -> bool:
        asked.append(("ends", call[0]))
        if call[4]:
            raise ValueError("cannot tell")
        return bool(call[2])

    expected = partition(items, is_safe, ends_run)
    once = list(asked)
    asked.clear()
    assert taken(Grouping(items, is_safe, ends_run)) == expected
    assert asked == once


def test_the_calls_not_taken_are_the_rest_of_the_turn() -> None:
    grouping = Grouping(["r1", "r2", "w1", "r3"], safe)
    assert grouping.start() == ("concurrent", "r1")
    assert grouping.rest() == ["r2", "w1", "r3"]
    assert grouping.start() is None and grouping.more() is None and grouping.rest() == []


def test_a_run_found_ended_leaves_the_next_call_to_the_next_run() -> None:
    grouping = Grouping(["r1", "w1", "r2"], safe)
    assert grouping.start() == ("concurrent", "r1")
    assert grouping.more() is None
    assert grouping.more() is None  # (asked again: still ended)
    assert grouping.start() == ("exclusive", "w1")
    assert grouping.start() == ("concurrent", "r2")
    assert grouping.more() is None
    assert grouping.start() is None
