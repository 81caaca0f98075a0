"""A copy of an assignment per student: their own inputs, sizes and numbers, from a teacher's seed.

An assignment opts in with one **variant cell**, a given code cell whose first line is
``# variant`` and whose other lines name the numbers that may differ, each with its draw::

    # variant: your own numbers (each student has different ones; leave them as they are)
    SEED = 0  # draw: integers(0, 2147483647)
    D_K = 64  # draw: choice(16, 32, 64, 128, 256)

The cell as written (the defaults) is what ``release`` without a seed hands out. With a class list
(:mod:`mha_classroom.roster`) and the teacher's secret seed (:mod:`mha_classroom.seeds`), each
student's values are drawn from ``sha256(seed, assignment, student)``: the same student always gets
the same copy, nobody can compute another's copy without the seed, and grading regenerates the
student's copy (hidden tests included, as the tests read these names) instead of storing it
anywhere a student could read. The variant cell a student hands in is checked against the one
released to their id (:func:`variant_source`, :func:`submitted_variant`); value answers that match
another student's copy are evidence for the teacher (:mod:`mha_classroom.copies`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import math
import re
from dataclasses import dataclass, replace

import numpy as np

from mha_classroom.source import (
    VARIANT_HEADER,
    Assignment,
    AssignmentError,
    classify_cell,
    instructor_source,
    variant_cell,
)

_DRAW = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*)\s*=\s*(?P<default>[^#]+?)\s*#\s*draw:\s*"
                   r"(?P<kind>integers|choice)\((?P<args>[^()]*)\)\s*$")
_ASSIGNED = re.compile(r"^[A-Z][A-Z0-9_]*\s*=")
#: Two numbers closer than this (relative) count as the same value answer.
RTOL = 1e-6


@dataclass(frozen=True)
class Draw:
    """One variant name: its default (the plain release), and what it is drawn from."""

    name: str
    default: object
    kind: str  # "integers" (inclusive bounds) or "choice"
    args: tuple


@functools.lru_cache(maxsize=64)  # read again for every student's copy and every value compared
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
    if isinstance(a, int | float) and isinstance(b, int | float):  # the common cases, without NumPy
        return math.isclose(a, b, rel_tol=RTOL, abs_tol=0.0)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in (*a, *b)):
        return len(a) == len(b) and all(math.isclose(x, y, rel_tol=RTOL, abs_tol=0.0)
                                        for x, y in zip(a, b, strict=True))
    try:
        left, right = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        try:
            return bool(a == b)
        except Exception:  # noqa: BLE001 - an answer whose == fails equals nothing
            return False
    return left.shape == right.shape and bool(np.allclose(left, right, rtol=RTOL, atol=0.0,
                                                          equal_nan=False))


def variant_source(assignment: Assignment) -> str | None:
    """The variant cell as ``release`` writes it (None for an assignment without one)."""
    from mha_classroom.release import student_source

    index = variant_cell(assignment)
    return None if index is None else student_source(assignment.cells[index])


def same_cell(a: str, b: str) -> bool:
    """Two cell sources equal but for trailing blanks and blank lines around them."""
    def lines(text: str) -> list[str]:
        return [line.rstrip() for line in text.strip("\n").splitlines()]

    return lines(a) == lines(b)


def submitted_variant(cells: list[tuple[str, str, str | None]]) -> tuple[int, str] | None:
    """(number from 1, source) of the first code cell of a submission that is a variant cell."""
    for number, (kind, source, _) in enumerate(cells, start=1):
        if kind == "code" and source.lstrip().startswith(VARIANT_HEADER):
            return number, source
    return None


__all__ = ["Draw", "draws", "for_student", "instructor_values", "same_cell", "same_value",
           "submitted_variant",
           "values_for", "variant_cell", "variant_source", "with_values"]
