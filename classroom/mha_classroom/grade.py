"""Grade submissions: the student's code answers probes in the sandbox, the grader runs the tests.

For each student: read the notebook defensively (:mod:`~mha_classroom.submission`), send its
non-test code cells and the assignment's probe calls to the sandboxed runner (first with the
``mha`` package absent; again with it only if the code asked for it; the hidden tests' calls only
once the visible ones are answered), validate the answers, and replay the instructor's tests on
them in this process (:mod:`~mha_classroom.probes`). Code that uses a name a visible test cell
defines runs again with that test cell (:mod:`~mha_classroom.borrowed`). A test that needs answers
to new inputs (one answer's output fed to another) gets another round. A run that a cell or a call
ends (time limit, memory, ``os._exit``) is repeated without that cell or call, so the rest still
counts. Each test cell scores all its points when it passes, none otherwise.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

import mha_classroom.wire as wire
from mha import checks
from mha_classroom.borrowed import borrowed_test_cells
from mha_classroom.probes import Answer, Probe, Recording, record, replay, signature_of
from mha_classroom.sandbox import Limits, Sandbox, get_sandbox
from mha_classroom.source import Assignment
from mha_classroom.submission import (
    Found,
    InvalidSubmission,
    find_submissions,
    notes_on_test_cells,
    read_notebook,
    untouched_test_cells,
)

MAX_ROUNDS = 8  # one new call a round when a test feeds an answer to another (6 in assignment 3)
MAX_RUNS = 8
MAX_BORROWS = 3  # runs again with test cells whose names the code used (mha_classroom.borrowed)
BUDGET_RUNS = 3  # a student's runs stop after this many times the per-run time limit
MAX_RESULT_BYTES = 8 * 2**20
STATUSES = {"ok", "raised", "missing", "not_callable", "timeout", "unsupported"}


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

    @property
    def points(self) -> float:
        return sum(question.points for question in self.questions)

    @property
    def max_points(self) -> float:
        return sum(question.max_points for question in self.questions)


@dataclass
class _Collected:
    answers: dict = field(default_factory=dict)
    cells: dict = field(default_factory=dict)
    defined: set | None = None
    signatures: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    events: set = field(default_factory=set)
    runs: int = 0
    deadline: float = float("inf")
    stalls: dict = field(default_factory=dict)  # probe key -> runs that ran out of time on it

    def exhausted(self) -> bool:
        return self.runs >= MAX_RUNS or time.monotonic() > self.deadline


_RECORDINGS: dict = {}


def recording_for(assignment: Assignment) -> Recording:
    """The assignment's probes (recorded once per process and source)."""
    key = (str(assignment.path), hash(tuple(cell.source for cell in assignment.cells)))
    if key not in _RECORDINGS:
        _RECORDINGS[key] = record(assignment)
    return _RECORDINGS[key]


def _job(cells, visible: list[Probe], hidden: list[Probe], answers, sandbox: Sandbox, with_mha,
         limits) -> tuple[bytes, bytes | None]:
    """The first message (cells, visible calls) and the second (hidden calls, or None)."""
    header = {"cells": cells, "answers": sorted(answers), "hidden_follow": bool(hidden),
              "path": [sandbox.package_path()] if with_mha else [], "block_mha": not with_mha,
              "cell_timeout": limits.cell_timeout, "probe_timeout": limits.probe_timeout,
              "max_result_bytes": MAX_RESULT_BYTES, "checks_names": list(checks.__all__)}
    return wire.pack_calls(header, visible), (wire.pack_calls({}, hidden) if hidden else None)


def _answer(result, arrays) -> Answer:
    """Validate one probe result from the runner (untrusted) into an Answer."""
    if not isinstance(result, dict) or result.get("status") not in STATUSES:
        raise wire.WireError("malformed result")
    status = result["status"]
    if status == "ok":
        out = result.get("out")
        try:
            wire.decode(out, arrays)
        except (wire.WireError, ValueError, OverflowError, TypeError, RecursionError):
            kind = out[1] if isinstance(out, list) and len(out) == 2 and out[0] == "x" else "value"
            return Answer("unsupported", detail=f"returned a {str(kind)[:60]} the grader cannot "
                          "check (return NumPy arrays, numbers, strings, tuples, lists or dicts)")
        mutated = []
        for item in result.get("mutated", ()):
            if (isinstance(item, list) and len(item) == 2 and type(item[0]) in (int, str)):
                try:
                    wire.decode(item[1], arrays)
                    mutated.append((item[0], item[1]))
                except (wire.WireError, ValueError):
                    pass
        return Answer("ok", out, tuple(arrays), mutated=tuple(mutated))
    if status == "raised":
        exc = result.get("exc")
        if not (isinstance(exc, list) and len(exc) == 2 and all(isinstance(x, str) for x in exc)):
            raise wire.WireError("malformed exception")
        return Answer("raised", exc=(exc[0][:100], exc[1][:1000]))
    detail = result.get("type") if status == "not_callable" else result.get("why")
    detail = detail if isinstance(detail, str) else ""
    if status == "unsupported":
        detail = f"its answer could not be checked ({detail[:200]})"
    return Answer(status, detail=detail[:200])


def _one_run(sandbox, cells, probes, answers_names, with_mha, limits, got: _Collected):
    """One sandbox run; returns (cell reports, answers by probe key, end frame or None, output).

    Answers to visible calls count only if they reached the grader before the hidden calls were
    sent, answers to hidden calls only after: the feedback never quotes anything written while
    the hidden inputs were inside the student's process.
    """
    got.runs += 1
    visible = [p for p in probes if not p.hidden]
    hidden = [p for p in probes if p.hidden]
    ordered = visible + hidden
    first, second = _job(cells, visible, hidden, answers_names, sandbox, with_mha, limits)
    # one frame per cell and per call, "visible_done" and "end": more is a flood, left unread
    output = sandbox.run(first, second, with_mha, limits, max_frames=len(cells) + len(ordered) + 2)
    reports, results, end = {}, {}, None
    numbers = {number for number, _ in cells}
    split = output.split if output.split >= 0 else float("inf")
    for header, arrays, offset in output.frames:
        try:
            index = header.get("probe")
            if "cell" in header and header["cell"] in numbers and offset <= split:
                error = header.get("error")
                valid = (isinstance(error, list) and len(error) == 3
                         and all(isinstance(x, str) for x in error[:2]) and type(error[2]) is int)
                reports[header["cell"]] = (str(header.get("status"))[:10],
                                           tuple(error) if valid else None)
            elif type(index) is int and 0 <= index < len(ordered):
                if (index < len(visible)) == (offset <= split):
                    results[ordered[index].key] = _answer(header.get("result"), arrays)
            elif header.get("end") is True:
                end = header
            elif header.get("phase") != "visible_done":
                break
        except (wire.WireError, TypeError, ValueError, AttributeError):
            break
    return reports, results, end, output


def _ask(sandbox, cells, probes, names, with_mha, limits, got: _Collected):
    """Run until every probe is answered or given up on (a culprit cell or call is skipped)."""
    cells = list(cells)
    probes = [p for p in probes if not p.hidden] + [p for p in probes if p.hidden]  # run order
    end, reports = None, {}
    while not got.exhausted():
        reports, results, end, output = _one_run(sandbox, cells, probes, names, with_mha,
                                                 limits, got)
        got.answers.update(results)
        if output.ending == "timeout":
            got.events.add("timeout")
        elif output.ending == "killed":
            got.events.add("killed")
        if end is not None or output.ending == "done":
            break
        unanswered = [p for p in probes if p.key not in results]
        culprit_cell = next((number for number, _ in cells if number not in reports), None)
        if culprit_cell is not None:
            got.notes.append(f"cell {culprit_cell} ended the run ({output.detail}); the grader "
                             "ran your notebook again without it")
            got.cells[culprit_cell] = ("error", ("Stopped", output.detail, 0))
            cells = [(n, "pass" if n == culprit_cell else s) for n, s in cells]
        elif unanswered and output.ending != "garbled":
            hidden_silent = output.split >= 0 and not any(p.hidden and p.key in results
                                                          for p in probes)
            # A run that crashed gives up on the function that crashed it, every call of it. One that
            # ran out of time (a slow but working function) goes on in a fresh run, within the
            # student's time budget, from the call it was in; a call in two such runs is given up.
            if output.ending == "timeout":
                stalled = unanswered[0]
                got.stalls[stalled.key] = got.stalls.get(stalled.key, 0) + 1
                if got.stalls[stalled.key] >= 2:
                    got.answers[stalled.key] = Answer("not_run", detail=output.detail)
            else:
                for probe in unanswered:  # the function that stopped the run, or every hidden call
                    if probe.name == unanswered[0].name or (hidden_silent and probe.hidden):
                        got.answers[probe.key] = Answer("not_run", detail=output.detail)
            probes = [probe for probe in unanswered if probe.key not in got.answers]
        else:
            got.notes.append(f"the grader could not read your code's answers: {output.detail}")
            break
        if not probes:
            break
    for probe in probes:
        got.answers.setdefault(probe.key, Answer("not_run", detail="not run: the grader gave up "
                                                 "after the run ended early several times"))
    if got.exhausted() and probes:
        got.events.add("timeout")
    return reports, end


def _mha_wanted(reports, end, probes, answers) -> bool:
    if end is None or end.get("mha_attempted") is True:
        return True
    for probe in probes:
        answer = answers.get(probe.key)
        if answer and answer.status == "raised" and "mha" in answer.exc[1]:
            return True
    return any(error and "mha" in error[1] for _, error in reports.values())


def _collect(sandbox, cells, probes, names, limits, got: _Collected) -> None:
    """Answer ``probes``: every probe first without ``mha``; again with it only the main probes that
    the code could not answer without it (if it asked for it).

    An answer given without ``mha`` stands: code that answers with ``mha`` when it is there and
    otherwise with something else (``try: from mha import softmax`` and a do-nothing fallback) is
    graded on what it does on its own, as the NumPy-only test assumes.
    """
    reports, end = _ask(sandbox, cells, probes, names, False, limits, got)
    main = [p for p in probes if p.variant == "main"
            and not (p.key in got.answers and got.answers[p.key].status == "ok")]
    if main and _mha_wanted(reports, end, main, got.answers):
        reports, end = _ask(sandbox, cells, main, names, True, limits, got)
        # A function that answered some calls only with mha present is not NumPy-only, whatever it
        # returned without mha for the NumPy-only test's inputs (which a student can recognise).
        needed_mha = {p.name for p in main if p.key in got.answers and got.answers[p.key].status == "ok"}
        for probe in probes:
            if probe.variant == "numpy_only" and probe.name in needed_mha:
                got.answers[probe.key] = Answer("raised", exc=(
                    "ImportError", f"{probe.name} answered other calls only when the mha package was there"))
    got.cells.update(reports)
    if end is not None:
        signatures = end.get("signatures")
        if isinstance(signatures, dict):
            got.defined = {name for name in names if name in signatures}
            got.signatures = {name: signatures[name] for name in got.defined}


def _collect_borrowing(assignment, cells, sandbox, own, probes, names, limits, got: _Collected):
    """:func:`_collect`, run again from the start while the code turns out to use names that visible
    test cells define (:mod:`~mha_classroom.borrowed`). Returns the cells that ran and the numbers
    of the test cells among them."""
    borrowed: set[int] = set()
    start, said = len(got.notes), []
    _collect(sandbox, own, probes, names, limits, got)
    for _ in range(MAX_BORROWS):  # a test cell brought in may need a name from a test cell above it
        extra, notes = borrowed_test_cells(assignment, cells, got.cells, got.answers,
                                           {number for number, _ in own})
        if not extra or got.exhausted():
            break
        own = sorted(own + extra)
        borrowed.update(number for number, _ in extra)
        said += notes
        got.notes[start:] = said  # the last run's own notes were about a notebook without those cells
        for found in (got.answers, got.cells, got.stalls):  # what the next run finds replaces it
            found.clear()
        got.defined, got.signatures = None, {}
        _collect(sandbox, own, probes, names, limits, got)
    return own, borrowed


def _consistent_signatures(signatures: dict, probes, answers: dict) -> dict:
    """The reported signatures that every call the code answered fits.

    A signature comes from the student's process, where ``__signature__`` can claim anything: a
    function that takes a mask may claim it does not, and a check would then skip its mask cases.
    A claim that a call the code answered contradicts (four arguments answered by a function said to
    take three) is dropped, and the tests treat that function as taking any arguments.
    """
    kept = dict(signatures)
    for probe in probes:
        answer = answers.get(probe.key)
        if probe.kind != "call" or probe.name not in kept or answer is None or answer.status != "ok":
            continue
        signature = signature_of(kept[probe.name])
        if signature is None:
            continue
        names = [key[1] for key, _ in probe.kwargs[1] if key[0] == "s"]  # kwargs: ["d", [[key, value]]]
        try:
            signature.bind(*[None] * len(probe.args[1]), **dict.fromkeys(names))
        except TypeError:
            del kept[probe.name]
    return kept


def _zero(assignment: Assignment, student: str, reason: str, event: str) -> StudentResult:
    message = f"not graded: {reason}"
    return StudentResult(student, tuple(QuestionResult(cast(str, t.grade_id), 0.0, t.points, message)
                                        for t in assignment.tests), (message,), (), (event,))


def grade_submission(assignment: Assignment, student: str, path: Path | None,
                     limits: Limits | None = None, problem: str = "",
                     sandbox: Sandbox | None = None) -> StudentResult:
    """Grade one student's notebook; never raises for anything the student did."""
    limits = limits or Limits()
    try:
        if path is None:
            raise InvalidSubmission(problem or "no notebook found")
        cells = read_notebook(path)
    except InvalidSubmission as error:
        return _zero(assignment, student, str(error), "invalid")
    sandbox = sandbox or get_sandbox()
    recording = recording_for(assignment)
    notes, events = notes_on_test_cells(assignment, cells)
    untouched = untouched_test_cells(assignment, cells)
    own = [(number, source) for number, (kind, source, _) in enumerate(cells, start=1)
           if kind == "code" and number not in untouched]
    got = _Collected(deadline=time.monotonic() + BUDGET_RUNS * limits.timeout)
    pending = list(recording.probes.values())
    known = dict(recording.probes)  # every probe asked so far, for checking what the code says of itself
    names = list(recording.answers)
    own, borrowed = _collect_borrowing(assignment, cells, sandbox, own, pending, names, limits, got)
    for round_ in range(MAX_ROUNDS):
        if round_:
            _collect(sandbox, own, pending, names, limits, got)
        signatures = _consistent_signatures(got.signatures, known.values(), got.answers)
        outcomes, missing = replay(assignment, recording, got.answers, got.defined, signatures)
        known.update(missing)
        pending = [probe for key, probe in missing.items() if key not in got.answers]
        if not pending or got.exhausted():
            break
    by_id = {outcome.grade_id: outcome for outcome in outcomes}
    questions = []
    for test in assignment.tests:
        outcome = by_id[test.grade_id]
        passed = outcome.status == "passed"
        feedback = {"passed": "passed", "failed": outcome.message}.get(
            outcome.status, "not graded: your answers led the test to calls the grader could not "
            "ask your code about in time")
        questions.append(QuestionResult(cast(str, test.grade_id), test.points if passed else 0.0,
                                        test.points, feedback))
    errors = []
    for number in sorted(set(got.cells) - borrowed):  # a borrowed test cell's errors are not the student's
        status, raised = got.cells[number]
        if status != "ok" and raised:
            where = f", line {raised[2]}" if raised[2] else ""
            errors.append(f"cell {number}{where}: {raised[0]}: {raised[1]}" if raised[1]
                          else f"cell {number}{where}: {raised[0]}")
        if status == "timeout":
            got.events.add("timeout")
        if raised and raised[0] == "MemoryError":
            got.events.add("memory")
    return StudentResult(student, tuple(questions), tuple(notes + got.notes), tuple(errors),
                         tuple(sorted(events | got.events)))


def grade_folder(assignment: Assignment, folder: Path, limits: Limits | None = None,
                 jobs: int = 2, sandbox: Sandbox | None = None) -> list[StudentResult]:
    """Grade every submission in ``folder``, ``jobs`` at a time, in student-id order."""
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    sandbox = sandbox or get_sandbox()
    submissions: list[Found] = find_submissions(folder, assignment.name)
    sandbox.check_private(folder, assignment.path)
    recording_for(assignment)  # record once, before the threads start

    def one(found: Found) -> StudentResult:
        try:
            result = grade_submission(assignment, found.student, found.path, limits,
                                      found.problem, sandbox)
        except Exception as error:  # noqa: BLE001 - one student's problem never stops the batch
            result = _zero(assignment, found.student, f"the grader failed on this submission "
                           f"({type(error).__name__}); tell your teacher", "grader_error")
        return replace(result, original=found.original if found.original != found.student else "")

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, submissions))
