"""Classroom tools: release assignments to students and grade what they hand in.

The assignments in ``assignments/`` are written once with nbgrader's markers; this package reads
them (:mod:`~mha_classroom.source`), writes student and nbgrader versions
(:mod:`~mha_classroom.release`), and grades submissions by *record and replay*: the student's code
runs only inside a bubblewrap sandbox (:mod:`~mha_classroom.sandbox`, with a seccomp allow-list,
:mod:`~mha_classroom.seccomp`, and one memory budget per run, :mod:`~mha_classroom.budget`; inside,
:mod:`~mha_classroom.runner`) where it answers the tests' calls as plain data
(:mod:`~mha_classroom.wire`), the hidden calls apart (:mod:`~mha_classroom.collect`); the tests,
hidden ones included, the check functions and the points run in the grader on those answers
(:mod:`~mha_classroom.probes`, :mod:`~mha_classroom.grade`). The folder is read by
:mod:`~mha_classroom.intake`; :mod:`~mha_classroom.reports` and :mod:`~mha_classroom.batch` write
what the teacher and each student read, as each student finishes.
Command line::

    mha-classroom release assignments/*.md --out release/
    mha-classroom grade assignments/01-self-attention.md submitted/ --out grades/
"""

from mha_classroom.grade import StudentResult, grade_folder, grade_submission
from mha_classroom.release import export_nbgrader, release, student_notebook
from mha_classroom.reports import write_reports
from mha_classroom.sandbox import Limits, SandboxUnavailable, get_sandbox
from mha_classroom.source import Assignment, AssignmentError, MissingExtra, load_assignment

__version__ = "0.1.0"  # the distribution's version is read from here (classroom/pyproject.toml)

__all__ = [
    "Assignment", "AssignmentError", "Limits", "MissingExtra", "SandboxUnavailable",
    "StudentResult", "export_nbgrader", "get_sandbox", "grade_folder", "grade_submission",
    "load_assignment", "release", "student_notebook", "write_reports",
]
