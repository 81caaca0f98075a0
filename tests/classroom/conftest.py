"""Fixtures for the classroom tests: the assignments, the sandbox, one graded hostile batch."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from mha_classroom import Limits, SandboxUnavailable, get_sandbox, load_assignment
from mha_classroom.batch import PROGRESS, load_result
from mha_classroom.grade import StudentResult
from mha_classroom.seccomp import syscall_number

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted((ROOT / "assignments").glob("*.md"))
#: Low limits keep the tests quick (2 s per cell, 3 s per call, 8 s per run), with room for a
#: machine that other jobs keep busy.
TEST_LIMITS = Limits(cell_timeout=2.0, probe_timeout=3.0, timeout=8.0, memory_mb=768)
SECRET = "grader-secret-4f1d"  # in the grader's environment: must never reach a submission
KEY_SECRET = "teacher-key-secret-81c3"  # in the grader's session keyring: the same


@pytest.fixture(scope="session")
def sandbox():
    import shutil

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    try:
        return get_sandbox()
    except SandboxUnavailable as error:
        pytest.fail(f"bubblewrap is installed but does not work here: {error}")


@pytest.fixture(scope="session")
def assignment_1():
    return load_assignment(ROOT / "assignments" / "01-self-attention.md")


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under ``folder`` (symlinks not followed): type, size and content hash."""
    seen, stack = {}, [folder]
    while stack:  # iterative: a submission may nest folders 1,000 deep
        for entry in os.scandir(stack.pop()):
            info = entry.stat(follow_symlinks=False)
            digest = ""
            if entry.is_file(follow_symlinks=False):
                digest = hashlib.sha256(Path(entry.path).read_bytes()).hexdigest()
            elif entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            seen[str(Path(entry.path).relative_to(folder))] = (info.st_mode, info.st_size, digest)
    return seen


class Keyring:
    """This process's own session keyring, named, with one key holding a secret: what a teacher
    logged in over SSH has, inherited by the grader and every process it starts."""

    def __init__(self, name: str, secret: str):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.available = syscall_number("keyctl") is not None and self._keyctl(
            1, ctypes.c_char_p(name.encode())) > 0
        self.key = self._call("add_key", b"user", b"mha-teacher-key", secret.encode(),
                              len(secret), -3) if self.available else -1

    def _call(self, name, *args) -> int:
        return self.libc.syscall(syscall_number(name), *args)

    def _keyctl(self, *args) -> int:
        return self._call("keyctl", *args)

    def payload(self) -> bytes:
        buffer = ctypes.create_string_buffer(256)
        count = self._keyctl(11, self.key, buffer, 256)
        return buffer.raw[:count] if count >= 0 else b""

    def keys(self) -> int:
        """How many keys the session keyring holds (a read gives 4 bytes per key id)."""
        buffer = ctypes.create_string_buffer(4096)
        count = self._keyctl(11, -3, buffer, 4096)
        return count // 4 if count >= 0 else -1


@dataclass(frozen=True)
class GradedBatch:
    results: dict[str, StudentResult]
    root: Path
    submissions: Path
    out: Path
    canary: Path
    before: dict
    after: dict
    scratch: Path  # the grader's temporary folder during the batch (its own, not the machine's)
    token: str  # in this batch's submissions and on its runs' command lines
    tag: str  # the grader's own tag, on each of its runs' command lines
    peak_mib: float  # the grader process's peak resident memory
    keyring: Keyring
    keys_after: tuple[int, bytes]  # the teacher's keyring after the batch: keys, the key's payload
    cases: tuple
    budget_kind: str  # how the grader limited a submission's memory: cgroup v2, cgroup v1, rlimit


# Runs the real command line in a fresh process, and says what its sandbox's tag was and how much
# memory the grader itself held at its peak.
HARNESS = """
import json, resource, sys
from mha_classroom import get_sandbox
from mha_classroom.__main__ import main
sandbox = get_sandbox()
status = main(sys.argv[2:])
# The peak of this process's own memory (VmHWM): ru_maxrss also keeps, across exec, the parent's
# resident size when it forked, so a test process holding 600 MiB would be counted as the grader's.
status_lines = open("/proc/self/status").read().splitlines()
hwm = [int(line.split()[1]) for line in status_lines if line.startswith("VmHWM:")]
peak = (hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
json.dump({"status": status, "tag": sandbox.tag, "peak_mib": peak, "budget": sandbox.budget.kind},
          open(sys.argv[1], "w"))
"""


@pytest.fixture(scope="session")
def hostile_batch(assignment_1, sandbox):
    """Every hostile case graded once by ``mha-classroom grade`` in its own process, two at a time.

    The folder lives outside pytest's temporary folders and is removed with ``rm -rf``: Python's
    ``shutil.rmtree`` (which pytest uses to clean up) recurses, and fails on 1,000 nested folders.
    """
    root = Path(tempfile.mkdtemp(prefix="mha-hostile-"))
    scratch = Path(tempfile.mkdtemp(prefix="mha-hostile-tmp-"))
    try:
        yield _graded_batch(assignment_1, root, scratch)
    finally:
        for folder in (root, scratch):
            subprocess.run(["rm", "-rf", "--one-file-system", str(folder)], check=False)


def _graded_batch(assignment_1, root: Path, scratch: Path) -> GradedBatch:
    from tests.classroom.hostile import CASES, build_all
    from tests.classroom.hostile_round_three import CASES_ROUND_THREE
    from tests.classroom.hostile_round_two import CASES_ROUND_TWO

    cases = (*CASES, *CASES_ROUND_TWO, *CASES_ROUND_THREE)
    token = str(secrets.randbelow(10**8)).zfill(8)
    submissions, out, canary = root / "submitted", root / "grades", root / "canary"
    canary.mkdir()
    (canary / "canary.txt").write_text("CANARY-CONTENT-7c2e")
    build_all(assignment_1, submissions, list(cases), token, root=root, canary=canary, out=out)
    before = snapshot(root)
    keyring = Keyring(f"mha-teacher-ring-{token}", KEY_SECRET)
    report = scratch / "harness.json"
    limits = TEST_LIMITS
    command = [sys.executable, "-c", HARNESS, str(report), "grade", str(assignment_1.path),
               str(submissions), "--out", str(out), "--jobs", "2",
               "--cell-timeout", str(limits.cell_timeout), "--timeout", str(limits.timeout),
               "--memory-mb", str(limits.memory_mb), "--record-key", str(scratch / "record.key")]
    # The runs' temporary folders go to a folder of this batch: other test processes (and other
    # graders) run at the same time, and their folders must not count as this batch's leftovers.
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TMPDIR": str(scratch),
                   "MHA_GRADER_SECRET": SECRET, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    harness = json.loads(report.read_text())
    results = {}
    for path in (out / PROGRESS).glob("*.json"):
        result = load_result(path)
        results[result.student] = result
    return GradedBatch(results, root, submissions, out, canary, before, snapshot(root), scratch,
                       token, harness["tag"], harness["peak_mib"], keyring,
                       (keyring.keys(), keyring.payload()), cases, harness["budget"])
