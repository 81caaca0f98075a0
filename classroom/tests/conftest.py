"""The grader's own tests (shipped in its sdist): they need the course package, the grader and
pytest, no sandbox and no checkout of the course. Assignments are made here, small."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mha_classroom import load_assignment

#: A small assignment: a variant cell, one answer function, a value answer, a test of each, and a
#: written answer.
CELLS = [
    ("code", "import math\nimport numpy as np"),
    ("code", "# variant: your numbers\nSEED = 0  # draw: integers(0, 2147483647)\n"
             "D_K = 64  # draw: choice(16, 32, 64, 128)\nROWS = 3  # draw: integers(2, 9)"),
    ("code", "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION"),
    ("code", "# grade_id: doubles  points: 2\nassert double(3) == 6"),
    ("code", "### BEGIN SOLUTION\nspread = math.sqrt(D_K) / D_K\ncells = ROWS * D_K\n"
             "### END SOLUTION"),
    ("code", "# grade_id: predict  points: 1\nassert isinstance(spread, float)\n"
             "### BEGIN HIDDEN TESTS\nassert math.isclose(spread, 1 / math.sqrt(D_K))\n"
             "assert cells == ROWS * D_K\n### END HIDDEN TESTS"),
    ("markdown", "<!-- written_answer: why  points: 3 -->\nYOUR ANSWER HERE"),
]


def write_source(path: Path, cells=CELLS) -> Path:
    """An assignment source as an ``.ipynb`` (the grader reads ``.md`` and ``.ipynb`` alike)."""
    notebook = {"cells": [{"cell_type": kind, "metadata": {}, "source": source,
                           **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                          for kind, source in cells],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


@pytest.fixture
def small(tmp_path):
    """The small assignment, loaded."""
    return load_assignment(write_source(tmp_path / "small.ipynb"))
