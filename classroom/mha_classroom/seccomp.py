"""A seccomp filter for the grader's sandbox: the two ways to hold memory outside a run's limit.

The address-space limit (``RLIMIT_AS``) counts what a process maps, not what it can leave behind in the
kernel: a memfd file's pages, or a System V shared memory segment's (created, filled through a mapping,
detached: the pages stay). Bubblewrap loads a classic BPF program (``--seccomp FD``) before it starts
the runner; this one makes ``memfd_create`` and ``shmget`` fail with EPERM. NumPy and the standard
library do not need them.
"""

from __future__ import annotations

import os
import struct

__all__ = ["seccomp_filter"]

#: Per architecture: (AUDIT_ARCH_* of its native ABI, the numbers of memfd_create and shmget).
_SECCOMP_ARCHES = {"x86_64": (0xC000003E, 319, 29), "aarch64": (0xC00000B7, 279, 194)}


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """The classic BPF program bubblewrap's ``--seccomp`` loads, or None for another architecture.

    Syscalls of another ABI than the native one (32-bit x86, x32) are refused outright, so that the
    two calls cannot be reached under other numbers.
    """
    arch = _SECCOMP_ARCHES.get(machine or os.uname().machine)
    if arch is None:
        return None
    audit_arch, memfd_create, shmget = arch
    ld_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    allow, refuse = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    program = [  # (code, jump if true, jump if false, k): jumps skip that many instructions
        (ld_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, 5, audit_arch),  # another ABI: refuse
        (ld_abs, 0, 0, 0),  # seccomp_data.nr
        (jge, 3, 0, 0x40000000),  # x32 numbering: refuse
        (jeq, 2, 0, memfd_create),
        (jeq, 1, 0, shmget),
        (ret, 0, 0, allow),
        (ret, 0, 0, refuse),
    ]
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in program)
