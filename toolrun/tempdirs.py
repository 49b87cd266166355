"""Temporary folders named for the process that made them, and those of processes gone.

A process removes its folders at exit, but a killed one (SIGKILL, the OOM killer, a
CI runner's timeout) cannot: its jail's private ``/tmp``, with whatever the commands
wrote there, would stay on the disk for good. So each folder's name says whose it is
(pid, the process's start time, its PID namespace, in hex: sockets live in some of these
folders, and a socket's path holds 107 bytes at most), and a process making a folder of a
kind first removes the folders of that kind whose process is gone. A pid used again by
another process has another start time; a folder of another PID namespace (a container
sharing ``/tmp``) is never judged, its pids mean nothing here. Only folders of this
user, named so, are touched; where ``/proc`` does not say (not Linux), names carry no
owner and nothing is swept.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path


def new_folder(prefix: str) -> Path:
    """A new folder ``<tmp>/<prefix><owner>-<random>``, after removing those of ``prefix``
    left by processes gone."""
    owner = _owner()
    if owner is None:
        return Path(tempfile.mkdtemp(prefix=prefix))
    sweep(prefix, owner=owner)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{owner}-"))


def sweep(prefix: str, folder: str | None = None, owner: str | None = None) -> list[str]:
    """Remove the folders of ``prefix`` in ``folder`` (the temporary folder) whose process
    is gone; the paths removed. (``owner``: this process's, when the caller has it.)"""
    owner = owner or _owner()
    if owner is None:
        return []
    namespace = owner.rpartition(".")[2]
    removed = []
    try:
        entries = list(os.scandir(folder or tempfile.gettempdir()))
    except OSError:
        return []
    uid = os.getuid()
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        parts = entry.name[len(prefix) :].partition("-")[0].split(".")
        if len(parts) != 3 or parts[2] != namespace or not _HEX.fullmatch(parts[0]):
            continue
        if _alive(int(parts[0], 16), parts[1]):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == uid:
            shutil.rmtree(entry.path, ignore_errors=True)  # (fd-based: no symlink followed)
            removed.append(entry.path)
    return removed


def _owner() -> str | None:
    """``PID.START.NAMESPACE`` of this process, in hex (None: /proc does not say)."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")  # pid:[4026531836]
    except OSError:
        return None
    start = _start_time(os.getpid())
    digits = namespace.partition("[")[2].rstrip("]")
    if start is None or not digits.isdigit():
        return None
    return f"{os.getpid():x}.{start}.{int(digits):x}"


_HEX = re.compile(r"[0-9a-f]{1,16}")


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started, in clock ticks since boot, in hex (None: none runs)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return f"{int(fields[19]):x}" if len(fields) > 19 and fields[19].isdigit() else None


def _alive(pid: int, start: str) -> bool:
    """Whether the process that made a folder runs (a pid used again started later)."""
    return _start_time(pid) == start
