"""A copy of an assignment per student: their own inputs, sizes and numbers, from a teacher's seed.

An assignment opts in with one **variant cell**, a given code cell whose first line is
``# variant`` and whose other lines name the numbers that may differ, each with its draw::

    # variant: your own numbers (each student has different ones; leave them as they are)
    SEED = 0  # draw: integers(0, 2147483647)
    D_K = 64  # draw: choice(16, 32, 64, 128, 256)

The cell as written (the defaults) is what ``release`` without a seed hands out and what nbgrader
grades. With a student list and the teacher's secret seed, each student's values are drawn from
``sha256(seed, assignment, student)``: the same student always gets the same copy, nobody can
compute another's copy without the seed, and grading regenerates the student's copy (hidden tests
included, as the tests read these names) instead of storing it anywhere a student could read.

A value answer (a name a solution cell sets) that equals another student's instructor value but not
the student's own is reported by :func:`find_copies`, and the questions that read it lose their
points (:func:`apply_copies`).
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mha_classroom.source import Assignment, AssignmentError, classify_cell, instructor_source

HEADER = "# variant"
_DRAW = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*)\s*=\s*(?P<default>[^#]+?)\s*#\s*draw:\s*"
                   r"(?P<kind>integers|choice)\((?P<args>[^()]*)\)\s*$")
_ASSIGNED = re.compile(r"^[A-Z][A-Z0-9_]*\s*=")
_STUDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}$")
MIN_SEED_CHARS = 8
#: Two numbers closer than this (relative) count as the same value answer.
RTOL = 1e-6


@dataclass(frozen=True)
class Draw:
    """One variant name: its default (the plain release), and what it is drawn from."""

    name: str
    default: object
    kind: str  # "integers" (inclusive bounds) or "choice"
    args: tuple


@dataclass(frozen=True)
class Copy:
    """A value answer of ``student`` equal to ``source``'s variant, not to the student's own."""

    student: str
    name: str
    source: str
    questions: tuple[str, ...]


def variant_cell(assignment: Assignment) -> int | None:
    """Index of the assignment's variant cell (None if it has none)."""
    found = [i for i, cell in enumerate(assignment.cells) if cell.role == "given"
             and cell.source.lstrip().startswith(HEADER)]
    if len(found) > 1:
        raise AssignmentError(f"{assignment.path}: {len(found)} variant cells; one at most")
    return found[0] if found else None


def draws(assignment: Assignment) -> tuple[Draw, ...]:
    """The names of the variant cell and their draws (``()`` for an assignment without one).

    Examples
    --------
    >>> from mha_classroom.source import classify_cell
    >>> line = "D_K = 64  # draw: choice(16, 32, 64)"
    >>> _parse_line(line)
    Draw(name='D_K', default=64, kind='choice', args=(16, 32, 64))
    """
    index = variant_cell(assignment)
    if index is None:
        return ()
    found = []
    for line in assignment.cells[index].source.splitlines()[1:]:
        if _ASSIGNED.match(line):  # other lines (a print, a comment) stay as they are
            found.append(_parse_line(line))
    if not found:
        raise AssignmentError(f"{assignment.path}: the variant cell draws nothing")
    return tuple(found)


def _parse_line(line: str) -> Draw:
    match = _DRAW.match(line.strip())
    if match is None:
        raise AssignmentError(f"variant cell line {line.strip()!r}: expected "
                              "'NAME = <default>  # draw: integers(lo, hi)' or '... choice(a, b, ...)'")
    try:
        default = ast.literal_eval(match["default"])
        args = ast.literal_eval(f"({match['args']},)")
    except (ValueError, SyntaxError):
        raise AssignmentError(f"variant cell line {line.strip()!r}: the default and the draw's "
                              "arguments must be plain numbers or strings") from None
    if match["kind"] == "integers" and not (len(args) == 2 and all(isinstance(a, int) for a in args)
                                            and args[0] <= args[1]):
        raise AssignmentError(f"variant cell line {line.strip()!r}: integers(lo, hi) needs two "
                              "integers, lo <= hi")
    if match["kind"] == "choice" and not args:
        raise AssignmentError(f"variant cell line {line.strip()!r}: choice() needs values")
    return Draw(match["name"], default, match["kind"], args)


def check_seed(seed: str) -> str:
    """The teacher's secret seed, stripped; too short a seed is an error (students could guess it)."""
    seed = seed.strip()
    if len(seed) < MIN_SEED_CHARS:
        raise ValueError(f"the variant seed must be a secret of at least {MIN_SEED_CHARS} characters "
                         f"(got {len(seed)}): with a short one, students could compute each other's "
                         "variants")
    return seed


def check_student(student: str) -> str:
    """A student id of the list: letters, digits and ``_ . @ -`` (it names a file)."""
    if not _STUDENT.match(student):
        raise ValueError(f"student id {student!r}: expected letters, digits and _ . @ - "
                         "(at most 100 characters, first a letter or digit)")
    return student


def read_students(path: Path) -> list[str]:
    """Student ids from a file, one a line (blank lines and ``#`` comments skipped)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    students = [check_student(line.strip()) for line in lines
                if line.strip() and not line.lstrip().startswith("#")]
    twice = sorted({s for s in students if students.count(s) > 1})
    if twice:
        raise ValueError(f"{path}: student ids listed twice: {', '.join(twice)}")
    if not students:
        raise ValueError(f"{path}: no student ids (one a line)")
    return students


def values_for(assignment: Assignment, seed: str, student: str) -> dict[str, object]:
    """The variant values of ``student``: a pure function of (seed, assignment name, student)."""
    digest = hashlib.sha256("\x00".join((seed, assignment.name, student)).encode()).digest()
    rng = np.random.default_rng(np.random.SeedSequence(int.from_bytes(digest, "big")))
    values: dict[str, object] = {}
    for draw in draws(assignment):
        if draw.kind == "integers":
            values[draw.name] = int(rng.integers(draw.args[0], draw.args[1], endpoint=True))
        else:
            values[draw.name] = draw.args[int(rng.integers(len(draw.args)))]
    return values


def with_values(assignment: Assignment, values: dict[str, object]) -> Assignment:
    """The assignment with the variant cell set to ``values`` (the draws' comments left out)."""
    index = variant_cell(assignment)
    if index is None:
        return assignment
    lines = []
    for line in assignment.cells[index].source.splitlines():
        match = _DRAW.match(line.strip())
        lines.append(f"{match['name']} = {values[match['name']]!r}" if match else line)
    cells = list(assignment.cells)
    cells[index] = classify_cell("code", "\n".join(lines))
    return replace(assignment, cells=tuple(cells))


def for_student(assignment: Assignment, seed: str, student: str) -> Assignment:
    """``student``'s copy of the assignment."""
    return with_values(assignment, values_for(assignment, seed, student))


def instructor_values(assignment: Assignment) -> dict[str, object]:
    """The value answers (names solution cells set) the instructor's solution gives."""
    from mha_classroom.probes import _grading, _run_cell, answer_names  # the grader's own runner

    names = [name for name, kind in answer_names(assignment).items() if kind == "value"]
    namespace: dict = {"__name__": "__main__"}
    with _grading():
        for number, cell in enumerate(assignment.cells, start=1):
            if cell.role in ("given", "solution"):
                _run_cell(instructor_source(cell), namespace, f"<cell {number}>")
    return {name: namespace[name] for name in names if name in namespace}


def same_value(a: object, b: object) -> bool:
    """Equal as answers: numbers within :data:`RTOL`, arrays elementwise, anything else by ``==``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    try:
        left, right = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        try:
            return bool(a == b)
        except Exception:  # noqa: BLE001 - an answer whose == fails equals nothing
            return False
    return left.shape == right.shape and bool(np.allclose(left, right, rtol=RTOL, atol=0.0,
                                                          equal_nan=False))


def readers(assignment: Assignment, name: str) -> tuple[str, ...]:
    """The test cells (grade_ids) whose code reads ``name``."""
    found: list[str] = []
    for cell in assignment.tests:
        tree = ast.parse(instructor_source(cell))
        if any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(tree)):
            found.append(cell.test_id)
    return tuple(found)


def find_copies(assignment: Assignment, seed: str, answers: dict[str, dict[str, object]],
                students: list[str]) -> list[Copy]:
    """Value answers equal to another student's variant and not to the student's own.

    ``answers`` maps each graded student to their value answers; ``students`` are the ids whose
    variants count as "another's" (the class list, or everyone graded).
    """
    expected = {s: instructor_values(for_student(assignment, seed, s))
                for s in sorted(set(students) | set(answers))}
    copies = []
    for student, given in sorted(answers.items()):
        own = expected[student]
        for name, value in sorted(given.items()):
            if name not in own or same_value(value, own[name]):
                continue
            for other in sorted(expected):
                if other != student and name in expected[other] \
                        and same_value(value, expected[other][name]):
                    copies.append(Copy(student, name, other, readers(assignment, name)))
                    break
    return copies


def copy_feedback(copy: Copy) -> str:
    """What the student reads on a question that lost its points to a copied value."""
    return (f"{copy.name} is not the answer for your numbers (the variant cell at the top of your "
            "notebook): it is the answer of another copy of this assignment. Work it out for your "
            "own values; your teacher has been told.")


def apply_copies(results: list, copies: list[Copy]) -> list:
    """``results`` (StudentResult) with the questions reading a copied value set to 0 points."""
    by_student: dict[str, list[Copy]] = {}
    for copy in copies:
        by_student.setdefault(copy.student, []).append(copy)
    changed = []
    for result in results:
        mine = by_student.get(result.student, [])
        if not mine:
            changed.append(result)
            continue
        lost = {q: c for c in mine for q in c.questions}
        questions = tuple(replace(q, points=0.0, feedback=copy_feedback(lost[q.grade_id]))
                          if q.grade_id in lost else q for q in result.questions)
        events = tuple(sorted(set(result.events) | {"copied_value"}))
        changed.append(replace(result, questions=questions, events=events))
    return changed


def copies_csv(copies: list[Copy]) -> str:
    """``copies.csv`` for the teacher: who gave whose value, for which questions."""
    import csv
    import io

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["student", "answer", "matches_variant_of", "questions_set_to_zero"])
    for copy in copies:
        writer.writerow([copy.student, copy.name, copy.source, " ".join(copy.questions)])
    return text.getvalue()


__all__ = ["Copy", "Draw", "apply_copies", "check_seed", "check_student", "copies_csv", "draws",
           "find_copies", "for_student", "instructor_values", "read_students", "readers",
           "same_value", "values_for", "variant_cell", "with_values"]
