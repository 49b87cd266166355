from __future__ import annotations

import os
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from toolrun.execution.locks import FileLocks, canonical_path

pytestmark = pytest.mark.anyio


def test_canonical_path_resolves_symlinks_on_the_existing_prefix(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert (
        canonical_path(tmp_path / "link" / "new" / "file.txt")
        == real.resolve() / "new" / "file.txt"
    )
    assert canonical_path(tmp_path / "link" / ".." / "x") == tmp_path.resolve() / "x"
    (real / "f").write_text("x")
    os.symlink(real / "f", tmp_path / "f-link")
    assert canonical_path(tmp_path / "f-link") == (real / "f").resolve()


def test_a_symlink_loop_does_not_hang(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert canonical_path(tmp_path / "a").name in ("a", "b")


async def test_writes_through_a_symlink_and_the_real_path_never_overlap(tmp_path: Path) -> None:
    real = tmp_path / "data.txt"
    real.write_text("")
    link = tmp_path / "alias.txt"
    link.symlink_to(real)
    locks = FileLocks()
    inside = 0
    overlaps = 0
    order: list[str] = []

    async def writer(path: Path, tag: str) -> None:
        nonlocal inside, overlaps
        for i in range(5):
            async with locks.hold([path]):
                inside += 1
                overlaps += inside > 1
                with real.open("a") as fh:
                    fh.write(f"{tag}{i}\n")
                await anyio.sleep(0.002)
                order.append(tag)
                inside -= 1

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer, link, "L")
        tg.start_soon(writer, real, "R")
    assert overlaps == 0
    assert len(real.read_text().splitlines()) == 10
    assert len(locks) == 0  # nothing left behind


async def test_multi_path_locks_take_one_sorted_order_without_deadlock(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    locks = FileLocks()
    done: list[str] = []

    async def both(first: Path, second: Path, tag: str) -> None:
        for _ in range(20):
            async with locks.hold([first, second]) as keys:
                assert list(keys) == sorted(keys, key=str)
                await anyio.lowlevel.checkpoint()
        done.append(tag)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(both, a, b, "ab")
            tg.start_soon(both, b, a, "ba")
    assert sorted(done) == ["ab", "ba"]


async def test_cancelled_waiter_leaves_no_lock_behind(tmp_path: Path) -> None:
    locks = FileLocks()
    path = tmp_path / "x"

    async def waiter() -> None:
        with anyio.move_on_after(0.05):
            async with locks.hold([path]):
                pytest.fail("acquired a held lock")

    async with locks.hold([path]), anyio.create_task_group() as tg:
        tg.start_soon(waiter)
    assert len(locks) == 0
