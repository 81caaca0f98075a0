"""Classroom tools: release assignments to students and grade what they hand in.

The assignments in ``assignments/`` are written once with nbgrader's markers; this package reads
them (:mod:`~mha_classroom.source`, with what each needs checked by :mod:`~mha_classroom.needs`),
writes student and nbgrader versions with nbgrader's metadata (:mod:`~mha_classroom.release`), one
copy per student from the teacher's seed (:mod:`~mha_classroom.variants`,
:mod:`~mha_classroom.seeds`), and grades submissions by *record and replay*: the student's code runs
only inside a bubblewrap sandbox (:mod:`~mha_classroom.sandbox`, with a seccomp allow-list,
:mod:`~mha_classroom.seccomp`, and one memory budget per run, :mod:`~mha_classroom.budget`; inside,
:mod:`~mha_classroom.runner`) where it answers the tests' calls as plain data
(:mod:`~mha_classroom.wire`), the hidden calls apart (:mod:`~mha_classroom.collect`); the tests,
hidden ones included, the check functions and the points run in the grader on those answers
(:mod:`~mha_classroom.probes`, :mod:`~mha_classroom.grade`). The folder is read by
:mod:`~mha_classroom.intake` against the class list (:mod:`~mha_classroom.roster`);
:mod:`~mha_classroom.reports`, :mod:`~mha_classroom.rubrics` and :mod:`~mha_classroom.batch` write
what the teacher and each student read, as each student finishes, through
:mod:`~mha_classroom.exports` (data, never markup or formulas), with signed progress records
(:mod:`~mha_classroom.records`); :mod:`~mha_classroom.copies` lists evidence of copying for the
teacher, with its chance; :mod:`~mha_classroom.gradebook` loads written scores into nbgrader.
Command line (:mod:`~mha_classroom.commands`)::

    mha-classroom release assignments/*.md --out release/
    mha-classroom grade assignments/01-self-attention.md submitted/ --out grades/
"""

import re as _re

__version__ = "0.2.0"  # the distribution's version is read from here (classroom/pyproject.toml)
#: The oldest course package this grader works with (classroom/pyproject.toml says the same).
MHA_FLOOR = "0.2.0"


def _check_course_package() -> None:
    """Stop with the fix when the course package is missing or older than :data:`MHA_FLOOR` (an
    editable or ``--no-deps`` install skips pip's check)."""
    try:
        import mha
    except ImportError:
        raise ImportError(f"mha-classroom {__version__} needs the course package mha-course >= "
                          f"{MHA_FLOOR}: in a clone of the course, pip install . ./classroom") from None

    def parts(version: str) -> tuple[int, ...]:
        return tuple(int(number) for number in _re.findall(r"\d+", version)[:3])

    found = getattr(mha, "__version__", "0")
    if parts(found) < parts(MHA_FLOOR):
        raise ImportError(f"mha-classroom {__version__} needs mha-course >= {MHA_FLOOR}, but "
                          f"mha-course {found} is installed (at {mha.__file__}): in a clone of the "
                          "course, pip install --upgrade . ./classroom")


_check_course_package()

from mha_classroom.grade import StudentResult, grade_folder, grade_submission  # noqa: E402
from mha_classroom.release import export_nbgrader, release, student_notebook  # noqa: E402
from mha_classroom.reports import write_reports  # noqa: E402
from mha_classroom.sandbox import Limits, SandboxUnavailable, get_sandbox  # noqa: E402
from mha_classroom.source import Assignment, AssignmentError, MissingExtra, load_assignment  # noqa: E402

__all__ = [
    "MHA_FLOOR", "Assignment", "AssignmentError", "Limits", "MissingExtra", "SandboxUnavailable",
    "StudentResult", "export_nbgrader", "get_sandbox", "grade_folder", "grade_submission",
    "load_assignment", "release", "student_notebook", "write_reports",
]
