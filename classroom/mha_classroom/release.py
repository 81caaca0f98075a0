"""Write the student version of an assignment, and an nbgrader-ready instructor version.

The student version replaces each solution region by ``# YOUR CODE HERE`` and
``raise NotImplementedError()`` (at the region's indentation) and drops hidden tests, markers
included. Each cell carries ``metadata.mha_classroom = {"role": ..., "grade_id": ...}`` so the
grader can find the test cells again, even if a student moves them.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from mha_classroom.source import Assignment, Cell, written_header

NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def student_source(cell: Cell) -> str:
    """The cell as students see it: solutions stubbed out, hidden tests gone.

    Examples
    --------
    >>> from mha_classroom.source import classify_cell
    >>> cell = classify_cell("code", "def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n"
    ...                      "    ### END SOLUTION")
    >>> print(student_source(cell))
    def f():
        # YOUR CODE HERE
        raise NotImplementedError()
    """
    lines: list[str] = []
    for segment in cell.segments:
        if segment.kind == "plain":
            lines.extend(segment.lines)
        elif segment.kind == "solution":
            lines += [f"{segment.indent}# YOUR CODE HERE",
                      f"{segment.indent}raise NotImplementedError()"]
    return "\n".join(lines)


def _notebook(cells: list[dict]) -> dict:
    return {"cells": cells, "metadata": NOTEBOOK_METADATA, "nbformat": 4, "nbformat_minor": 5}


def _cell_dict(index: int, cell: Cell, source: str, metadata: dict) -> dict:
    base: dict[str, Any] = {"cell_type": "markdown" if cell.role == "markdown" else "code",
                            "id": f"cell-{index}", "metadata": metadata, "source": source}
    if cell.role != "markdown":
        base.update(execution_count=None, outputs=[])
    return base


def student_notebook(assignment: Assignment) -> dict:
    """Return the released notebook (nbformat 4 as a dict) for students."""
    cells = []
    for index, cell in enumerate(assignment.cells):
        metadata = {"mha_classroom": {"role": cell.role}}
        if cell.grade_id:
            metadata["mha_classroom"]["grade_id"] = cell.grade_id
        cells.append(_cell_dict(index, cell, student_source(cell), metadata))
    return _notebook(cells)


def nbgrader_notebook(assignment: Assignment) -> dict:
    """Return the instructor notebook with nbgrader cell metadata (schema 3), markers kept.

    Teachers who use nbgrader put it in ``source/<assignment>/`` and run ``nbgrader
    generate_assignment`` as usual: solution cells are marked ``solution``, test cells ``grade``
    with their points and locked, every other code cell locked, and each written answer (Markdown)
    ``solution`` and ``grade`` with its points: a manually graded answer.
    """
    cells, answers = [], 0
    for index, cell in enumerate(assignment.cells):
        nbgrader: dict[str, Any] = {"schema_version": 3, "grade": False, "solution": False, "locked": False}
        if cell.role == "solution":
            answers += 1
            nbgrader.update(solution=True, grade_id=f"answer_{answers}")
        elif cell.role == "test":
            nbgrader.update(grade=True, locked=True, grade_id=cell.grade_id, points=cell.points)
        elif cell.role == "given":
            nbgrader.update(locked=True, grade_id=f"given_{index}")
        written = written_header(cell.source) if cell.role == "markdown" else None
        if written:  # a manually graded answer: nbgrader keeps it for the formgrader
            nbgrader.update(solution=True, grade=True, grade_id=written["id"],
                            points=float(written["points"]))
        metadata = {"nbgrader": nbgrader} if cell.role != "markdown" or written else {}
        cells.append(_cell_dict(index, cell, cell.source, metadata))
    return _notebook(cells)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``.

    Text that UTF-8 cannot hold (a lone surrogate in a student's error message, say) is written as
    backslash escapes: one student's output never stops the files of all the others being written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace", newline="") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_notebook(notebook: dict, path: Path) -> Path:
    """Write a notebook dict as pretty JSON (stable key order, trailing newline)."""
    text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False)
    write_atomically(path, text + "\n")
    return path


def release(assignment: Assignment, out_dir: Path) -> Path:
    """Write ``<out_dir>/<assignment>.ipynb``, the student version, and return its path."""
    return write_notebook(student_notebook(assignment), Path(out_dir) / f"{assignment.name}.ipynb")


def export_nbgrader(assignment: Assignment, out_dir: Path) -> Path:
    """Write ``<out_dir>/<assignment>/<assignment>.ipynb`` for nbgrader's ``source/`` folder."""
    target = Path(out_dir) / assignment.name / f"{assignment.name}.ipynb"
    return write_notebook(nbgrader_notebook(assignment), target)


__all__ = ["export_nbgrader", "nbgrader_notebook", "release",
           "student_notebook", "student_source", "write_atomically", "write_notebook"]
