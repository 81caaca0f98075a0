"""The grader's side of written answers: each student's text exported with its rubric, in a CSV with
nbgrader's manual-grade fields and in sheets to grade from; never scored, and the reports say so."""

from __future__ import annotations

import csv

import pytest

from book.assessment import read_assignment
from mha_classroom import load_assignment
from mha_classroom.grade import QuestionResult, StudentResult
from mha_classroom.release import student_notebook, write_notebook
from mha_classroom.reports import feedback_html, feedback_markdown, summary_markdown
from mha_classroom.rubrics import AWAITS, MISSING, NOT_ANSWERED, export_written, written_questions
from tests.classroom.conftest import ASSIGNMENTS

pytestmark = pytest.mark.classroom

ANSWER = "Without the division the scores spread like sqrt(d_k), so the softmax saturates."


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_every_written_answer_is_exported_with_its_rubric(source, tmp_path):
    assignment, meta = load_assignment(source), read_assignment(source)
    questions = written_questions(assignment, with_rubrics=True)
    assert [q.grade_id for q in questions] == [q.id for q in meta.questions if q.kind == "written"]
    answered = student_notebook(assignment)
    for cell in answered["cells"]:
        if cell["source"].startswith("<!-- written_answer:"):
            cell["source"] = cell["source"].replace("YOUR ANSWER HERE", ANSWER)
    write_notebook(answered, tmp_path / "in" / "ann.ipynb")
    write_notebook(student_notebook(assignment), tmp_path / "in" / "bob.ipynb")
    deleted = student_notebook(assignment)
    deleted["cells"] = [c for c in deleted["cells"] if not c["source"].startswith("<!-- written")]
    write_notebook(deleted, tmp_path / "in" / "cid.ipynb")

    export_written(assignment, tmp_path / "in", tmp_path / "out")
    folder = tmp_path / "out" / "written"
    rows = list(csv.DictReader((folder / "answers.csv").open(encoding="utf8")))
    assert [(r["student"], r["grade_id"], r["answer"]) for r in rows] == [
        (student, q.grade_id, text) for student, text in
        (("ann", ANSWER), ("bob", NOT_ANSWERED), ("cid", MISSING)) for q in questions]
    assert all(r["max_score"] == f"{q.points:g}" and r["manual_score"] == r["manual_comment"] == ""
               and r["assignment"] == assignment.name
               for r, q in zip(rows, questions * 3, strict=True))
    page = " ".join((folder / "students" / "ann.md").read_text(encoding="utf8").split())
    assert ANSWER in page
    for question in questions:
        sheet = " ".join((folder / "questions" / f"{question.grade_id}.md").read_text(encoding="utf8")
                         .split())
        for criterion in meta.rubrics[question.grade_id]["criteria"]:
            assert f"**{criterion['criterion']}** ({criterion['points']} points)" in page
            for level in criterion["levels"]:
                example = " ".join(level["example"].split())
                assert f"{level['points']} points: {example}" in sheet
        assert sheet.index("## ann") < sheet.index("## bob") < sheet.index("## cid")


def test_reports_say_written_answers_await_a_teacher(assignment_1):
    questions = tuple(QuestionResult(t.grade_id, t.points, t.points, "passed")
                      for t in assignment_1.tests)
    result = StudentResult("ann", questions)
    assert result.points == assignment_1.max_points  # the written answer adds nothing by itself
    markdown = feedback_markdown(assignment_1, result)
    assert f"| why_scale | – / 4 | {AWAITS} |" in markdown
    assert AWAITS.replace("'", "&#x27;") in feedback_html(assignment_1, result)
    summary = summary_markdown(assignment_1, [result], "bubblewrap")
    assert "written answers, not in the points above, await your grade: why_scale (4 points)" \
        in summary
