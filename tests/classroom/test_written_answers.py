"""Written answers with rubrics: each assignment has one, today's release carries its cell and none of
its rubric (the format: the teaching guide). That nbgrader 0.9.6 grades it by hand with its points is
checked with the whole nbgrader path, in test_nbgrader_path.py."""

from __future__ import annotations

import json

import pytest

from book.assessment import WRITTEN_HEADER, WRITTEN_STUB, read_assignment, written_problems
from mha_classroom import load_assignment
from mha_classroom.release import nbgrader_notebook, student_notebook
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
