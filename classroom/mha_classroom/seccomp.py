"""The sandbox's seccomp filter: an allow-list of the system calls Python and NumPy need.

Bubblewrap loads a classic BPF program (``--seccomp FD``) just before it starts the runner, and every
process of the run inherits it. Everything not listed in :data:`ALLOWED` fails: the calls named in
:data:`REFUSED` with ``EPERM`` (kernel keyrings, ``ptrace``, ``bpf``, ``perf_event_open``,
``userfaultfd``, mounts and namespaces, memory the address-space limit does not count: ``memfd_create``
and System V shared memory, ...), any other with ``ENOSYS``, as on a kernel without it (libraries
then take the path they take there: glibc falls back from ``clone3`` to ``clone``). Three calls are
allowed with some arguments only:

* ``clone`` without a ``CLONE_NEW*`` flag (threads and processes, no new namespace);
* ``socket`` for local, IPv4 and IPv6 sockets (the network namespace is empty; no netlink, no raw
  packets);
* ``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)``, which gives the calling process a new, empty
  session keyring (the runner does it first): no call can reach the teacher's keys, or add one that
  outlives the run.

Calls of another ABI than the machine's own (32-bit x86, x32, 32-bit ARM) are refused outright, so
that none of these can be reached under other numbers. The numbers come from the kernel's tables
(``arch/x86/entry/syscalls/syscall_64.tbl``; arm64 uses ``include/uapi/asm-generic/unistd.h``);
``tests/classroom/test_seccomp.py`` checks them against the installed kernel headers.
"""

from __future__ import annotations

import os
import struct

__all__ = ["ALLOWED", "REFUSED", "MACHINES", "seccomp_filter", "syscall_number"]

#: Machine name -> (AUDIT_ARCH_* of its native ABI, position of its number in the tables below).
MACHINES = {"x86_64": (0xC000003E, 1), "aarch64": (0xC00000B7, 2)}
X32_BIT = 0x40000000  # x86-64's x32 ABI numbers its calls from here

#: (name, x86-64 number, aarch64 number or None): allowed with any arguments, the most frequent
#: first (the filter compares in this order).
ALLOWED = (
    ("futex", 202, 98), ("read", 0, 63), ("write", 1, 64), ("mmap", 9, 222), ("munmap", 11, 215),
    ("mprotect", 10, 226), ("madvise", 28, 233), ("brk", 12, 214), ("close", 3, 57),
    ("openat", 257, 56), ("open", 2, None), ("newfstatat", 262, 79), ("fstat", 5, 80),
    ("stat", 4, None), ("lstat", 6, None), ("statx", 332, 291), ("lseek", 8, 62), ("ioctl", 16, 29),
    ("fcntl", 72, 25), ("rt_sigaction", 13, 134), ("rt_sigprocmask", 14, 135),
    ("rt_sigreturn", 15, 139), ("sigaltstack", 131, 132), ("getdents64", 217, 61),
    ("getdents", 78, None), ("readlink", 89, None), ("readlinkat", 267, 78), ("access", 21, None),
    ("faccessat", 269, 48), ("faccessat2", 439, 439), ("pread64", 17, 67), ("pwrite64", 18, 68),
    ("readv", 19, 65), ("writev", 20, 66), ("preadv", 295, 69), ("pwritev", 296, 70),
    ("preadv2", 327, 286), ("pwritev2", 328, 287), ("dup", 32, 23), ("dup2", 33, None),
    ("dup3", 292, 24), ("pipe", 22, None), ("pipe2", 293, 59), ("poll", 7, None), ("ppoll", 271, 73),
    ("select", 23, None), ("pselect6", 270, 72), ("epoll_create", 213, None),
    ("epoll_create1", 291, 20), ("epoll_ctl", 233, 21), ("epoll_wait", 232, None),
    ("epoll_pwait", 281, 22), ("epoll_pwait2", 441, 441), ("eventfd", 284, None),
    ("eventfd2", 290, 19), ("clock_gettime", 228, 113), ("clock_getres", 229, 114),
    ("clock_nanosleep", 230, 115), ("nanosleep", 35, 101), ("gettimeofday", 96, 169),
    ("time", 201, None), ("getrandom", 318, 278), ("getpid", 39, 172), ("getppid", 110, 173),
    ("gettid", 186, 178), ("getuid", 102, 174), ("geteuid", 107, 175), ("getgid", 104, 176),
    ("getegid", 108, 177), ("getresuid", 118, 148), ("getresgid", 120, 150),
    ("getgroups", 115, 158), ("getpgid", 121, 155), ("getpgrp", 111, None), ("getsid", 124, 156),
    ("setsid", 112, 157), ("setpgid", 109, 154), ("set_tid_address", 218, 96),
    ("set_robust_list", 273, 99), ("get_robust_list", 274, 100), ("rseq", 334, 293),
    ("restart_syscall", 219, 128), ("exit", 60, 93), ("exit_group", 231, 94), ("wait4", 61, 260),
    ("waitid", 247, 95), ("kill", 62, 129), ("tgkill", 234, 131), ("tkill", 200, 130),
    ("execve", 59, 221), ("execveat", 322, 281), ("fork", 57, None), ("vfork", 58, None),
    ("sched_yield", 24, 124), ("sched_getaffinity", 204, 123), ("sched_setaffinity", 203, 122),
    ("sched_getparam", 143, 121), ("sched_getscheduler", 145, 120),
    ("sched_get_priority_max", 146, 125), ("sched_get_priority_min", 147, 126),
    ("getcpu", 309, 168), ("getpriority", 140, 141), ("setpriority", 141, 140),
    ("getrlimit", 97, 163), ("setrlimit", 160, 164), ("prlimit64", 302, 261),
    ("getrusage", 98, 165), ("times", 100, 153), ("uname", 63, 160), ("sysinfo", 99, 179),
    ("umask", 95, 166), ("arch_prctl", 158, None), ("prctl", 157, 167), ("capget", 125, 90),
    ("capset", 126, 91), ("setresuid", 117, 147), ("setresgid", 119, 149), ("setuid", 105, 146),
    ("setgid", 106, 144), ("setreuid", 113, 145), ("setregid", 114, 143), ("setgroups", 116, 159),
    ("setfsuid", 122, 151), ("setfsgid", 123, 152), ("mremap", 25, 216), ("msync", 26, 227),
    ("mincore", 27, 232), ("mbind", 237, 235), ("get_mempolicy", 239, 236),
    ("set_mempolicy", 238, 237), ("membarrier", 324, 283), ("getcwd", 79, 17), ("chdir", 80, 49),
    ("fchdir", 81, 50), ("mkdir", 83, None), ("mkdirat", 258, 34), ("rmdir", 84, None),
    ("unlink", 87, None), ("unlinkat", 263, 35), ("rename", 82, None), ("renameat", 264, 38),
    ("renameat2", 316, 276), ("link", 86, None), ("linkat", 265, 37), ("symlink", 88, None),
    ("symlinkat", 266, 36), ("mknodat", 259, 33), ("chmod", 90, None), ("fchmod", 91, 52),
    ("fchmodat", 268, 53), ("chown", 92, None), ("fchown", 93, 55), ("fchownat", 260, 54),
    ("lchown", 94, None), ("utimensat", 280, 88), ("truncate", 76, 45), ("ftruncate", 77, 46),
    ("fallocate", 285, 47), ("fsync", 74, 82), ("fdatasync", 75, 83), ("flock", 73, 32),
    ("fadvise64", 221, 223), ("statfs", 137, 43), ("fstatfs", 138, 44), ("sendfile", 40, 71),
    ("copy_file_range", 326, 285), ("close_range", 436, 436), ("getxattr", 191, 8),
    ("lgetxattr", 192, 9), ("fgetxattr", 193, 10), ("listxattr", 194, 11), ("llistxattr", 195, 12),
    ("flistxattr", 196, 13), ("setxattr", 188, 5), ("lsetxattr", 189, 6), ("fsetxattr", 190, 7),
    ("removexattr", 197, 14), ("lremovexattr", 198, 15), ("fremovexattr", 199, 16),
    ("socketpair", 53, 199), ("bind", 49, 200), ("listen", 50, 201), ("accept", 43, 202),
    ("accept4", 288, 242), ("connect", 42, 203), ("getsockname", 51, 204),
    ("getpeername", 52, 205), ("sendto", 44, 206), ("recvfrom", 45, 207), ("sendmsg", 46, 211),
    ("recvmsg", 47, 212), ("sendmmsg", 307, 269), ("recvmmsg", 299, 243), ("shutdown", 48, 210),
    ("setsockopt", 54, 208), ("getsockopt", 55, 209), ("alarm", 37, None), ("pause", 34, None),
    ("setitimer", 38, 103), ("getitimer", 36, 102), ("rt_sigsuspend", 130, 133),
    ("rt_sigpending", 127, 136), ("rt_sigtimedwait", 128, 137), ("timer_create", 222, 107),
    ("timer_settime", 223, 110), ("timer_gettime", 224, 108), ("timer_getoverrun", 225, 109),
    ("timer_delete", 226, 111),
)
#: Allowed with some arguments only (see the module's docstring); clone3 passes its flags in memory
#: the filter cannot read, so it says ENOSYS and glibc uses clone.
CONDITIONAL = (("clone", 56, 220), ("socket", 41, 198), ("keyctl", 250, 219), ("clone3", 435, 435))
#: Refused with EPERM, by name (every other call outside the lists above gets ENOSYS).
REFUSED = (
    ("add_key", 248, 217), ("request_key", 249, 218), ("ptrace", 101, 117), ("bpf", 321, 280),
    ("perf_event_open", 298, 241), ("userfaultfd", 323, 282), ("mount", 165, 40),
    ("umount2", 166, 39), ("pivot_root", 155, 41), ("chroot", 161, 51), ("move_mount", 429, 429),
    ("open_tree", 428, 428), ("fsopen", 430, 430), ("fsconfig", 431, 431), ("fsmount", 432, 432),
    ("fspick", 433, 433), ("mount_setattr", 442, 442), ("unshare", 272, 97), ("setns", 308, 268),
    ("memfd_create", 319, 279), ("shmget", 29, 194), ("shmat", 30, 196), ("shmctl", 31, 195),
    ("shmdt", 67, 197), ("semget", 64, 190), ("semop", 65, 193), ("semtimedop", 220, 192),
    ("semctl", 66, 191), ("msgget", 68, 186), ("msgsnd", 69, 189), ("msgrcv", 70, 188),
    ("msgctl", 71, 187), ("mq_open", 240, 180), ("mq_unlink", 241, 181),
    ("mq_timedsend", 242, 182), ("mq_timedreceive", 243, 183), ("mq_notify", 244, 184),
    ("mq_getsetattr", 245, 185), ("process_vm_readv", 310, 270), ("process_vm_writev", 311, 271),
    ("kcmp", 312, 272), ("pidfd_getfd", 438, 438), ("kexec_load", 246, 104),
    ("kexec_file_load", 320, 294), ("init_module", 175, 105), ("finit_module", 313, 273),
    ("delete_module", 176, 106), ("reboot", 169, 142), ("swapon", 167, 224), ("swapoff", 168, 225),
    ("acct", 163, 89), ("quotactl", 179, 60), ("io_uring_setup", 425, 425),
    ("io_uring_enter", 426, 426), ("io_uring_register", 427, 427), ("io_setup", 206, 0),
    ("io_submit", 209, 2), ("name_to_handle_at", 303, 264), ("open_by_handle_at", 304, 265),
    ("fanotify_init", 300, 262), ("syslog", 103, 116), ("personality", 135, 92),
    ("settimeofday", 164, 170), ("clock_settime", 227, 112), ("adjtimex", 159, 171),
    ("clock_adjtime", 305, 266), ("sethostname", 170, 161), ("setdomainname", 171, 162),
    ("iopl", 172, None), ("ioperm", 173, None), ("vhangup", 153, 58), ("lookup_dcookie", 212, 18),
    ("mlock", 149, 228), ("mlock2", 325, 284), ("mlockall", 151, 230),
)

CLONE_NEW = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
SOCKET_DOMAINS = (1, 2, 10)  # AF_UNIX, AF_INET, AF_INET6
KEYCTL_JOIN_SESSION_KEYRING = 1

_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|..., BPF_RET|K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_EPERM, _ENOSYS = 0x00050000 | 1, 0x00050000 | 38  # SECCOMP_RET_ERRNO | errno (the generic numbers)
# struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args (6 x u64), little-endian
_NR, _ARCH = 0, 4


def _arg(index: int, high: bool = False) -> int:
    return 16 + 8 * index + (4 if high else 0)


def syscall_number(name: str, machine: str | None = None) -> int | None:
    """The number of system call ``name`` on ``machine`` (this one by default), or None.

    Examples
    --------
    >>> syscall_number("keyctl", "x86_64"), syscall_number("keyctl", "aarch64")
    (250, 219)
    """
    entry = MACHINES.get(machine or os.uname().machine)
    if entry is None:
        return None
    for table in (ALLOWED, CONDITIONAL, REFUSED):
        for row in table:
            if row[0] == name:
                return row[entry[1]]
    return None


def _argument_is(index: int, value: int) -> list[tuple]:
    """Instructions that fall through when 64-bit argument ``index`` equals ``value``, else refuse."""
    return [(_LD_ABS, 0, 0, _arg(index)), (_JEQ, 1, 0, value & 0xFFFFFFFF), (_RET, 0, 0, _EPERM),
            (_LD_ABS, 0, 0, _arg(index, high=True)), (_JEQ, 1, 0, value >> 32),
            (_RET, 0, 0, _EPERM)]


def _conditional(name: str) -> list[tuple]:
    """The body of a conditional call's test: it ends in a return on every path."""
    if name == "clone":
        return [(_LD_ABS, 0, 0, _arg(0)), (_JSET, 0, 1, CLONE_NEW), (_RET, 0, 0, _EPERM),
                (_RET, 0, 0, _ALLOW)]
    if name == "socket":
        body = [(_LD_ABS, 0, 0, _arg(0))]
        for left, domain in enumerate(SOCKET_DOMAINS):
            body.append((_JEQ, len(SOCKET_DOMAINS) - left, 0, domain))  # to the ALLOW below
        return body + [(_RET, 0, 0, _EPERM), (_RET, 0, 0, _ALLOW)]
    if name == "keyctl":  # only a fresh anonymous session keyring: keyctl(1, NULL)
        return [*_argument_is(0, KEYCTL_JOIN_SESSION_KEYRING), *_argument_is(1, 0),
                (_RET, 0, 0, _ALLOW)]
    return [(_RET, 0, 0, _ENOSYS)]  # clone3


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """The classic BPF program bubblewrap's ``--seccomp`` loads, or None for another machine.

    Examples
    --------
    >>> len(seccomp_filter("x86_64")) % 8, seccomp_filter("sparc64") is None
    (0, True)
    """
    machine = machine or os.uname().machine
    if machine not in MACHINES:
        return None
    audit_arch, column = MACHINES[machine]
    program = [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 1, 0, audit_arch), (_RET, 0, 0, _EPERM),
               (_LD_ABS, 0, 0, _NR)]
    if machine == "x86_64":
        program += [(_JGE, 0, 1, X32_BIT), (_RET, 0, 0, _EPERM)]
    for row in CONDITIONAL:
        if row[column] is not None:
            body = _conditional(row[0])
            program += [(_JEQ, 0, len(body), row[column]), *body]  # not this call: skip its body
    for _name, *numbers in ALLOWED:
        if numbers[column - 1] is not None:
            program += [(_JEQ, 0, 1, numbers[column - 1]), (_RET, 0, 0, _ALLOW)]
    for _name, *numbers in REFUSED:
        if numbers[column - 1] is not None:
            program += [(_JEQ, 0, 1, numbers[column - 1]), (_RET, 0, 0, _EPERM)]
    program.append((_RET, 0, 0, _ENOSYS))
    if len(program) > 4096:  # BPF_MAXINSNS
        raise ValueError(f"the seccomp program has {len(program)} instructions, more than 4096")
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in program)
