"""Read an assignment source and check its nbgrader markers.

An assignment is a notebook (MyST Markdown via jupytext, or ``.ipynb``) whose code cells play one of
three roles:

* **solution** cells hold ``### BEGIN SOLUTION`` / ``### END SOLUTION`` regions;
* **test** cells start with a header line ``# grade_id: <id>  points: <n>`` and may hold
  ``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS`` regions; a test cell scores all its points
  when it runs without an exception, none otherwise (as in nbgrader);
* **given** cells are everything else: set-up code the students run as it is.

Markers must stand alone on their line, balanced, not nested; anything that looks like a marker but
is not one of the four (``### BEGIN SOLUTIONS``, ``### END HIDDEN TEST``) is an error, so a typo
can never leak a solution into a released notebook.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
_REGIONS = {BEGIN_SOLUTION: ("solution", END_SOLUTION), BEGIN_HIDDEN: ("hidden", END_HIDDEN)}
_ENDS = {END_SOLUTION: "solution", END_HIDDEN: "hidden"}
_MARKER_LIKE = re.compile(r"^\s*#{2,}\s*(BEGIN|END)\b", re.IGNORECASE)
_HEADER = re.compile(r"^#\s*grade_id:\s*(?P<id>[A-Za-z0-9_.-]+)\s+points:\s*(?P<points>\S+)\s*$")
_HEADER_LIKE = re.compile(r"^#\s*(grade_id|points)\s*:", re.IGNORECASE)
#: First line of the variant cell: the numbers each student's copy draws (mha_classroom.variants).
VARIANT_HEADER = "# variant"
#: First line of a written answer, a Markdown cell graded by hand (see :mod:`mha_classroom.rubrics`).
WRITTEN_HEADER = re.compile(r"^<!--\s*written_answer:\s*(?P<id>[A-Za-z0-9_.-]+)\s+"
                            r"points:\s*(?P<points>[0-9]+(?:\.[0-9]+)?)\s*-->$")


class MissingExtra(ImportError):
    """A dependency of the grader is missing; the message names the command that installs it.

    The grader's own class: it imports nothing private from ``mha``.
    """


class AssignmentError(ValueError):
    """An assignment source that cannot be released or graded (bad markers, bad header...)."""


@dataclass(frozen=True)
class Segment:
    """A run of lines in a cell: ``kind`` is "plain", "solution" or "hidden"."""

    kind: str
    lines: tuple[str, ...]
    indent: str = ""


@dataclass(frozen=True)
class Cell:
    """One cell of an assignment source.

    ``role`` is "markdown", "given", "solution" or "test"; ``grade_id`` and ``points`` are set on
    test cells only.
    """

    role: str
    source: str
    segments: tuple[Segment, ...]
    grade_id: str | None = None
    points: float = 0.0

    @property
    def test_id(self) -> str:
        """A test cell's grade id (every test cell has one; :func:`parse` makes sure)."""
        if self.grade_id is None:
            raise AssignmentError(f"a {self.role} cell has no grade id")
        return self.grade_id


@dataclass(frozen=True)
class Assignment:
    """A parsed, validated assignment: its name (the file stem) and its cells in order."""

    name: str
    path: Path
    cells: tuple[Cell, ...]

    @property
    def tests(self) -> tuple[Cell, ...]:
        return tuple(cell for cell in self.cells if cell.role == "test")

    @property
    def max_points(self) -> float:
        return sum(cell.points for cell in self.tests)


def parse_header(first_line: str) -> tuple[str, float] | None:
    """Return ``(grade_id, points)`` when ``first_line`` is a test header, else None.

    Examples
    --------
    >>> parse_header("# grade_id: softmax_rows  points: 2")
    ('softmax_rows', 2.0)
    >>> parse_header("import numpy as np") is None
    True
    """
    match = _HEADER.match(first_line.strip())
    if match is None:
        if _HEADER_LIKE.match(first_line.strip()):
            raise AssignmentError(
                f"malformed test header {first_line.strip()!r}: expected "
                "'# grade_id: <letters, digits, _ . -> points: <number>'"
            )
        return None
    try:
        points = float(match["points"])
    except ValueError:
        points = float("nan")
    if not points > 0:
        raise AssignmentError(
            f"test header {first_line.strip()!r}: points must be a positive number, "
            f"got {match['points']!r}"
        )
    return match["id"], points


def variant_cell(assignment: Assignment) -> int | None:
    """Index of the assignment's variant cell (None if it has none)."""
    found = [i for i, cell in enumerate(assignment.cells) if cell.role == "given"
             and cell.source.lstrip().startswith(VARIANT_HEADER)]
    if len(found) > 1:
        raise AssignmentError(f"{assignment.path}: {len(found)} variant cells; one at most")
    return found[0] if found else None


def written_header(source: str) -> re.Match | None:
    """The written-answer marker on a Markdown cell's first line (None if there is none).

    Examples
    --------
    >>> written_header("<!-- written_answer: why_scale  points: 4 -->\\nYOUR ANSWER HERE")["id"]
    'why_scale'
    """
    lines = source.strip().splitlines()
    return WRITTEN_HEADER.match(lines[0].strip()) if lines else None


def split_regions(source: str) -> tuple[Segment, ...]:
    """Split a code cell's source into plain, solution and hidden segments.

    Raises AssignmentError (with the line number) on unbalanced, nested or unknown markers.

    Examples
    --------
    >>> segs = split_regions("x = 1\\n### BEGIN SOLUTION\\ny = 2\\n### END SOLUTION")
    >>> [(s.kind, s.lines) for s in segs]
    [('plain', ('x = 1',)), ('solution', ('y = 2',))]
    """
    segments: list[Segment] = []
    current: list[str] = []
    open_kind, open_end, open_indent, open_line = None, None, "", 0
    for number, line in enumerate(source.splitlines(), start=1):
        marker = line.strip()
        if marker in _REGIONS:
            if open_kind is not None:
                raise AssignmentError(
                    f"line {number}: {marker!r} inside the {open_kind} region opened at line "
                    f"{open_line}; regions cannot nest"
                )
            if current:
                segments.append(Segment("plain", tuple(current)))
            current = []
            open_kind, open_end = _REGIONS[marker]
            open_indent, open_line = line[: len(line) - len(line.lstrip())], number
        elif marker in _ENDS:
            if open_kind is None or marker != open_end:
                opened = "nothing is open" if open_kind is None else f"{open_end!r} expected"
                raise AssignmentError(f"line {number}: {marker!r} without its BEGIN ({opened})")
            segments.append(Segment(open_kind, tuple(current), open_indent))
            current, open_kind = [], None
        elif _MARKER_LIKE.match(line):
            known = ", ".join(repr(m) for m in (*_REGIONS, *_ENDS))
            raise AssignmentError(f"line {number}: unknown marker {marker!r} (known: {known})")
        else:
            current.append(line)
    if open_kind is not None:
        raise AssignmentError(f"line {open_line}: region opened here never closed ({open_end!r})")
    if current:
        segments.append(Segment("plain", tuple(current)))
    return tuple(segments)


def classify_cell(cell_type: str, source: str) -> Cell:
    """Give one notebook cell its role, validating markers and header."""
    if cell_type != "code":
        if any(_MARKER_LIKE.match(line) for line in source.splitlines()):
            raise AssignmentError("markers are only allowed in code cells, found one in markdown")
        return Cell("markdown", source, (Segment("plain", tuple(source.splitlines())),))
    segments = split_regions(source)
    lines = source.splitlines()
    header = parse_header(lines[0]) if lines else None
    kinds = {segment.kind for segment in segments}
    if header is not None:
        if "solution" in kinds:
            raise AssignmentError(f"test cell {header[0]!r} holds a solution region")
        return Cell("test", source, segments, grade_id=header[0], points=header[1])
    if "hidden" in kinds:
        raise AssignmentError(
            "hidden tests outside a test cell (add a '# grade_id: <id>  points: <n>' first line)"
        )
    return Cell("solution" if "solution" in kinds else "given", source, segments)


def read_notebook_cells(path: Path) -> list[tuple[str, str]]:
    """Return ``(cell_type, source)`` pairs of a MyST ``.md`` or ``.ipynb`` notebook."""
    if path.suffix == ".ipynb":
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
            return [
                (cell["cell_type"], "".join(cell["source"]) if isinstance(cell["source"], list)
                 else cell["source"])
                for cell in notebook["cells"]
            ]
        except json.JSONDecodeError as error:
            raise AssignmentError(f"{path}: not a notebook (invalid JSON at line {error.lineno}, column "
                                  f"{error.colno}: {error.msg}); save it again from Jupyter, or "
                                  "pass the assignment's .md source") from None
        except UnicodeDecodeError:
            raise AssignmentError(f"{path}: not a notebook (not UTF-8 text); save it again from "
                                  "Jupyter, or pass the assignment's .md source") from None
        except (KeyError, TypeError, AttributeError):
            raise AssignmentError(f"{path}: JSON, but not a Jupyter notebook (each cell needs a "
                                  "cell_type and a source); pass the assignment's .md or .ipynb "
                                  "source") from None
    if path.suffix == ".md":
        try:
            import jupytext  # only the teacher's side needs it
        except ImportError:
            raise MissingExtra('mha_classroom needs jupytext to read MyST .md assignments: pip '
                               'install "jupytext>=1.16"') from None

        notebook = jupytext.read(path, fmt="md:myst")
        return [(cell.cell_type, cell.source) for cell in notebook.cells]
    raise AssignmentError(f"{path}: expected a MyST .md or .ipynb assignment, got {path.suffix!r}")


def load_assignment(path: str | Path) -> Assignment:
    """Read and validate an assignment source.

    Parameters
    ----------
    path : str or Path
        A MyST Markdown (``.md``) or ``.ipynb`` notebook with nbgrader markers.

    Returns
    -------
    Assignment
        Its cells with their roles; raises AssignmentError naming the cell and line of any problem.
    """
    path = Path(path)
    if not path.is_file():
        raise AssignmentError(f"{path}: no such assignment file")
    cells, seen = [], set()
    for number, (cell_type, source) in enumerate(read_notebook_cells(path), start=1):
        try:
            cell = classify_cell(cell_type, source)
        except AssignmentError as error:
            raise AssignmentError(f"{path}, cell {number}: {error}") from None
        if cell.grade_id in seen:
            raise AssignmentError(f"{path}, cell {number}: grade_id {cell.grade_id!r} used twice")
        if cell.grade_id:
            seen.add(cell.grade_id)
        cells.append(cell)
    if not seen:
        raise AssignmentError(f"{path}: no test cell (first line '# grade_id: <id>  points: <n>')")
    if not any(cell.role == "solution" for cell in cells):
        raise AssignmentError(f"{path}: no solution region ({BEGIN_SOLUTION} ... {END_SOLUTION}): "
                              "this looks like a released notebook, not a source; pass the source "
                              "the release was made from (assignments/*.md)")
    return Assignment(path.stem, path, tuple(cells))


def instructor_source(cell: Cell) -> str:
    """The cell's code with every marker line removed: what the grader runs."""
    return "\n".join(line for segment in cell.segments for line in segment.lines)
