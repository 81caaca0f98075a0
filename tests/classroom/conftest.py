"""Fixtures for the classroom tests: the assignments, and one graded batch of hostile submissions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from mha.classroom import Limits, grade_folder, load_assignment, write_reports
from mha.classroom.grade import StudentResult
from tests.classroom.submissions import CASES, CELL_TIMEOUT, MEMORY_MB, TIMEOUT, build

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted((ROOT / "assignments").glob("*.md"))
TEST_LIMITS = Limits(cell_timeout=CELL_TIMEOUT, timeout=TIMEOUT, memory_mb=MEMORY_MB)


@dataclass(frozen=True)
class GradedBatch:
    results: dict[str, StudentResult]
    submissions: Path
    out: Path
    outside: Path  # a file the hostile submissions try to create outside their sandbox


@pytest.fixture(scope="session")
def assignment_1():
    return load_assignment(ROOT / "assignments" / "01-self-attention.md")


@pytest.fixture(scope="session")
def hostile_batch(assignment_1, tmp_path_factory) -> GradedBatch:
    """Every case of ``submissions.CASES`` graded once, two at a time, reports written."""
    root = tmp_path_factory.mktemp("hostile")
    submissions, out, outside = root / "submitted", root / "grades", root / "outside.txt"
    submissions.mkdir()
    for case in CASES:
        build(case, assignment_1, submissions, outside=str(outside))
    results = grade_folder(assignment_1, submissions, TEST_LIMITS, jobs=2)
    write_reports(assignment_1, results, out)
    return GradedBatch({result.student: result for result in results}, submissions, out, outside)
