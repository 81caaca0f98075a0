"""Check an assignment before releasing it: full marks for the solution, none for the stub, no leak.

:func:`validate` records the tests' calls with the instructor's solution (every test must pass),
then grades two notebooks made from the source in the sandbox, exactly as students' work is
graded: the instructor version (solutions in) must score every point, the released version must
score zero without the grader failing, and no line of a solution or a hidden test may appear in
the released notebook. An assignment with a "NumPy only" test (``package_forbidden``) must call
every answer function in it: a function the test never calls would keep the point whatever it uses.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from mha_classroom.grade import StudentResult, grade_submission, recording_for
from mha_classroom.release import nbgrader_notebook, student_notebook, write_notebook
from mha_classroom.sandbox import Limits, Sandbox
from mha_classroom.source import Assignment, AssignmentError

MIN_LEAK_CHARS = 8  # shorter lines (`else:`, `return x`) may appear anywhere and prove nothing


def secret_lines(assignment: Assignment) -> set[str]:
    """Stripped lines found only in solutions and hidden tests, long enough to be telling."""
    def lines(kinds):
        return {line.strip() for cell in assignment.cells for segment in cell.segments
                if segment.kind in kinds for line in segment.lines}

    public = lines(("plain",))
    return {line for line in lines(("solution", "hidden"))
            if len(line) >= MIN_LEAK_CHARS and line not in public}


def leaked_lines(assignment: Assignment, notebook: dict) -> list[str]:
    """Secret lines found in any cell of ``notebook`` (normally none)."""
    shown = {line.strip() for cell in notebook["cells"] for line in cell["source"].splitlines()}
    return sorted(secret_lines(assignment) & shown)


def numpy_only_gaps(recording) -> list[str]:
    """The answer functions a NumPy-only test never calls (none if there is no such test)."""
    called = {p.name for p in recording.probes.values() if p.variant == "numpy_only"}
    if not called:
        return []
    return [name for name, kind in recording.answers.items() if kind == "call" and name not in called]


def validate(assignment: Assignment, limits: Limits | None = None,
             sandbox: Sandbox | None = None) -> list[str]:
    """Return the problems found (an empty list means the assignment is ready to release)."""
    problems = []
    try:
        recording = recording_for(assignment)
    except AssignmentError as error:
        return [f"recording the tests' calls failed: {error}"]
    if missing := numpy_only_gaps(recording):
        problems.append(f"the NumPy-only test (package_forbidden) never calls {', '.join(missing)}: "
                        "call every answer function in it, and check what it returns")
    released = student_notebook(assignment)
    if leaked := leaked_lines(assignment, released):
        problems.append(f"the released notebook shows {len(leaked)} secret line(s), e.g. "
                        f"{leaked[0]!r}")
    results: dict[str, StudentResult] = {}
    with tempfile.TemporaryDirectory(prefix="mha-validate-") as folder:
        for name, notebook in (("instructor", nbgrader_notebook(assignment)),
                               ("released", released)):
            path = write_notebook(json.loads(json.dumps(notebook)), Path(folder) / f"{name}.ipynb")
            results[name] = grade_submission(assignment, name, path, limits or Limits(),
                                             sandbox=sandbox)
    instructor, stub = results["instructor"], results["released"]
    for question in instructor.questions:
        if question.points < question.max_points:
            problems.append(f"the instructor solution fails {question.grade_id}: "
                            f"{question.feedback}")
    if stub.points:
        passing = [q.grade_id for q in stub.questions if q.points]
        problems.append(f"the released notebook already scores {stub.points:g} "
                        f"(tests passing without an answer: {', '.join(passing)})")
    return problems
