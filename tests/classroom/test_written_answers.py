"""Written answers with rubrics: each assignment has one, today's release carries its cell and none of
its rubric, and nbgrader 0.9.6 grades it by hand with its points (the format: the teaching guide)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from book.assessment import WRITTEN_HEADER, WRITTEN_STUB, read_assignment, written_problems
from mha_classroom import load_assignment
from mha_classroom.release import nbgrader_notebook, student_notebook, write_notebook
from tests.classroom.conftest import ASSIGNMENTS

pytestmark = pytest.mark.classroom


def _examples(rubric: dict) -> list[str]:
    return [level["example"] for criterion in rubric["criteria"] for level in criterion["levels"]]


def _answer_cells(notebook: dict) -> list[dict]:
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "markdown"
            and WRITTEN_HEADER.match(cell["source"].splitlines()[0].strip())]


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_every_assignment_asks_for_a_written_answer_with_a_rubric_that_adds_up(source):
    assignment = read_assignment(source)
    written = [q for q in assignment.questions if q.kind == "written"]
    assert written, f"{source.name} has no written answer"
    assert written_problems(assignment) == []
    for question in written:
        rubric = assignment.rubrics[question.id]
        assert sum(c["points"] for c in rubric["criteria"]) == question.points
        assert all(len(c["levels"]) >= 2 for c in rubric["criteria"])  # an example at each level


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_release_and_export_carry_the_answer_cell_and_none_of_the_rubric(source):
    meta, assignment = read_assignment(source), load_assignment(source)
    written = {q.id: q for q in meta.questions if q.kind == "written"}
    exported = nbgrader_notebook(assignment)
    for cell in _answer_cells(exported):  # a manually graded answer for nbgrader, with its points
        header = WRITTEN_HEADER.match(cell["source"].splitlines()[0])
        assert cell["metadata"]["nbgrader"] == {
            "schema_version": 3, "grade": True, "solution": True, "locked": False,
            "grade_id": header["id"], "points": float(header["points"])}
    for notebook in (student_notebook(assignment), exported):
        cells = _answer_cells(notebook)
        assert [WRITTEN_HEADER.match(c["source"].splitlines()[0])["id"] for c in cells] == list(written)
        assert all(c["source"].splitlines()[1:] == [WRITTEN_STUB] for c in cells)
        texts = [cell["source"] for cell in notebook["cells"]] + [json.dumps(notebook["metadata"])]
        shown = " ".join(" ".join(texts).split())
        for name in written:
            for example in _examples(meta.rubrics[name]):
                assert " ".join(example.split())[:60] not in shown, f"{name}: rubric text released"
    assert assignment.max_points == sum(q.points for q in meta.questions if q.kind == "auto")  # ignored today


def _course(tmp_path: Path, source: Path) -> Path:
    """An nbgrader course folder whose source/ holds the assignment exported with its written cells."""
    assignment = load_assignment(source)
    notebook = nbgrader_notebook(assignment)  # the grader's export marks the written cells
    write_notebook(notebook, tmp_path / "source" / assignment.name / f"{assignment.name}.ipynb")
    (tmp_path / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(tmp_path)!r}\n", encoding="utf8")
    return tmp_path


def _nbgrader(course: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=course,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_nbgrader_grades_the_written_answer_by_hand_with_its_points(tmp_path):
    pytest.importorskip("nbgrader")
    from nbgrader.api import Gradebook

    source, name = ASSIGNMENTS[0], ASSIGNMENTS[0].stem
    written = [q for q in read_assignment(source).questions if q.kind == "written"]
    course = _course(tmp_path, source)
    _nbgrader(course, "generate_assignment", name)
    released = json.loads((course / "release" / name / f"{name}.ipynb").read_text(encoding="utf8"))
    answers = [c for c in released["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
               in {q.id for q in written}]
    assert [("".join(c["source"]), c["metadata"]["nbgrader"]["points"]) for c in answers] == \
        [(WRITTEN_STUB, q.points) for q in written]

    # A student: the instructor's code answers, and a sentence in the written cell.
    solutions = {c["metadata"]["nbgrader"]["grade_id"]: c["source"]
                 for c in json.loads((course / "source" / name / f"{name}.ipynb").read_text())["cells"]
                 if c["metadata"].get("nbgrader", {}).get("solution")}
    for cell in released["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if cell["cell_type"] == "code" and grade_id in solutions:
            cell["source"] = solutions[grade_id]
        elif grade_id == written[0].id:
            cell["source"] = "Without the division the scores spread like sqrt(d_k) ..."
    write_notebook(released, course / "submitted" / "alice" / name / f"{name}.ipynb")
    _nbgrader(course, "autograde", name)

    automatic = load_assignment(source).max_points
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        record = gradebook.find_assignment(name)
        by_hand = sum(q.points for q in written)
        assert (record.max_code_score, record.max_written_score) == (automatic, by_hand)
        cell = gradebook.find_grade_cell(written[0].id, name, name)
        assert (cell.cell_type, cell.max_score) == ("markdown", written[0].points)
        submission = gradebook.find_submission(name, "alice")
        assert submission.code_score == automatic and submission.needs_manual_grade
        grade = gradebook.find_grade(written[0].id, name, name, "alice")
        assert grade.needs_manual_grade and grade.auto_score is None and grade.max_score == written[0].points

