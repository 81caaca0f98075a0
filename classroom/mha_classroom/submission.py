"""Read a submitted notebook defensively: every problem becomes a one-line reason, never a crash.

FIFOs, devices and other non-regular files are refused without being opened for reading data;
symbolic links are not followed; sizes, cell counts and JSON nesting are capped; the text must be
UTF-8. Test cells are found by their ``grade_id`` (in the header line or in the metadata), wherever
the student moved them, and told apart from the student's own code.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from mha_classroom.release import student_source
from mha_classroom.source import BEGIN_HIDDEN, END_HIDDEN, Assignment

MAX_BYTES = 8 * 2**20
MAX_CELLS = 2_000
MAX_SOURCE_CHARS = 2_000_000
MAX_DEPTH = 64


class InvalidSubmission(ValueError):
    """A submission the grader cannot read; the message is one line for the student."""


def _depth_ok(text: str) -> bool:
    """True if no JSON array/object nests deeper than MAX_DEPTH (strings skipped)."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif char in "]}":
            depth -= 1
    return True


def read_bytes(path: Path, limit: int = MAX_BYTES) -> bytes:
    """Read a regular file without following a symlink or blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise InvalidSubmission(f"the notebook cannot be opened ({error.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise InvalidSubmission("the submission is not a regular file")
        if info.st_size > limit:
            raise InvalidSubmission(f"the notebook is {info.st_size / 2**20:.1f} MiB, more than "
                                    f"the {limit / 2**20:g} MiB the grader accepts{_SMALLER}")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise InvalidSubmission(f"the notebook is larger than {limit / 2**20:g} MiB{_SMALLER}")
    return data


# Saved figures make most of a big notebook; the code is what the grader needs.
_SMALLER = ("; clear its outputs (in Jupyter: Kernel, Restart Kernel and Clear Outputs), save it "
            "and submit again")


# A test header as a student's notebook may hold it: anywhere in the cell (two cells merged), with a
# note typed after it. Assignments themselves are read strictly
# (:func:`mha_classroom.source.parse_header`).
_SUBMITTED_HEADER = re.compile(r"#\s*grade_id:\s*(?P<id>[A-Za-z0-9_.-]+)\s+points:")


def _header_ids(source: str) -> list[str]:
    """The ids of the test headers in a submitted cell, in order."""
    return [match["id"] for line in source.split("\n")
            if (match := _SUBMITTED_HEADER.match(line.strip()))]


def _test_id(source: str, metadata: dict) -> str | None:
    """The test a cell holds: the one its metadata names if its header is there, else the first header's
    (an answer cell merged with the test below keeps the answer cell's metadata)."""
    ids = _header_ids(source)
    for key in ("mha_classroom", "nbgrader"):
        entry = metadata.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("grade_id"), str):
            if not ids or entry["grade_id"] in ids:
                return entry["grade_id"]
    return ids[0] if ids else None


def _markdown_id(metadata: dict) -> str | None:
    """The grade id a Markdown cell's metadata names (a written answer whose marker line is gone:
    nbgrader's release replaces the whole cell with its stub)."""
    for key in ("mha_classroom", "nbgrader"):
        entry = metadata.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("grade_id"), str):
            return entry["grade_id"][:200]
    return None


def read_notebook(path: Path) -> list[tuple[str, str, str | None]]:
    """``(cell_type, source, grade_id or None)`` per cell of a submitted ``.ipynb`` (a code cell's
    test, a Markdown cell's written answer as its metadata names it)."""
    return read_submission(path)[0]


def read_submission(path: Path) -> tuple[list[tuple[str, str, str | None]], str | None]:
    """:func:`read_notebook`'s cells, and the assignment the notebook says it is (its
    ``metadata.mha_classroom.assignment``, which ``release`` writes; None if it says none)."""
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidSubmission("the notebook is not UTF-8 text") from None
    if not _depth_ok(text):
        raise InvalidSubmission(f"the notebook's JSON nests deeper than {MAX_DEPTH} levels")
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError) as error:
        where = (f" (line {error.lineno}, column {error.colno}: {error.msg})"
                 if isinstance(error, json.JSONDecodeError) else "")
        raise InvalidSubmission(f"the notebook is not valid JSON{where}; open it in Jupyter, save "
                                "it, and submit again") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise InvalidSubmission("the file is JSON but not a Jupyter notebook (no 'cells' list)")
    if len(notebook["cells"]) > MAX_CELLS:
        raise InvalidSubmission(f"the notebook has {len(notebook['cells'])} cells, more than the "
                                f"{MAX_CELLS} the grader accepts")
    cells, total = [], 0
    for number, cell in enumerate(notebook["cells"], start=1):
        source = cell.get("source") if isinstance(cell, dict) else None
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str) or not isinstance(cell.get("cell_type"), str):
            raise InvalidSubmission(f"cell {number} of the notebook is malformed")
        source = source.replace("\r\n", "\n")  # saved on Windows: not an edit of a test cell
        source = without_hidden_tests(source)
        total += len(source)
        if total > MAX_SOURCE_CHARS or "\x00" in source:
            raise InvalidSubmission("the notebook's code is too long or holds NUL characters")
        metadata = cell.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        grade_id = (_test_id(source, metadata) if cell["cell_type"] == "code"
                    else _markdown_id(metadata))
        cells.append((cell["cell_type"], source, grade_id))
    declared = notebook.get("metadata")
    declared = declared.get("mha_classroom") if isinstance(declared, dict) else None
    declared = declared.get("assignment") if isinstance(declared, dict) else None
    return cells, declared[:200] if isinstance(declared, str) else None


def foreign_tests(assignment: Assignment, cells, declared: str | None) -> str:
    """Why a notebook is another assignment's ("" if it may be this one's): it holds more test cells
    of other ids than of this assignment's (a source renamed since the release still matches its
    notebooks; the name the notebook's metadata gives only helps the message)."""
    ours = {test.test_id for test in assignment.tests}
    found = {grade_id for kind, source, grade_id in cells
             if kind == "code" and grade_id is not None and grade_id in _header_ids(source)}
    other = sorted(found - ours)
    if not other or len(found & ours) >= len(other):
        return ""
    named = f" (its metadata names {declared!r})" if declared and declared != assignment.name else ""
    return (f"the notebook is another assignment's{named}: it holds the test cells "
            f"{', '.join(other[:3])}{', ...' if len(other) > 3 else ''}, not those of "
            f"{assignment.name}; hand in the notebook of {assignment.name}")


def without_hidden_tests(source: str) -> str:
    """``source`` without its hidden-test regions (a notebook from the instructor's version has them).

    No student is given hidden tests; removing them means a notebook that holds them (the teacher's
    own, for a trial run) never runs them in the student's process, and its test cells compare equal
    to the released ones.
    """
    if BEGIN_HIDDEN not in source:
        return source
    kept, hidden = [], False
    for line in source.split("\n"):
        if line.strip() == BEGIN_HIDDEN:
            hidden = True
        elif hidden and line.strip() == END_HIDDEN:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)


def is_test_cell(source: str, grade_id: str | None, tests: set[str]) -> bool:
    """A test cell: a test's id, and still its header somewhere in the cell (below a note, merged with
    the student's code, or with a remark typed after it).

    A cell copied in Jupyter keeps the metadata that names a test; one whose header line is gone
    (rewritten into the student's own helper code) is the student's code and nothing else.
    """
    return grade_id in tests and grade_id in _header_ids(source)


def untouched_test_cells(assignment: Assignment, cells) -> set[int]:
    """Numbers (from 1) of the code cells of ``cells`` that hold a test exactly as released.

    The grader runs its own copy of those tests, and runs them with the student's code only when that
    code needs what they define (:mod:`mha_classroom.borrowed`). Every other code cell is the
    student's code, run at its place as in the notebook: an edited test cell too (merged with an
    answer cell, or a copy turned into an experiment), while its test is graded on the original.
    """
    released = {test.test_id: student_source(test).strip() for test in assignment.tests}
    ids = set(released)
    return {number for number, (kind, source, grade_id) in enumerate(cells, start=1)
            if kind == "code" and is_test_cell(source, grade_id, ids)
            and source.strip() == released[grade_id]}


def notes_on_test_cells(assignment: Assignment, cells) -> tuple[list[str], set[str]]:
    """Notes for the student and events for the teacher about the test cells of ``cells`` (as
    :func:`read_notebook` returns them): missing, edited, or copied."""
    notes, events = [], set()
    tests = {test.test_id for test in assignment.tests}
    present: dict[str, list[str]] = {}  # a test cell copied in Jupyter keeps its id: several cells
    for kind, source, grade_id in cells:
        if kind == "code" and is_test_cell(source, grade_id, tests):
            present.setdefault(grade_id, []).append(source.strip())
    for test in assignment.tests:
        copies = present.get(test.test_id, [])
        if not copies:
            notes.append(f"the test cell {test.grade_id!r} was missing from your notebook; the "
                         "grader ran the original")
            events.add("deleted_tests")
        elif (released := student_source(test).strip()) not in copies:
            notes.append(f"you edited the test cell {test.grade_id!r}: your score comes from the "
                         "original, and your version ran with your own code, as in your notebook")
            events.add("edited_tests")
        elif len(copies) > 1:
            changed = any(copy != released for copy in copies)
            notes.append(f"your notebook has {len(copies)} cells with the test {test.grade_id!r} "
                         "(copies keep its header); the grader ran the original once"
                         + (", and your changed copy with your own code" if changed else ""))
    return notes, events
