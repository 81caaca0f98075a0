"""Grading survives student code: each buggy or hostile submission costs that student the points
it should, with a message that says why, and never the batch."""

from __future__ import annotations

import csv
import re

import pytest

from mha.classroom import grade_folder, write_reports
from mha.classroom.validate import validate
from tests.classroom.conftest import ASSIGNMENTS, TEST_LIMITS
from tests.classroom.submissions import CASES, build

pytestmark = pytest.mark.classroom


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_submission_gets_the_expected_points(case, hostile_batch, assignment_1):
    result = hostile_batch.results[case.name]
    got = {q.grade_id: q.points for q in result.questions}
    expected = {test.grade_id: case.lost.get(test.grade_id, test.points)
                for test in assignment_1.tests}
    assert got == expected, result


@pytest.mark.parametrize("case", [c for c in CASES if c.messages], ids=lambda case: case.name)
def test_each_submission_gets_a_message_that_says_why(case, hostile_batch):
    result = hostile_batch.results[case.name]
    texts = {q.grade_id: q.feedback for q in result.questions}
    texts.update(notes="\n".join(result.notes), errors="\n".join(result.cell_errors))
    for where, pattern in case.messages.items():
        assert re.search(pattern, texts[where], re.DOTALL), (where, texts[where])


def test_nothing_a_submission_tried_reached_outside_its_sandbox(hostile_batch):
    assert not hostile_batch.outside.exists()
    assert not list(hostile_batch.submissions.parent.glob("scratch.npy"))


def test_the_csv_has_a_row_per_student_and_question_in_a_stable_order(hostile_batch, assignment_1):
    with open(hostile_batch.out / "grades.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert list(rows[0]) == ["student", "question", "points", "max_points", "feedback"]
    order = [test.grade_id for test in assignment_1.tests]
    expected_keys = [(name, q) for name in sorted(c.name for c in CASES) for q in order]
    assert [(row["student"], row["question"]) for row in rows] == expected_keys
    totals = {row["student"]: float(row["points"]) for row in
              csv.DictReader((hostile_batch.out / "totals.csv").open(encoding="utf-8"))}
    for row_student, result in hostile_batch.results.items():
        assert totals[row_student] == result.points
    feedback = (hostile_batch.out / "feedback" / "partial.md").read_text(encoding="utf-8")
    assert "Score: **4 / 13**" in feedback and "the scores were not scaled" in feedback


def test_regrading_gives_the_same_csv_rows_and_feedback(hostile_batch, assignment_1, tmp_path):
    again = tmp_path / "submitted"
    again.mkdir()
    chosen = [c for c in CASES if c.name in
              {"exception", "partial", "monkeypatch", "file_written", "fake_results", "os_exit"}]
    for case in chosen:
        build(case, assignment_1, again, outside=str(hostile_batch.outside))
    write_reports(assignment_1, grade_folder(assignment_1, again, TEST_LIMITS), tmp_path / "out")

    def rows(path):
        return [line for line in path.read_text(encoding="utf-8").splitlines()
                if line.split(",")[0] in {c.name for c in chosen}]

    assert rows(tmp_path / "out" / "grades.csv") == rows(hostile_batch.out / "grades.csv")
    for case in chosen:
        name = f"{case.name}.md"
        assert (tmp_path / "out" / "feedback" / name).read_text() == \
            (hostile_batch.out / "feedback" / name).read_text()


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_instructor_full_marks_released_zero_and_no_leak(source):
    from mha.classroom import load_assignment

    assert validate(load_assignment(source), TEST_LIMITS) == []


def test_release_then_grade_from_the_command_line(tmp_path, assignment_1):
    import subprocess
    import sys

    source = str(ASSIGNMENTS[0])

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "mha.classroom", *args], capture_output=True,
                              text=True, check=False, cwd=tmp_path)

    assert cli("release", source, "--out", "release").returncode == 0
    submitted = tmp_path / "submitted"
    (submitted / "bob" / "01-self-attention").mkdir(parents=True)  # nbgrader's layout
    (tmp_path / "release" / "01-self-attention.ipynb").rename(
        submitted / "bob" / "01-self-attention" / "01-self-attention.ipynb")
    build(CASES[1], assignment_1, submitted)  # "exception": a flat <student>.ipynb
    (submitted / "carol").mkdir()  # a folder with no notebook
    done = cli("grade", source, str(submitted), "--out", "grades", "--cell-timeout", "2")
    assert done.returncode == 0, done.stderr
    assert "bob: 0 / 13" in done.stdout and "exception: 7 / 13" in done.stdout
    assert "carol: 0 / 13" in done.stdout and "graded 3 submission(s)" in done.stdout
    feedback = (tmp_path / "grades" / "feedback" / "carol.md").read_text()
    assert "not graded: no notebook in the folder" in feedback
    missing = cli("grade", source, str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "expected a folder of submissions" in missing.stderr
