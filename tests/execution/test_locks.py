from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from toolrun.execution.locks import FileLocks, LockError, canonical_path, default_lock_dir

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


def _edit_plan(path: Path, tag: str, count: int) -> None:
    calls = [
        {"tool": "Edit", "input": {"file_path": "shared.txt", "old_string": f"{tag}{i:03}\n",
                                   "new_string": f"{tag.lower()}{i:03}\n"}}
        for i in range(count)
    ]
    turns = [{"calls": calls[i : i + 50]} for i in range(0, count, 50)]  # 64 calls a turn at most
    path.write_text(json.dumps({"turns": turns}))


def test_two_toolrun_processes_editing_one_file_lose_no_edit(tmp_path: Path) -> None:
    """Each process reads the file under a lock the other respects, so 400 edits stay 400."""
    ws = tmp_path / "ws"
    ws.mkdir()
    count = 200
    shared = ws / "shared.txt"
    shared.write_text("".join(f"{tag}{i:03}\n" for tag in "AB" for i in range(count)))
    _edit_plan(ws / "a.json", "A", count)
    _edit_plan(ws / "b.json", "B", count)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    env["TOOLRUN_LOCK_DIR"] = str(tmp_path / "locks")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "toolrun", "exec", plan, "--workspace", str(ws),
             "--mode", "acceptEdits", "--format", "jsonl"],
            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for plan in ("a.json", "b.json")
    ]
    outputs = [p.communicate(timeout=300) for p in procs]

    for (out, err), proc in zip(outputs, procs, strict=True):
        statuses = [json.loads(line)["status"] for line in out.splitlines()]
        assert statuses == ["ok"] * count, err
        assert proc.returncode == 0
    assert shared.read_text() == "".join(f"{tag}{i:03}\n" for tag in "ab" for i in range(count))


HOLDER = (
    "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
    "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()"
)


def _hold(lock_file: Path) -> subprocess.Popen[str]:
    """Another process holding ``lock_file`` until its stdin closes."""
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(lock_file)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


async def test_another_process_holding_the_lock_makes_the_writer_wait(tmp_path: Path) -> None:
    locks = FileLocks(tmp_path / "locks")
    target = tmp_path / "f.txt"
    async with locks.hold([target]):
        pass  # creates the lock folder and file
    holder = _hold(next((tmp_path / "locks").iterdir()))
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline() == "held\n"
    entered = anyio.Event()

    async def writer() -> None:
        async with locks.hold([target]):
            entered.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer)
        for _ in range(50):
            await anyio.sleep(0.005)
        assert not entered.is_set()  # still waiting: the other process holds the lock
        holder.stdin.close()
        holder.wait()
    holder.stdout.close()
    assert entered.is_set()


def test_the_lock_folder_must_be_private(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    locks = FileLocks(shared)

    async def take() -> None:
        async with locks.hold([tmp_path / "x"]):
            pass

    with pytest.raises(LockError, match="not private"):
        anyio.run(take)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    with pytest.raises(LockError, match="Not a directory"):  # a symlink is not followed
        anyio.run(FileLocks(link).hold([tmp_path / "x"]).__aenter__)


def test_a_write_whose_lock_cannot_be_taken_fails_and_writes_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could plant or hold lock files here
    (ws / "p.json").write_text(json.dumps(
        {"calls": [{"tool": "Write", "input": {"file_path": "f.txt", "content": "x"}}]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    env["TOOLRUN_LOCK_DIR"] = str(shared)
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "exec", "p.json", "--workspace", str(ws),
         "--mode", "acceptEdits", "--format", "jsonl"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=120, check=False,
    )

    (result,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert result["status"] == "error"
    assert "not private" in result["error"]
    assert done.returncode == 1
    assert not (ws / "f.txt").exists()


def test_where_the_locks_live(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TOOLRUN_LOCK_DIR", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert default_lock_dir().name == f"toolrun-locks-{os.geteuid()}"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert default_lock_dir() == tmp_path / "toolrun-locks"
    monkeypatch.setenv("TOOLRUN_LOCK_DIR", str(tmp_path / "mine"))
    assert default_lock_dir() == tmp_path / "mine"
