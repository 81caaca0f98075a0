"""Write the student version of an assignment, and an nbgrader-ready instructor version.

The student version replaces each solution region by ``# YOUR CODE HERE`` and
``raise NotImplementedError()`` (at the region's indentation) and drops hidden tests, markers
included. Each cell carries ``metadata.mha_classroom = {"role": ..., "grade_id": ...}`` so the
grader can find the test cells again, even if a student moves them, and the same nbgrader metadata
(schema 3) as ``nbgrader generate_assignment`` writes from :func:`export_nbgrader`'s instructor
notebook: the same ``grade_id`` for every cell, test cells ``grade`` with their points and
``locked``, answer cells ``solution``, given code ``locked``, each written answer ``solution`` and
``grade``, the checksums nbgrader computes, and the same read-only flags for Jupyter. So a notebook
this module releases, per-student copies included, is graded by nbgrader's ``autograde`` in a course
whose source is :func:`export_nbgrader`'s (and ``nbgrader validate`` reports an unanswered one as
failing). The variant cell is the one cell left unlocked for nbgrader, so that nbgrader keeps each
copy's own numbers instead of restoring the source's (it is read-only in Jupyter all the same).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from mha_classroom.source import Assignment, AssignmentError, Cell, variant_cell, written_header

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


def _notebook(cells: list[dict], assignment: Assignment) -> dict:
    metadata = {**NOTEBOOK_METADATA, "mha_classroom": {"assignment": assignment.name}}
    return {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def _cell_dict(index: int, cell: Cell, source: str, metadata: dict) -> dict:
    base: dict[str, Any] = {"cell_type": "markdown" if cell.role == "markdown" else "code",
                            "id": f"cell-{index}", "metadata": metadata, "source": source}
    if cell.role != "markdown":
        base.update(execution_count=None, outputs=[])
    return base


def _nbgrader_ids(assignment: Assignment) -> list[dict[str, Any] | None]:
    """Each cell's nbgrader metadata (None for a cell nbgrader leaves alone), as the instructor
    notebook declares it; the same ids whichever notebook is written."""
    variant = variant_cell(assignment)
    found: list[dict[str, Any] | None] = []
    answers = 0
    for index, cell in enumerate(assignment.cells):
        nbgrader: dict[str, Any] = {"schema_version": 3, "grade": False, "solution": False,
                                    "locked": False}
        written = written_header(cell.source) if cell.role == "markdown" else None
        if cell.role == "solution":
            answers += 1
            nbgrader.update(solution=True, grade_id=f"answer_{answers}")
        elif cell.role == "test":
            nbgrader.update(grade=True, locked=True, grade_id=cell.grade_id, points=cell.points)
        elif cell.role == "given" and index != variant:
            nbgrader.update(locked=True, grade_id=f"given_{index}")
        elif written:  # a manually graded answer: nbgrader keeps it for the formgrader
            nbgrader.update(solution=True, grade=True, grade_id=written["id"],
                            points=float(written["points"]))
        found.append(nbgrader if "grade_id" in nbgrader else None)
    ids = [entry["grade_id"] for entry in found if entry is not None]
    if len(ids) != len(set(ids)):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise AssignmentError(f"{assignment.path}: grade ids used twice for nbgrader: {', '.join(twice)} "
                              "(answer_<n> and given_<n> name the answer and given cells): rename them")
    return found


def nbgrader_checksum(cell: dict) -> str:
    """The checksum nbgrader keeps of a cell (its source, type, roles, id and points), computed as
    nbgrader 0.9 does, so that ``nbgrader validate`` sees an edited locked cell."""
    meta = cell["metadata"]["nbgrader"]
    grade, solution = bool(meta.get("grade")), bool(meta.get("solution"))
    locked = False if solution else (True if grade else bool(meta.get("locked")))
    digest = hashlib.md5(usedforsecurity=False)
    for part in (cell["source"], cell["cell_type"], str(grade), str(solution), str(locked),
                 meta["grade_id"]):
        digest.update(part.encode("utf-8"))
    if grade:
        digest.update(str(float(meta["points"])).encode("utf-8"))
    return digest.hexdigest()


def _locks(nbgrader: dict[str, Any]) -> dict[str, bool]:
    """The Jupyter flags nbgrader's release sets: a cell that cannot be deleted or edited."""
    if nbgrader["solution"]:
        return {"deletable": False}
    return {"deletable": False, "editable": False}


def student_notebook(assignment: Assignment) -> dict:
    """Return the released notebook (nbformat 4 as a dict) for students, with nbgrader's metadata."""
    cells = []
    variant = variant_cell(assignment)
    for index, (cell, nbgrader) in enumerate(zip(assignment.cells, _nbgrader_ids(assignment),
                                                 strict=True)):
        metadata: dict[str, Any] = {"mha_classroom": {"role": cell.role}}
        grade_id = cell.grade_id or (nbgrader["grade_id"] if nbgrader and nbgrader["grade"] else None)
        if grade_id:
            metadata["mha_classroom"]["grade_id"] = grade_id
        entry = _cell_dict(index, cell, student_source(cell), metadata)
        if nbgrader is not None:
            metadata.update(_locks(nbgrader))
            metadata["nbgrader"] = {**nbgrader, "cell_type": entry["cell_type"]}
            metadata["nbgrader"]["checksum"] = nbgrader_checksum(entry)
        elif index == variant:
            metadata.update(deletable=False, editable=False)  # read-only in Jupyter, open to nbgrader
        cells.append(entry)
    return _notebook(cells, assignment)


def nbgrader_notebook(assignment: Assignment) -> dict:
    """Return the instructor notebook with nbgrader cell metadata (schema 3), markers kept.

    Teachers who use nbgrader put it in ``source/<assignment>/`` and run ``nbgrader
    generate_assignment`` as usual: solution cells are marked ``solution``, test cells ``grade``
    with their points and locked, every other code cell but the variant cell locked, and each
    written answer (Markdown) ``solution`` and ``grade`` with its points: a manually graded answer.
    """
    cells = []
    for index, (cell, nbgrader) in enumerate(zip(assignment.cells, _nbgrader_ids(assignment),
                                                 strict=True)):
        metadata = {"nbgrader": nbgrader} if nbgrader is not None else {}
        cells.append(_cell_dict(index, cell, cell.source, metadata))
    return _notebook(cells, assignment)


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


__all__ = ["export_nbgrader", "nbgrader_checksum", "nbgrader_notebook", "release",
           "student_notebook", "student_source", "write_atomically", "write_notebook"]
