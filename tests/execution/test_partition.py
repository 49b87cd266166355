from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from toolrun.execution.partition import Run, partition


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
