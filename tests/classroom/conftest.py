"""Fixtures for the classroom tests: the assignments, the sandbox, one graded hostile batch."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from mha_classroom import Limits, SandboxUnavailable, get_sandbox, load_assignment
from mha_classroom.grade import StudentResult, grade_folder
from mha_classroom.reports import write_reports

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted((ROOT / "assignments").glob("*.md"))
#: Low limits keep the tests quick (2 s per cell, 3 s per call, 8 s per run), with room for a
#: machine that other jobs keep busy.
TEST_LIMITS = Limits(cell_timeout=2.0, probe_timeout=3.0, timeout=8.0, memory_mb=768)
SECRET = "grader-secret-4f1d"  # in the grader's environment: must never reach a submission


@pytest.fixture(scope="session")
def sandbox():
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


@pytest.fixture(scope="session")
def hostile_batch(assignment_1, sandbox):
    """Every case of ``hostile.CASES`` graded once, two at a time, reports written.

    The folder lives outside pytest's temporary folders and is removed with ``rm -rf``: Python's
    ``shutil.rmtree`` (which pytest uses to clean up) recurses, and fails on 1,000 nested folders.
    """
    root = Path(tempfile.mkdtemp(prefix="mha-hostile-"))
    scratch = Path(tempfile.mkdtemp(prefix="mha-hostile-tmp-"))
    try:
        yield _graded_batch(assignment_1, sandbox, root, scratch)
    finally:
        for folder in (root, scratch):
            subprocess.run(["rm", "-rf", "--one-file-system", str(folder)], check=False)


def _graded_batch(assignment_1, sandbox, root: Path, scratch: Path) -> GradedBatch:
    from tests.classroom.hostile import build_all

    submissions, out, canary = root / "submitted", root / "grades", root / "canary"
    canary.mkdir()
    (canary / "canary.txt").write_text("CANARY-CONTENT-7c2e")
    build_all(assignment_1, submissions, root=root, canary=canary, out=out)
    before = snapshot(root)
    os.environ["MHA_GRADER_SECRET"] = SECRET
    # The runs' temporary folders go to a folder of this batch: other test processes grade at the same
    # time (pytest-xdist), and their folders must not count as this batch's leftovers.
    tempfile.tempdir, machine_tmp = str(scratch), tempfile.tempdir
    try:
        results = grade_folder(assignment_1, submissions, TEST_LIMITS, jobs=2, sandbox=sandbox)
    finally:
        del os.environ["MHA_GRADER_SECRET"]
        tempfile.tempdir = machine_tmp
    write_reports(assignment_1, results, out)
    return GradedBatch({r.student: r for r in results}, root, submissions, out, canary,
                       before, snapshot(root), scratch)
