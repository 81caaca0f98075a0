"""Load the written-answer scores a teacher typed into ``written/answers.csv`` into nbgrader's
gradebook, as the formgrader would store them.

nbgrader 0.9 has no command that imports grades (``nbgrader db`` imports students and assignments
only). :func:`load_scores` uses its ``Gradebook`` API: for each row with a ``manual_score``, the
grade of that written answer (``grade_id``, notebook and assignment both the assignment's name, as
``mha-classroom nbgrader`` lays out the course, and the student) gets the score and the comment, and
its ``needs_manual_grade`` flag is cleared, as the formgrader does when a teacher enters a score;
``nbgrader export`` and the formgrader then show it. A row whose score is not a number between 0 and
the answer's points, or that matches no grade in the gradebook, is reported and changes nothing;
rows left blank are counted and skipped.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from mha_classroom.source import MissingExtra

__all__ = ["Loaded", "load_scores"]


@dataclass
class Loaded:
    """What :func:`load_scores` did: lines for the teacher, and how many rows it set, left, refused."""

    lines: list[str]
    set: int = 0
    blank: int = 0
    refused: int = 0


def _unquoted(field: str) -> str:
    """A field as it was before the export neutralised it (the ``'`` before a formula character)."""
    return field[1:] if field[:1] == "'" and field[1:2] in "=+-@\t\r" and field[1:2] else field


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as file:
            rows = list(csv.DictReader(file))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file; expected the written/answers.csv that "
                         "`mha-classroom grade` writes, with manual_score filled in") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise ValueError(f"{path}: cannot be read as CSV ({error}); save it from the spreadsheet as "
                         "CSV (UTF-8)") from None
    needed = {"student", "grade_id", "max_score", "manual_score", "manual_comment"}
    columns = set(rows[0]) if rows else needed
    if not needed <= columns:
        raise ValueError(f"{path}: the columns {', '.join(sorted(needed - columns))} are missing; "
                         "load the answers.csv that `mha-classroom grade` wrote (written/answers.csv)")
    return rows


def _score(text: str, most: float) -> float | str:
    """The score typed, or why it is not one."""
    try:
        score = float(text.strip().replace(",", "."))
    except ValueError:
        return f"manual_score {text.strip()!r} is not a number"
    if not (math.isfinite(score) and 0 <= score <= most):
        return f"manual_score {score:g} is not between 0 and {most:g}"
    return score


def load_scores(answers: Path, database: Path, assignment: str | None = None) -> Loaded:
    """Load the filled ``answers.csv`` into the nbgrader gradebook ``database`` (a file path).

    ``assignment`` overrides the CSV's ``assignment`` column (nbgrader's assignment and notebook
    name).
    """
    try:
        from nbgrader.api import Gradebook, MissingEntry  # type: ignore[import-untyped]
    except ImportError:
        raise MissingExtra('loading scores into nbgrader needs nbgrader: pip install "nbgrader==0.9.6" '
                           'in the environment that runs mha-classroom') from None
    rows = _rows(Path(answers))
    if not Path(database).is_file():
        raise ValueError(f"{database}: no such gradebook; pass the gradebook.db of the nbgrader "
                         "course (in its root folder, after `nbgrader autograde`)")
    loaded = Loaded([])
    with Gradebook(f"sqlite:///{Path(database).resolve()}") as gradebook:
        for number, row in enumerate(rows, start=2):  # line 1 is the header
            where = f"{answers}, line {number}"
            if not (row.get("manual_score") or "").strip():
                loaded.blank += 1
                continue
            name = assignment or _unquoted(row.get("assignment") or "")
            student, grade_id = row["student"], row["grade_id"]
            candidates = [student] + ([_unquoted(row["submitted_as"])]
                                      if (row.get("submitted_as") or "").strip() else [])
            try:
                most = float(row["max_score"])
            except ValueError:
                most = math.nan
            score = _score(row["manual_score"], most)
            if isinstance(score, str):
                loaded.lines.append(f"{where}: {score}; nothing set for {student} {grade_id}")
                loaded.refused += 1
                continue
            grade = comment = None
            for candidate in candidates:
                try:
                    grade = gradebook.find_grade(grade_id, name, name, candidate)
                    comment = gradebook.find_comment(grade_id, name, name, candidate)
                    break
                except MissingEntry:
                    continue
            if grade is None or comment is None:
                loaded.lines.append(f"{where}: no grade {grade_id!r} of {student!r} in assignment "
                                    f"{name!r} of {database}; autograde that submission first, or "
                                    "pass --assignment with nbgrader's assignment name")
                loaded.refused += 1
                continue
            if grade.max_score != most:
                loaded.lines.append(f"{where}: {grade_id} is worth {grade.max_score:g} in the gradebook "
                                    f"and {most:g} in the CSV; nothing set (is it the same source?)")
                loaded.refused += 1
                continue
            grade.manual_score = score
            grade.needs_manual_grade = False  # as the formgrader does when a score is entered
            comment.manual_comment = (row.get("manual_comment") or "").strip() or None
            loaded.set += 1
            loaded.lines.append(f"set {student} {grade_id} {score:g} / {most:g}")
        gradebook.db.commit()
    return loaded
