"""Classroom tools: release assignments to students and grade what they hand in.

The assignments in ``assignments/`` are written once with nbgrader's markers; this package reads
them (:mod:`~mha.classroom.source`), writes student and nbgrader versions
(:mod:`~mha.classroom.release`), and grades submissions, each in its own limited process
(:mod:`~mha.classroom.sandbox`, :mod:`~mha.classroom.grade`). Command line::

    python -m mha.classroom release assignments/*.md --out release/
    python -m mha.classroom grade assignments/01-self-attention.md submitted/ --out grades/
"""

from mha.classroom.grade import StudentResult, grade_folder, grade_submission, write_reports
from mha.classroom.release import export_nbgrader, release, student_notebook
from mha.classroom.sandbox import Limits, run_cells
from mha.classroom.source import Assignment, AssignmentError, load_assignment

__all__ = [
    "Assignment", "AssignmentError", "Limits", "StudentResult", "export_nbgrader", "grade_folder",
    "grade_submission", "load_assignment", "release", "run_cells", "student_notebook",
    "write_reports",
]
