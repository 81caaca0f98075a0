"""Written answers: find them, and export each student's text with its rubric for a teacher to grade.

A written answer is a Markdown cell whose first line is ``<!-- written_answer: <id>  points: <n> -->``
and whose body is ``YOUR ANSWER HERE`` in the source; its rubric lives in the source's front matter
under ``mha.written.<id>`` (criteria, points, an example answer at each level) and never reaches a
released notebook. In a submission the answer is found by that marker, or, when the marker line is
gone (nbgrader's release replaces the whole cell with its stub), by the ``grade_id`` the cell's
metadata names. The grader never scores a written answer: :func:`export_written` writes, next to
the grades, in ``written/``:

* ``answers.csv``: one row per student and written answer, with nbgrader's manual-grade fields
  (``grade_id``, ``max_score``, and ``manual_score`` and ``manual_comment`` left empty for the
  teacher); ``mha-classroom written --to-nbgrader`` loads the filled file into nbgrader's gradebook;
* ``questions/<id>.md``: the rubric once, then every student's answer, the sheet to grade from;
* ``students/<id>.md``: one student's answers, each with its rubric.

A student's text is data in every file (:mod:`mha_classroom.exports`): a CSV field no spreadsheet
runs, a code fence in Markdown that nothing inside can close, invisible characters made visible,
long answers cut with ``(cut: N characters)``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mha_classroom.exports import csv_text, fenced, md_name
from mha_classroom.intake import find_submissions
from mha_classroom.release import write_atomically
from mha_classroom.roster import Roster, file_stem
from mha_classroom.source import Assignment, MissingExtra, written_header
from mha_classroom.submission import InvalidSubmission, read_notebook

STUB = "YOUR ANSWER HERE"
NOT_ANSWERED = "(not answered)"
MISSING = ("(no written answer found: no Markdown cell of the notebook carries this answer's "
           "written_answer marker or its grade_id; open the notebook to look for it)")
AWAITS = "written answer: awaits your teacher's grade"
ANSWER_CHARS = 100_000  # one answer in the Markdown sheets (the CSV holds what a spreadsheet cell can)
ANSWERS_CSV = ("assignment", "student", "submitted_as", "grade_id", "max_score", "answer",
               "manual_score", "manual_comment")


@dataclass(frozen=True)
class Written:
    """One written question: its id, its points and its rubric (a dict, empty if the source has none)."""

    grade_id: str
    points: float
    rubric: dict


def front_matter(path: Path) -> dict:
    """The ``mha`` metadata of an assignment source (``{}`` if it has none)."""
    if path.suffix == ".ipynb":
        metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata") or {}
    else:
        try:
            import jupytext
        except ImportError:
            raise MissingExtra('reading rubrics needs jupytext: pip install "jupytext>=1.16"') from None
        metadata = jupytext.read(path, fmt="md:myst").metadata
    found = metadata.get("mha") or {}
    return found if isinstance(found, dict) else {}


def written_questions(assignment: Assignment, with_rubrics: bool = False) -> tuple[Written, ...]:
    """The assignment's written answers, in order (their rubrics with ``with_rubrics``)."""
    rubrics = (front_matter(Path(assignment.path)).get("written") or {}) if with_rubrics else {}
    found = []
    for cell in getattr(assignment, "cells", ()):  # reports may get a stand-in with a name only
        match = written_header(cell.source) if cell.role == "markdown" else None
        if match:
            found.append(Written(match["id"], float(match["points"]),
                                 dict(rubrics.get(match["id"]) or {})))
    return tuple(found)


def answers_in(cells: list[tuple[str, str, str | None]], questions: tuple[Written, ...]) -> dict:
    """Each written question's answer text in a submitted notebook's cells.

    A cell is the answer to a question when its first line is the question's marker, or, the marker
    line gone, when its metadata names the question's ``grade_id``; the first such cell counts.
    """
    ids = {q.grade_id for q in questions}
    found: dict[str, str] = {}
    for kind, source, grade_id in cells:
        if kind != "markdown":
            continue
        match = written_header(source)
        if match and match["id"] in ids:
            question, text = match["id"], "\n".join(source.strip().splitlines()[1:]).strip()
        elif grade_id in ids:
            question, text = grade_id, source.strip()
        else:
            continue
        if question not in found:
            found[question] = NOT_ANSWERED if text in ("", STUB) else text
    return {q.grade_id: found.get(q.grade_id, MISSING) for q in questions}


def rubric_markdown(question: Written) -> list[str]:
    """The rubric as Markdown: each criterion with its points, then an example at each level (the
    teacher's own text, from the source, shown as Markdown)."""
    lines = [f"Rubric for {md_name(question.grade_id)} ({question.points:g} points)", ""]
    for criterion in question.rubric.get("criteria") or []:
        lines.append(f"- **{criterion.get('criterion', '')}** ({criterion.get('points', 0)} points)")
        for level in criterion.get("levels") or []:
            example = " ".join(str(level.get("example", "")).split())
            lines.append(f"  - {level.get('points')} points: {example}")
    if not question.rubric:
        lines.append("- (the source has no rubric for this answer under mha.written)")
    return lines


def export_written(assignment: Assignment, submissions: Path, out: Path,
                   roster: Roster | None = None) -> list[Path]:
    """Write the written answers of every submission with their rubrics; return the files written.

    Nothing is written for an assignment without written answers. Each student's page is named by
    their id in ``written/students/``, each question's sheet in ``written/questions/``: the two
    folders hold nothing else, so no id can take the name of a file the export writes.
    """
    questions = written_questions(assignment, with_rubrics=True)
    if not questions:
        return []
    folder = Path(out) / "written"
    rows = []
    sheets = {q.grade_id: [f"# {md_name(assignment.name)}: {md_name(q.grade_id)}, to grade by hand", "",
                           *rubric_markdown(q), ""] for q in questions}
    written = []
    for found in find_submissions(submissions, assignment.name, roster):
        try:
            cells = read_notebook(found.path) if found.path is not None else []
        except InvalidSubmission:
            cells = []
        answers = answers_in(cells, questions)
        page = [f"# {md_name(assignment.name)}: written answers of {md_name(found.student)}", ""]
        for question in questions:
            answer = answers[question.grade_id]
            rows.append((assignment.name, found.student,
                         found.original if found.original != found.student else "",
                         question.grade_id, question.points, answer, "", ""))
            sheets[question.grade_id] += [f"## {md_name(found.student)}", "",
                                          *fenced(answer, ANSWER_CHARS), ""]
            page += [f"## {md_name(question.grade_id)} ({question.points:g} points)", "",
                     *fenced(answer, ANSWER_CHARS), "", *rubric_markdown(question), ""]
        target = folder / "students" / f"{file_stem(found.student)}.md"
        write_atomically(target, "\n".join(page))
        written.append(target)
    for grade_id, lines in sheets.items():
        target = folder / "questions" / f"{grade_id}.md"
        write_atomically(target, "\n".join(lines))
        written.append(target)
    write_atomically(folder / "answers.csv", csv_text(ANSWERS_CSV, rows, lines=("answer",)))
    return [folder / "answers.csv", *written]


__all__ = ["ANSWERS_CSV", "AWAITS", "Written", "answers_in", "export_written", "front_matter",
           "rubric_markdown", "written_questions"]
