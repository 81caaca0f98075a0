"""Grade submissions: the student's code answers probes in the sandbox, the grader runs the tests.

For each student: read the notebook defensively (:mod:`~mha_classroom.submission`), send its
non-test code cells and the assignment's probe calls to the sandboxed runner
(:mod:`~mha_classroom.collect`: first with the ``mha`` package absent, again with it only if the
code used it; the hidden tests' calls only once the visible ones are answered), validate the
answers, and replay the instructor's tests on them in this process
(:mod:`~mha_classroom.probes`). Code that uses a name a visible test cell defines runs again with
that test cell (:mod:`~mha_classroom.borrowed`). A test that needs answers to new inputs (one
answer's output fed to another) gets another round. Each test cell scores all its points when it
passes, none otherwise. Every text a student reads leaves out the grader's own folders.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

import mha_classroom.wire as wire
from mha_classroom.collect import (
    Collected,
    Request,
    collect,
    collect_borrowing,
    consistent_signatures,
)
from mha_classroom.intake import Found, find_submissions, sibling_modules
from mha_classroom.probes import Recording, make_probe, record, replay
from mha_classroom.sandbox import Limits, Sandbox, get_sandbox
from mha_classroom.source import Assignment
from mha_classroom.submission import (
    InvalidSubmission,
    foreign_tests,
    notes_on_test_cells,
    read_submission,
    untouched_test_cells,
)
from mha_classroom.text import without_paths
from mha_classroom.variants import same_cell, submitted_variant, variant_source

MAX_ROUNDS = 8  # one new call a round when a test feeds an answer to another (6 in assignment 3)
PENDING = ("not graded: your answers led the test to calls the grader could not ask your code "
           "about in time")
#: Packages a student's kernel has that the grader may not; without them the sandbox gives inert
#: stand-ins (mha_classroom.stand_ins) and the feedback says so.
KERNEL_PACKAGES = ("IPython", "matplotlib")


@dataclass(frozen=True)
class QuestionResult:
    """One test cell's result for one student."""

    grade_id: str
    points: float
    max_points: float
    feedback: str


@dataclass(frozen=True)
class StudentResult:
    """One student's results, notes for the feedback file, and events for the batch summary."""

    student: str
    questions: tuple[QuestionResult, ...]
    notes: tuple[str, ...] = ()
    cell_errors: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    original: str = ""  # the submission's file or folder name, when ``student`` had to change it
    used_mha: tuple[str, ...] = ()  # the answers (and cells) that needed the mha package
    values: tuple = ()  # (name, plain data) of each value answer given: variants compare them
    variant: str | None = None  # the variant cell handed in, when it is not the one released

    @property
    def points(self) -> float:
        return sum(question.points for question in self.questions)

    @property
    def max_points(self) -> float:
        return sum(question.max_points for question in self.questions)


_RECORDINGS: dict = {}


def recording_for(assignment: Assignment) -> Recording:
    """The assignment's probes (recorded once per process and source)."""
    key = (str(assignment.path), hash(tuple(cell.source for cell in assignment.cells)))
    if key not in _RECORDINGS:
        _RECORDINGS[key] = record(assignment)
    return _RECORDINGS[key]


def _zero(assignment: Assignment, student: str, reason: str, event: str) -> StudentResult:
    message = f"not graded: {reason}"
    return StudentResult(student, tuple(QuestionResult(t.test_id, 0.0, t.points, message)
                                        for t in assignment.tests), (message,), (), (event,))


def absent_kernel_packages() -> tuple[str, ...]:
    """The packages of :data:`KERNEL_PACKAGES` this Python cannot import."""
    return tuple(name for name in KERNEL_PACKAGES if importlib.util.find_spec(name) is None)


@contextmanager
def _files_for(path: Path, folder: Path | None):
    """A private copy of the ``.py`` files handed in next to the notebook (None if there are none)."""
    modules = sibling_modules(path, folder) if folder is not None else []
    if not modules:
        yield None
        return
    copy = Path(tempfile.mkdtemp(prefix="mha-files-"))
    try:
        for name, data in modules:
            (copy / name).write_bytes(data)
            (copy / name).chmod(0o444)
        copy.chmod(0o755)
        yield str(copy)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _notes_on_runs(got: Collected) -> list[str]:
    info = got.info or {}
    notes = []
    for entry in info.get("rebound") or ():
        if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str):
            name, cell, what = entry
            became = what if str(what).startswith("nothing") else f"a {what}"
            notes.append(f"a cell after cell {cell} made {name} {became}; the grader graded your "
                         f"function {name} as cell {cell} left it, as the test cells above saw it")
    for package in info.get("stand_ins") or ():
        if isinstance(package, str):
            notes.append(f"your notebook imports {package[:40]}, which is not installed where the "
                         "grader runs: the grader gave it a stand-in that does nothing (plots and "
                         "displays are not graded)")
    cells = [where for where in got.used_mha if where.startswith("cell ")]
    if cells and len(cells) == len(got.used_mha):
        notes.append(f"your notebook uses the mha package ({', '.join(cells)}); your answers "
                     "ran without it, as the NumPy-only test asks")
    return notes


def grade_submission(assignment: Assignment, student: str, path: Path | None,
                     limits: Limits | None = None, problem: str = "",
                     sandbox: Sandbox | None = None, folder: Path | None = None) -> StudentResult:
    """Grade one student's notebook; never raises for anything the student did. ``folder``: the
    student's own folder, whose ``.py`` files next to the notebook the code may import."""
    limits = limits or Limits()
    try:
        if path is None:
            raise InvalidSubmission(problem or "no notebook found")
        notebook, declared = read_submission(path)
    except InvalidSubmission as error:
        return _zero(assignment, student, str(error), "invalid")
    if wrong := foreign_tests(assignment, notebook, declared):
        return _zero(assignment, student, wrong, "wrong_assignment")
    sandbox = sandbox or get_sandbox()
    recording = recording_for(assignment)
    notes, events = notes_on_test_cells(assignment, notebook)
    notebook, handed_in = _released_variant(assignment, notebook, notes, events)
    untouched = untouched_test_cells(assignment, notebook)
    own = [(number, source) for number, (kind, source, _) in enumerate(notebook, start=1)
           if kind == "code" and number not in untouched]
    got = Collected.for_limits(limits)
    pending = list(recording.probes.values())
    known = dict(recording.probes)  # every probe asked so far, for checking what the code says of itself
    names = list(recording.answers)
    functions = [name for name, kind in recording.answers.items() if kind == "call"]
    with _files_for(path, folder) as files:
        request = Request(sandbox, own, names, functions, limits, files, absent_kernel_packages())
        own, borrowed = collect_borrowing(assignment, notebook, request, pending, got)
        request = Request(**{**vars(request), "cells": own})
        for round_ in range(MAX_ROUNDS):
            if round_:  # a round for hidden calls alone says nothing to the student
                collect(request, pending, got, quiet=all(p.hidden for p in pending))
            visible = [probe for probe in known.values() if not probe.hidden]
            signatures = consistent_signatures(got.signatures, visible, got.answers)
            outcomes, missing = replay(assignment, recording, got.answers, got.defined, signatures)
            known.update(missing)
            pending = [probe for key, probe in missing.items() if key not in got.answers
                       or (got.answers[key].phase == "hidden" and not probe.hidden)]
            if not pending or (got.visible.spent() and got.hidden.spent()):
                break
    hide = sandbox.host_paths() + [str(path.parent), str(path), str(assignment.path.parent)]
    by_id = {outcome.grade_id: outcome for outcome in outcomes}
    questions = []
    for test in assignment.tests:
        outcome = by_id[test.test_id]
        passed = outcome.status == "passed"
        feedback = {"passed": "passed", "failed": outcome.message}.get(
            outcome.status, outcome.message or PENDING)
        questions.append(QuestionResult(test.test_id, test.points if passed else 0.0,
                                        test.points, without_paths(feedback, hide)))
    errors = []
    for number in sorted(set(got.cells) - borrowed):  # a borrowed test cell's errors are not the student's
        status, cell_error = got.cells[number]
        if status != "ok" and cell_error:
            where = f", line {cell_error[2]}" if cell_error[2] else ""
            errors.append(f"cell {number}{where}: {cell_error[0]}: {cell_error[1]}" if cell_error[1]
                          else f"cell {number}{where}: {cell_error[0]}")
        if status == "timeout":
            got.events.add("timeout")
        if cell_error and cell_error[0] == "MemoryError":
            got.events.add("memory")
    for number in sorted(borrowed & set(got.cells)):  # what really happened to a borrowed test cell
        status, cell_error = got.cells[number]
        if status != "ok" and cell_error:
            at = f" at line {cell_error[2]}" if cell_error[2] else ""
            got.notes.append(f"the test cell in cell {number} stopped{at} ({cell_error[0]}: "
                             f"{cell_error[1][:200]}) when the grader ran it with your code, as it would "
                             "in your notebook")
    said = notes + got.notes + _notes_on_runs(got)
    values = _value_answers(recording, got)
    return StudentResult(student, tuple(questions), tuple(without_paths(n, hide) for n in said),
                         tuple(without_paths(e, hide) for e in errors),
                         tuple(sorted(events | got.events | ({"used_mha"} if got.used_mha else set()))),
                         used_mha=tuple(got.used_mha), values=values, variant=handed_in)


def _released_variant(assignment: Assignment, notebook: list, notes: list[str], events: set[str]):
    """The notebook with the variant cell released to this student in place of the one handed in
    (as nbgrader restores a locked cell), and the cell handed in when it differed ("" if missing)."""
    released = variant_source(assignment)
    if released is None:
        return notebook, None
    found = submitted_variant(notebook)
    notebook = list(notebook)
    if found is not None:
        number, source = found
        if same_cell(source, released):
            return notebook, None
        notebook[number - 1] = ("code", released, None)
        notes.append(f"the variant cell (cell {number}, the numbers of your copy) is not the one you "
                     "were given; the grader ran the one released to you, as it was")
        events.add("variant_changed")
        return notebook, source
    first = next((i for i, (kind, source, grade_id) in enumerate(notebook)
                  if kind == "code" and grade_id is None), None)
    if first is None:
        notebook.insert(0, ("code", released, None))
    else:
        notebook[first] = ("code", f"{released}\n\n{notebook[first][1]}", None)
    notes.append("your notebook has no variant cell (the numbers of your copy, near the top); the "
                 "grader ran the one released to you before your first code cell")
    events.add("variant_missing")
    return notebook, ""


def _value_answers(recording: Recording, got: Collected) -> tuple:
    """The value answers the student's code gave, as plain data (lists for arrays)."""
    found = []
    for name, kind in recording.answers.items():
        answer = got.answers.get(make_probe(name, "value", "main").key) if kind == "value" else None
        if answer is None or answer.status != "ok":
            continue
        try:
            value = wire.decode(answer.out, list(answer.arrays))
        except Exception:  # noqa: BLE001 - an answer the grader cannot read compares to nothing
            continue
        if isinstance(value, (np.ndarray, np.generic)):
            value = value.tolist()
        if isinstance(value, (bool, int, float, str, list, tuple)):
            found.append((name, value))
    return tuple(found)


def grade_folder(assignment: Assignment, folder: Path, limits: Limits | None = None,
                 jobs: int = 2, sandbox: Sandbox | None = None, on_result=None,
                 skip=None, assignment_for=None, found: list[Found] | None = None,
                 roster=None) -> list[StudentResult]:
    """Grade every submission in ``folder``, ``jobs`` at a time, in student-id order.

    ``on_result(found, result)`` is called as each student finishes (from a worker thread, one at
    a time); ``skip(found)`` may return a result to use instead of grading (a resumed batch);
    ``assignment_for(student)`` gives each student's own copy (:mod:`~mha_classroom.variants`);
    ``found``: the submissions, when the caller has read the folder already; ``roster``: the class
    list (:mod:`~mha_classroom.roster`), whose ids alone are graded.
    """
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    sandbox = sandbox or get_sandbox()
    submissions: list[Found] = found if found is not None else find_submissions(
        folder, assignment.name, roster)
    sandbox.check_private(folder, assignment.path)
    recording_for(assignment)  # record once, before the threads start
    lock = threading.Lock()

    def one(found: Found) -> StudentResult:
        result = skip(found) if skip is not None else None
        if result is not None:
            return result
        try:
            own = assignment_for(found.student) if assignment_for else assignment
            result = grade_submission(own, found.student, found.path, limits,
                                      found.problem, sandbox, found.folder)
        except Exception as error:  # noqa: BLE001 - one student's problem never stops the batch
            result = _zero(assignment, found.student, f"the grader failed on this submission "
                           f"({type(error).__name__}); tell your teacher", "grader_error")
        result = replace(result, original=found.original if found.original != found.student else "")
        if on_result is not None:
            with lock:
                on_result(found, result)
        return result

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, submissions))
