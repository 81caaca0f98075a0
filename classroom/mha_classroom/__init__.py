"""Classroom tools: release assignments to students and grade what they hand in.

The assignments in ``assignments/`` are written once with nbgrader's markers; this package reads
them (:mod:`~mha.classroom.source`), writes student and nbgrader versions
(:mod:`~mha.classroom.release`), and grades submissions by *record and replay*: the student's code
runs only inside a bubblewrap sandbox (:mod:`~mha.classroom.sandbox`, :mod:`~mha.classroom.runner`)
where it answers the tests' calls as plain data (:mod:`~mha.classroom.wire`); the tests, hidden
ones included, the check functions and the points run in the grader on those answers
(:mod:`~mha.classroom.probes`, :mod:`~mha.classroom.grade`, :mod:`~mha.classroom.reports`).
Command line::

    python -m mha.classroom release assignments/*.md --out release/
    python -m mha.classroom grade assignments/01-self-attention.md submitted/ --out grades/
"""

from mha.classroom.grade import StudentResult, grade_folder, grade_submission
from mha.classroom.release import export_nbgrader, release, student_notebook
from mha.classroom.reports import write_reports
from mha.classroom.sandbox import Limits, SandboxUnavailable, get_sandbox
from mha.classroom.source import Assignment, AssignmentError, MissingExtra, load_assignment

__all__ = [
    "Assignment", "AssignmentError", "Limits", "MissingExtra", "SandboxUnavailable",
    "StudentResult", "export_nbgrader", "get_sandbox", "grade_folder", "grade_submission",
    "load_assignment", "release", "student_notebook", "write_reports",
]
