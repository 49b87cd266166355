"""A seccomp filter (classic BPF) for sandboxed commands.

bubblewrap shares the filesystem, so every Unix socket on it (a Docker or SSH
agent socket, the session bus) is one ``connect`` away: the filter makes
``socket(AF_UNIX, ...)`` fail with EPERM, as Claude Code's filter does on Linux,
and refuses ``ptrace`` and ``process_vm_writev`` so a command cannot borrow the
unfiltered network bridge's sockets. Syscalls of another architecture (32-bit
binaries, x32) are refused whole: their numbers differ.
"""

from __future__ import annotations

import errno
import platform
import struct

AF_UNIX = 1
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
#: machine → (audit arch, socket, ptrace, process_vm_writev)
_ARCHES: dict[str, tuple[int, int, int, int]] = {
    "x86_64": (0xC000003E, 41, 101, 311),
    "aarch64": (0xC00000B7, 198, 117, 271),
}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The filter program for this machine, or None where toolrun has none."""
    numbers = _ARCHES.get(machine or platform.machine())
    if numbers is None:
        return None
    arch, socket_nr, ptrace_nr, vm_write_nr = numbers
    deny = _RET_ERRNO | errno.EPERM
    program = [
        _insn(_LD_W_ABS, 0, 0, 4),  # 0: arch
        _insn(_JEQ_K, 0, 8, arch),  # 1: another arch → deny (10)
        _insn(_LD_W_ABS, 0, 0, 0),  # 2: syscall number
        _insn(_JGE_K, 6, 0, 0x40000000),  # 3: x32 → deny (10)
        _insn(_JEQ_K, 3, 0, socket_nr),  # 4: socket → 8
        _insn(_JEQ_K, 4, 0, ptrace_nr),  # 5: → deny (10)
        _insn(_JEQ_K, 3, 0, vm_write_nr),  # 6: → deny (10)
        _insn(_RET_K, 0, 0, _RET_ALLOW),  # 7
        _insn(_LD_W_ABS, 0, 0, 16),  # 8: socket's domain (low word of args[0])
        _insn(_JEQ_K, 0, 1, AF_UNIX),  # 9: AF_UNIX → deny, else allow (11)
        _insn(_RET_K, 0, 0, deny),  # 10
        _insn(_RET_K, 0, 0, _RET_ALLOW),  # 11
    ]
    return b"".join(program)
