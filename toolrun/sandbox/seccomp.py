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
#: machine → (audit arch, socket, then the syscalls refused whole: ptrace,
#: process_vm_writev, io_uring_setup (io_uring makes sockets without socket()))
_ARCHES: dict[str, tuple[int, int, tuple[int, ...]]] = {
    "x86_64": (0xC000003E, 41, (101, 311, 425)),
    "aarch64": (0xC00000B7, 198, (117, 271, 425)),
}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The filter program for this machine, or None where toolrun has none."""
    numbers = _ARCHES.get(machine or platform.machine())
    if numbers is None:
        return None
    arch, socket_nr, refused = numbers
    deny = _RET_ERRNO | errno.EPERM
    # Jump offsets count from the next instruction. Layout: 0-4 header, one test per
    # refused syscall, ALLOW, the socket-domain check (2), DENY, ALLOW.
    n = len(refused)
    allow_at = 5 + n
    check_at = allow_at + 1
    deny_at = check_at + 2
    program = [
        _insn(_LD_W_ABS, 0, 0, 4),  # arch
        _insn(_JEQ_K, 0, deny_at - 2, arch),  # another arch: deny
        _insn(_LD_W_ABS, 0, 0, 0),  # syscall number
        _insn(_JGE_K, deny_at - 4, 0, 0x40000000),  # x32: deny
        _insn(_JEQ_K, check_at - 5, 0, socket_nr),  # socket: check its domain
        *(_insn(_JEQ_K, deny_at - (6 + i), 0, nr) for i, nr in enumerate(refused)),
        _insn(_RET_K, 0, 0, _RET_ALLOW),
        _insn(_LD_W_ABS, 0, 0, 16),  # socket's domain (low word of args[0])
        _insn(_JEQ_K, 0, 1, AF_UNIX),  # AF_UNIX: deny, else allow
        _insn(_RET_K, 0, 0, deny),
        _insn(_RET_K, 0, 0, _RET_ALLOW),
    ]
    return b"".join(program)
