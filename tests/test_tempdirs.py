"""A run's temporary folders are named for their process; the next run removes those of
processes gone (``toolrun.tempdirs``), and nothing else."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolrun.tempdirs import new_folder, sweep

PREFIX = "toolrun-test-"
ours = pytest.mark.skipif(not Path("/proc/self/ns/pid").exists(), reason="no /proc here")


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temporary folder of this test alone."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    yield tmp_path


def owner_of(folder: Path) -> list[str]:
    return folder.name[len(PREFIX) :].partition("-")[0].split(".")


def made_by_a_killed_process(tmp: Path) -> Path:
    """The folder a process made before it was killed (SIGKILL: no exit handler ran)."""
    code = (
        "import sys, tempfile, time; tempfile.tempdir = sys.argv[1]\n"
        "from toolrun.tempdirs import new_folder\n"
        f"folder = new_folder({PREFIX!r}); (folder / 'note').write_text('secret')\n"
        "print(folder, flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp)], stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().strip())
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    return folder


@ours
def test_a_folder_is_named_for_this_process(tmp: Path) -> None:
    folder = new_folder(PREFIX)
    pid, start, namespace = owner_of(folder)
    assert folder.parent == tmp and folder.is_dir()
    assert int(pid, 16) == os.getpid() and int(start, 16) > 0
    assert os.readlink("/proc/self/ns/pid") == f"pid:[{int(namespace, 16)}]"


@ours
def test_the_folder_of_a_killed_process_goes_when_the_next_one_is_made(tmp: Path) -> None:
    left = made_by_a_killed_process(tmp)
    assert (left / "note").read_text() == "secret"  # nobody removed it at its end

    mine = new_folder(PREFIX)

    assert not left.exists()
    assert sorted(tmp.iterdir()) == [mine]


@ours
def test_the_folder_of_a_running_process_stays(tmp: Path) -> None:
    first = new_folder(PREFIX)
    second = new_folder(PREFIX)  # (the same process: still running)
    assert first.is_dir() and second.is_dir()


@ours
def test_a_pid_used_again_by_another_process_does_not_keep_a_folder(tmp: Path) -> None:
    # this test's own pid, but another start time: the process that made it is gone
    pid, start, namespace = owner_of(new_folder(PREFIX))
    reused = tmp / f"{PREFIX}{pid}.{start}0.{namespace}-abc"  # (16 times later)
    reused.mkdir()
    new_folder(PREFIX)
    assert not reused.exists()


@ours
def test_only_folders_of_this_user_namespace_and_kind_are_judged(tmp: Path) -> None:
    gone = made_by_a_killed_process(tmp)
    pid, start, namespace = owner_of(gone)
    elsewhere = tmp / f"{PREFIX}{pid}.{start}.{namespace}0-abc"  # another PID namespace
    other_kind = tmp / f"toolrun-other-{pid}.{start}.{namespace}-abc"
    unnamed = tmp / f"{PREFIX}abc123"  # made before folders were named
    a_file = tmp / f"{PREFIX}{pid}.{start}.{namespace}-file"
    target = tmp / "kept"
    target.mkdir()
    a_link = tmp / f"{PREFIX}{pid}.{start}.{namespace}-link"
    for folder in (elsewhere, other_kind, unnamed):
        folder.mkdir()
    a_file.write_text("x")
    a_link.symlink_to(target)

    removed = sweep(PREFIX)

    assert removed == [str(gone)]
    for kept in (elsewhere, other_kind, unnamed, a_file, a_link, target):
        assert kept.exists() or kept.is_symlink(), kept
