"""The seccomp allow-list: its numbers are the kernel's on both machines Debian ships, the program
decides as documented on both (read by a small classic-BPF interpreter here), and on this machine
a run cannot reach the kernel's keyrings or the other refused calls, while NumPy still works."""

from __future__ import annotations

import ctypes
import os
import re
import struct
from pathlib import Path

import pytest

from mha_classroom.sandbox import Limits
from mha_classroom.seccomp import (
    ALLOWED,
    CLONE_NEW,
    CONDITIONAL,
    MACHINES,
    REFUSED,
    seccomp_filter,
    syscall_number,
)

pytestmark = pytest.mark.classroom
X86_HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
GENERIC_HEADER = Path("/usr/include/asm-generic/unistd.h")  # the table arm64 builds on
ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026
# what arm64's own asm/unistd.h defines before it includes the generic table
ARM64_WANTS = {"__ARCH_WANT_RENAMEAT", "__ARCH_WANT_NEW_STAT", "__ARCH_WANT_SET_GET_RLIMIT",
               "__ARCH_WANT_SYS_CLONE3", "__ARCH_WANT_TIME32_SYSCALLS"}


def _x86_table() -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"#define __NR_(\w+)\s+(\d+)", X86_HEADER.read_text())}


def _arm64_table() -> dict[str, int]:
    """asm-generic/unistd.h as a 64-bit arm64 build reads it (its #if branches and the
    ``__NR3264_*`` names of the 64-bit calls)."""
    table, n3264, taken = {}, {}, []
    for line in GENERIC_HEADER.read_text().splitlines():
        s = line.strip()
        if s.startswith(("#ifdef", "#ifndef")):
            taken.append(s.startswith("#ifndef") or s.split()[1] in ARM64_WANTS)
        elif s.startswith("#if "):  # the 32-bit and compat branches are not arm64's
            taken.append("__BITS_PER_LONG == 32" not in s)
        elif s.startswith("#else"):
            taken[-1] = not taken[-1]
        elif s.startswith("#endif"):
            taken.pop()
        elif all(taken):
            if m := re.match(r"#define __NR3264_(\w+)\s+(\d+)", s):
                n3264[m[1]] = int(m[2])
            elif m := re.match(r"#define __NR_(\w+)\s+__NR3264_(\w+)", s):
                table[m[1]] = n3264[m[2]]
            elif m := re.match(r"#define __NR_(\w+)\s+(\d+)", s):
                table[m[1]] = int(m[2])
    return table


@pytest.mark.skipif(not (X86_HEADER.is_file() and GENERIC_HEADER.is_file()),
                    reason="the kernel headers (Debian: linux-libc-dev) are not installed")
def test_every_number_is_the_kernels_on_x86_64_and_arm64():
    x86, arm64 = _x86_table(), _arm64_table()
    assert arm64["read"] == 63 and arm64["fstat"] == 80 and "open" not in arm64  # the parser itself
    rows = ALLOWED + CONDITIONAL + REFUSED
    for name, on_x86, on_arm64 in rows:
        assert on_x86 == x86.get(name), name
        assert on_arm64 == arm64.get(name), name
    names = [row[0] for row in rows]
    assert len(names) == len(set(names))
    for column in (1, 2):  # no number in two lists
        numbers = [row[column] for row in rows if row[column] is not None]
        assert len(numbers) == len(set(numbers))


def _run_bpf(program: bytes, nr: int, arch: int, args=(0,) * 6) -> int:
    """What a classic BPF seccomp program returns for one call (the subset the filter uses)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *[a & (2**64 - 1) for a in (*args, *(0,) * 6)][:6])
    code = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
            continue
        if op == 0x06:
            return k
        taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
        pc += 1 + (jt if taken else jf)
        assert pc < len(code), "a jump past the end of the program"


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_the_filter_builds_for_both_machines_and_decides_as_documented(machine):
    program = seccomp_filter(machine)
    arch, column = MACHINES[machine]
    assert program is not None and len(program) % 8 == 0 and len(program) // 8 <= 4096

    def verdict(name, *args):
        return _run_bpf(program, syscall_number(name, machine), arch, args)

    for row in ALLOWED:
        if row[column] is not None:
            assert _run_bpf(program, row[column], arch) == ALLOW, row
    for row in REFUSED:
        if row[column] is not None:
            assert _run_bpf(program, row[column], arch) == EPERM, row
    assert _run_bpf(program, 999, arch) == ENOSYS  # anything not listed: as if the kernel had none
    assert verdict("keyctl", 1, 0) == ALLOW  # a new anonymous session keyring, nothing else
    for args in ((11, -3), (7, -3), (1, 0x1000), (1 + 2**32, 0), (1, 2**40)):
        assert verdict("keyctl", *args) == EPERM, args
    assert verdict("clone", 0x3D0F00) == ALLOW  # pthread_create's flags
    assert verdict("clone", 0x01200011) == ALLOW  # fork's
    for flag in (0x10000000, 0x20000000, 0x40000000, 0x00020000, 0x02000000):
        assert flag & CLONE_NEW and verdict("clone", flag | 17) == EPERM, hex(flag)
    assert [verdict("socket", domain, 1) for domain in (1, 2, 10, 16, 17)] == \
        [ALLOW, ALLOW, ALLOW, EPERM, EPERM]  # unix, inet, inet6; netlink and packet refused
    assert verdict("clone3") == ENOSYS  # glibc then uses clone, whose flags the filter can read
    assert _run_bpf(program, 0, 0x40000003) == EPERM  # a 32-bit ABI (i386) under any number
    if machine == "x86_64":
        assert _run_bpf(program, 0x40000000 + 250, arch) == EPERM  # x32's keyctl


def test_unknown_machines_get_no_filter_and_the_numbers_say_none():
    assert seccomp_filter("sparc64") is None and syscall_number("keyctl", "sparc64") is None
    assert syscall_number("keyctl", "x86_64") == 250 and syscall_number("keyctl", "aarch64") == 219


# --- on this machine -----------------------------------------------------------------------------
_LIBC = ctypes.CDLL(None, use_errno=True)


def _sys(name, *args) -> int:
    return _LIBC.syscall(syscall_number(name), *args)


@pytest.fixture
def teachers_keyring():
    """This process in a session keyring of its own, named, holding a key with a secret (as a
    teacher logged in over SSH has one): returns (keyring description, key id, secret)."""
    if syscall_number("keyctl") is None:
        pytest.skip(f"no syscall table for {os.uname().machine}")
    ring = f"mha-teacher-ring-{os.getpid()}".encode()
    if _sys("keyctl", 1, ctypes.c_char_p(ring)) < 0:
        pytest.skip("this kernel has no keyrings")
    secret = b"teacher-key-secret-81c3"
    key = _sys("add_key", b"user", b"mha-teacher-key", secret, len(secret), -3)
    assert key > 0
    yield ring.decode(), key, secret.decode()


def _read_key(key: int) -> bytes:
    buffer = ctypes.create_string_buffer(256)
    count = _sys("keyctl", 11, key, buffer, 256)
    return buffer.raw[:count] if count >= 0 else b""


KEYRING_ATTACKS = r"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def call(number, *args):
    result = libc.syscall(number, *args)
    return errno.errorcode.get(ctypes.get_errno(), "?") if result < 0 else "allowed"
buffer = ctypes.create_string_buffer(256)
results = [call(KEYCTL, 11, -3, buffer, 256), call(KEYCTL, 11, KEY, buffer, 256),  # read
           call(KEYCTL, 6, -3, buffer, 256), call(KEYCTL, 7, -3),  # describe, clear
           call(ADD_KEY, b"user", b"stash", b"hidden-inputs", 13, -3),
           call(REQUEST_KEY, b"user", b"mha-teacher-key", None, 0),
           call(KEYCTL, 1, b"named-ring")]  # join a named keyring (a shared one)
seen_before = "mha-teacher" in open("/proc/keys").read()
results.append(call(KEYCTL, 1, None))  # the one call allowed: a new, empty session keyring
results.append(str(seen_before) + "/" + str("mha-teacher" in open("/proc/keys").read()))
print(" ".join(results))
"""


def test_a_run_cannot_read_clear_or_add_to_the_teachers_keyring(sandbox, teachers_keyring):
    ring, key, secret = teachers_keyring
    code = (KEYRING_ATTACKS.replace("KEYCTL", str(syscall_number("keyctl")))
            .replace("ADD_KEY", str(syscall_number("add_key")))
            .replace("REQUEST_KEY", str(syscall_number("request_key"))).replace("KEY,", f"{key},"))
    limits = Limits(timeout=10, memory_mb=512)
    done = sandbox.execute(sandbox.command(False, limits, ["-c", code]), b"", limits)
    out = bytes(done.data).decode()
    assert done.status == 0, done.stderr
    assert out.split() == ["EPERM"] * 7 + ["allowed", "True/False"]  # the ring was in view until then
    assert secret not in out
    assert _read_key(key) == secret.encode()  # the teacher's key is still there, unchanged


REFUSED_CALLS = r"""
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
out = []
for number, args in CALLS:
    result = libc.syscall(number, *args)
    out.append(errno.errorcode.get(ctypes.get_errno(), "?") if result < 0 else "allowed")
import numpy, threading, subprocess
t = threading.Thread(target=lambda: None); t.start(); t.join()
out.append(str(int(numpy.linalg.norm(numpy.ones(4)))))
out.append(str(subprocess.run(["true"]).returncode))
print(" ".join(out))
"""


def test_debugging_bpf_namespaces_mounts_and_kernel_memory_are_refused_and_numpy_works(sandbox):
    calls = [("ptrace", (16, 1, 0, 0)), ("bpf", (0, 0, 0)), ("perf_event_open", (0, 0, -1, -1, 0)),
             ("userfaultfd", (0,)), ("unshare", (0x10000000,)), ("setns", (0, 0)),
             ("mount", (0, 0, 0, 0, 0)), ("io_uring_setup", (1, 0)), ("memfd_create", (0, 0)),
             ("process_vm_readv", (1, 0, 0, 0, 0, 0)), ("personality", (0x0040000,))]
    code = REFUSED_CALLS.replace("CALLS", repr([(syscall_number(name), args) for name, args in calls]))
    limits = Limits(timeout=10, memory_mb=512)
    done = sandbox.execute(sandbox.command(False, limits, ["-c", code]), b"", limits)
    assert done.status == 0, done.stderr
    assert bytes(done.data).decode().split() == ["EPERM"] * len(calls) + ["2", "0"]
