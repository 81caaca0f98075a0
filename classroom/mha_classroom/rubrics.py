"""Written answers: find them, and export each student's text with its rubric for a teacher to grade.

A written answer is a Markdown cell whose first line is ``<!-- written_answer: <id>  points: <n> -->``
and whose body is ``YOUR ANSWER HERE`` in the source; its rubric lives in the source's front matter
under ``mha.written.<id>`` (criteria, points, an example answer at each level) and never reaches a
released notebook. The grader never scores a written answer: :func:`export_written` writes, next to
the grades,

* ``written/answers.csv``: one row per student and written answer, with nbgrader's manual-grade
  fields (``grade_id``, ``max_score``, ``manual_score`` and ``manual_comment``, left empty for the
  teacher);
* ``written/<id>.md``: the rubric once, then every student's answer, the sheet to grade from;
* ``written/<student>.md``: one student's answers, each with its rubric.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

from mha_classroom.intake import find_submissions
from mha_classroom.release import write_atomically
from mha_classroom.source import Assignment, MissingExtra, written_header
from mha_classroom.submission import InvalidSubmission, read_notebook

STUB = "YOUR ANSWER HERE"
NOT_ANSWERED = "(not answered)"
MISSING = "(no written answer cell found: its first line, the written_answer marker, was deleted)"
AWAITS = "written answer: awaits your teacher's grade"


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
    """Each written question's answer text in a submitted notebook's cells."""
    found = {}
    for kind, source, _ in cells:
        match = written_header(source) if kind == "markdown" else None
        if match and match["id"] not in found:
            text = "\n".join(source.strip().splitlines()[1:]).strip()
            found[match["id"]] = NOT_ANSWERED if text in ("", STUB) else text
    return {q.grade_id: found.get(q.grade_id, MISSING) for q in questions}


def rubric_markdown(question: Written) -> list[str]:
    """The rubric as Markdown: each criterion with its points, then an example at each level."""
    lines = [f"Rubric for {question.grade_id} ({question.points:g} points)", ""]
    for criterion in question.rubric.get("criteria") or []:
        lines.append(f"- **{criterion.get('criterion', '')}** ({criterion.get('points', 0)} points)")
        for level in criterion.get("levels") or []:
            example = " ".join(str(level.get("example", "")).split())
            lines.append(f"  - {level.get('points')} points: {example}")
    if not question.rubric:
        lines.append("- (the source has no rubric for this answer under mha.written)")
    return lines


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.splitlines()] or [">"]


def export_written(assignment: Assignment, submissions: Path, out: Path) -> list[Path]:
    """Write the written answers of every submission with their rubrics; return the files written.

    Nothing is written for an assignment without written answers.
    """
    questions = written_questions(assignment, with_rubrics=True)
    if not questions:
        return []
    folder = Path(out) / "written"
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerow(["student", "grade_id", "max_score", "answer", "manual_score", "manual_comment"])
    sheets = {q.grade_id: [f"# {assignment.name}: {q.grade_id}, to grade by hand", "",
                           *rubric_markdown(q), ""] for q in questions}
    written = []
    for found in find_submissions(submissions, assignment.name):
        try:
            cells = read_notebook(found.path) if found.path is not None else []
        except InvalidSubmission:
            cells = []
        answers = answers_in(cells, questions)
        page = [f"# {assignment.name}: written answers of {found.student}", ""]
        for question in questions:
            answer = answers[question.grade_id]
            writer.writerow([found.student, question.grade_id, f"{question.points:g}", answer, "", ""])
            sheets[question.grade_id] += [f"## {found.student}", "", *_quoted(answer), ""]
            page += [f"## {question.grade_id} ({question.points:g} points)", "", *_quoted(answer), "",
                     *rubric_markdown(question), ""]
        target = folder / f"{found.student}.md"
        write_atomically(target, "\n".join(page))
        written.append(target)
    for grade_id, lines in sheets.items():
        target = folder / f"{grade_id}.md"
        write_atomically(target, "\n".join(lines))
        written.append(target)
    write_atomically(folder / "answers.csv", table.getvalue())
    return [folder / "answers.csv", *written]


__all__ = ["AWAITS", "Written", "answers_in", "export_written", "front_matter",
           "rubric_markdown", "written_questions"]
