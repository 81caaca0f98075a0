"""Ask one student's code for its answers: sandboxed runs, and what the grader may learn from each.

A run sends the student's cells and the visible tests' calls; once their answers are in (the
``visible_done`` frame), the hidden tests' calls. Everything the student can see, or that decides a
visible test, comes from the *visible phase* of runs whose existence the visible phase alone
decided: the cells' errors, the notes, the signatures, the borrowed test cells, the second run with
``mha``, the time and run budget of the visible calls. The hidden phase gives only the hidden calls'
answers, with a budget of its own, and no note: a run that crashes, stalls or is killed once it
holds hidden inputs ends as "not answered", which the feedback shows as a hidden test that failed,
with the same words whatever happened. So a student who makes their code behave differently on the
hidden inputs learns nothing from their feedback but the pass or fail of the hidden tests.

A run that a cell or a visible call ends (time limit, memory, ``os._exit``) is repeated without that
cell or call, so the rest still counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mha_classroom.wire as wire
from mha import checks
from mha_classroom.borrowed import borrowed_test_cells
from mha_classroom.probes import Answer, Probe, signature_of
from mha_classroom.seccomp import syscall_number
from mha_classroom.stand_ins import MISSING

MAX_RUNS = 8  # runs for the visible calls (and the hidden ones that go with them)
MAX_HIDDEN_RUNS = 8  # runs for hidden calls alone (a round of chained hidden calls, a stalled one)
MAX_BORROWS = 3  # runs again with test cells whose names the code used (mha_classroom.borrowed)
BUDGET_RUNS = 3  # each phase's seconds stop at this many times the per-run time limit
MAX_RESULT_BYTES = 8 * 2**20
STATUSES = {"ok", "raised", "missing", "not_callable", "timeout", "unsupported"}
_MHA_MISSING = MISSING.split("(")[0]  # "No module named 'mha' "


@dataclass
class Spend:
    """Runs and seconds one phase has used, against its budget."""

    max_runs: int
    max_seconds: float
    runs: int = 0
    seconds: float = 0.0

    def spent(self) -> bool:
        return self.runs >= self.max_runs or self.seconds >= self.max_seconds


@dataclass
class Collected:
    """Everything the runs of one submission told the grader."""

    visible: Spend
    hidden: Spend
    answers: dict = field(default_factory=dict)
    cells: dict = field(default_factory=dict)
    info: dict | None = None  # the visible_done frame of the runs that count
    notes: list = field(default_factory=list)
    events: set = field(default_factory=set)  # for the teacher's summary only
    stalls: dict = field(default_factory=dict)  # probe key -> runs that ran out of time on it
    used_mha: list = field(default_factory=list)  # where the code needed the package

    @classmethod
    def for_limits(cls, limits) -> Collected:
        return cls(Spend(MAX_RUNS, BUDGET_RUNS * limits.timeout),
                   Spend(MAX_HIDDEN_RUNS, BUDGET_RUNS * limits.timeout))

    @property
    def defined(self) -> set | None:
        signatures = (self.info or {}).get("signatures")
        return set(signatures) if isinstance(signatures, dict) else None

    @property
    def signatures(self) -> dict:
        signatures = (self.info or {}).get("signatures")
        return dict(signatures) if isinstance(signatures, dict) else {}


@dataclass
class Request:
    """What to ask in a run: the cells, the calls, the names, which run, with which files."""

    sandbox: object
    cells: list
    names: list
    functions: list
    limits: object
    files: str | None = None
    stand_in: tuple = ()


def _job(request: Request, visible, hidden, with_mha) -> tuple[bytes, bytes | None]:
    """The first message (cells, visible calls) and the second (hidden calls, or None)."""
    sandbox, limits = request.sandbox, request.limits
    header = {"cells": request.cells, "answers": sorted(request.names),
              "functions": list(request.functions), "hidden_follow": bool(hidden),
              "path": [sandbox.package_path()] if with_mha else [], "block_mha": not with_mha,
              "cell_timeout": limits.cell_timeout, "probe_timeout": limits.probe_timeout,
              "max_result_bytes": MAX_RESULT_BYTES, "checks_names": list(checks.__all__),
              "keyctl": syscall_number("keyctl"), "stand_in": list(request.stand_in)}
    return wire.pack_calls(header, visible), (wire.pack_calls({}, hidden) if hidden else None)


def _answer(result, arrays, phase) -> Answer:
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
            return Answer("unsupported", detail=f"returned a value of type {str(kind)[:60]}, which the "
                          "grader cannot check: return NumPy arrays, numbers, strings, or tuples, "
                          "lists and dicts of them", phase=phase)
        mutated = []
        for item in result.get("mutated", ()):
            if isinstance(item, list) and len(item) == 2 and type(item[0]) in (int, str):
                try:
                    wire.decode(item[1], arrays)
                    mutated.append((item[0], item[1]))
                except (wire.WireError, ValueError):
                    pass
        return Answer("ok", out, tuple(arrays), mutated=tuple(mutated), phase=phase)
    if status == "raised":
        exc = result.get("exc")
        if not (isinstance(exc, list) and len(exc) == 2 and all(isinstance(x, str) for x in exc)):
            raise wire.WireError("malformed exception")
        return Answer("raised", exc=(exc[0][:100], exc[1][:1000]), phase=phase)
    detail = result.get("type") if status == "not_callable" else result.get("why")
    detail = detail if isinstance(detail, str) else ""
    if status == "unsupported":
        detail = f"its answer could not be checked ({detail[:200]})"
    return Answer(status, detail=detail[:200], phase=phase)


@dataclass
class RunResult:
    reports: dict
    visible: dict
    hidden: dict
    info: dict | None
    output: object


def one_run(request: Request, visible: list[Probe], hidden: list[Probe], with_mha: bool):
    """One sandbox run: cell reports, visible and hidden answers, the visible_done frame.

    An answer counts only on its side of the moment the hidden calls were sent: the visible ones
    before, the hidden ones after.
    """
    first, second = _job(request, visible, hidden, with_mha)
    cells = request.cells
    output = request.sandbox.run(first, second, with_mha, request.limits,
                                 max_frames=len(cells) + len(visible) + len(hidden) + 2,
                                 visible_frames=len(cells) + len(visible) + 1, files=request.files)
    result = RunResult({}, {}, {}, None, output)
    numbers = {number for number, _ in cells}
    split = output.split if output.split >= 0 else float("inf")
    ordered = visible + hidden
    for header, arrays, offset in output.frames:
        try:
            index = header.get("probe")
            if "cell" in header and header["cell"] in numbers and offset <= split:
                error = header.get("error")
                valid = (isinstance(error, list) and len(error) == 3
                         and all(isinstance(x, str) for x in error[:2]) and type(error[2]) is int)
                result.reports[header["cell"]] = (str(header.get("status"))[:10],
                                                  tuple(error) if valid else None)
            elif type(index) is int and 0 <= index < len(ordered):
                if index < len(visible) and offset <= split:
                    result.visible[ordered[index].key] = _answer(header.get("result"), arrays,
                                                                 "visible")
                elif index >= len(visible) and offset > split:
                    result.hidden[ordered[index].key] = _answer(header.get("result"), arrays,
                                                                "hidden")
            elif header.get("phase") == "visible_done" and offset <= split:
                result.info = header
            elif header.get("end") is not True:
                break
        except (wire.WireError, TypeError, ValueError, AttributeError):
            break
    return result


def _account(got: Collected, result: RunResult, hidden_only: bool) -> None:
    before, after = result.output.seconds
    if hidden_only:  # a run made for hidden calls alone: all of it is the hidden phase's
        got.hidden.runs += 1
        got.hidden.seconds += before + after
    else:
        got.visible.runs += 1
        got.visible.seconds += before
        got.hidden.seconds += after
    if result.output.ending in ("timeout", "killed"):
        got.events.add(result.output.ending)


def _give_up(got: Collected, probes: list[Probe], ending: str, detail: str, visible: bool) -> None:
    """After a run ended in a call: a stalled call goes on in a fresh run (twice at most); a crash
    gives up every call of the function that crashed it."""
    first = probes[0]
    if ending == "timeout":
        got.stalls[first.key] = got.stalls.get(first.key, 0) + 1
        if got.stalls[first.key] >= 2:
            got.answers[first.key] = Answer("not_run", detail=detail if visible else "")
        return
    for probe in probes:
        if probe.name == first.name:
            got.answers[probe.key] = Answer("not_run", detail=detail if visible else "")


def ask(request: Request, probes: list[Probe], with_mha: bool, got: Collected, quiet: bool):
    """Run until the visible calls are answered or given up on, then the hidden ones; return the
    cell reports and the visible_done frame of the last run whose visible phase completed."""
    cells = list(request.cells)
    visible = [p for p in probes if not p.hidden]
    hidden = [p for p in probes if p.hidden]
    reports, info, stopped = {}, None, {}
    spend = got.hidden if quiet else got.visible  # a quiet run exists for hidden calls only
    while info is None and not spend.spent():
        asked_hidden = [] if got.hidden.spent() else hidden
        run = one_run(Request(**{**vars(request), "cells": cells}), visible, asked_hidden, with_mha)
        _account(got, run, hidden_only=quiet)
        got.answers.update(run.visible)
        got.answers.update(run.hidden)
        if run.info is not None:
            reports, info = run.reports, run.info
            break
        output = run.output
        unanswered = [p for p in visible if p.key not in run.visible]
        culprit = next((number for number, _ in cells if number not in run.reports), None)
        if culprit is not None:
            if not quiet:
                got.notes.append(f"cell {culprit} ended the run ({output.detail}); the grader "
                                 "ran your notebook again without it")
            stopped[culprit] = ("error", ("Stopped", output.detail, 0))
            cells = [(n, "pass" if n == culprit else s) for n, s in cells]
        elif unanswered and output.ending != "garbled":
            _give_up(got, unanswered, output.ending, output.detail, visible=True)
            visible = [p for p in unanswered if p.key not in got.answers]
        else:
            if not quiet:
                got.notes.append(f"the grader could not read your code's answers: {output.detail}")
            break
    for probe in visible:
        got.answers.setdefault(probe.key, Answer(
            "not_run", detail="not run: the grader gave up after the run ended early several times"))
    if info is not None:
        _ask_hidden(Request(**{**vars(request), "cells": cells}), hidden, with_mha, got)
    for probe in hidden:
        got.answers.setdefault(probe.key, Answer("not_run", phase="hidden"))
    return {**reports, **stopped}, info


def _ask_hidden(request: Request, hidden: list[Probe], with_mha: bool, got: Collected) -> None:
    """Runs for the hidden calls left unanswered (their own budget; nothing of them is reported)."""
    left = [p for p in hidden if p.key not in got.answers]
    while left and not got.hidden.spent():
        run = one_run(request, [], left, with_mha)
        _account(got, run, hidden_only=True)
        got.answers.update(run.hidden)
        if run.info is None:
            return
        still = [p for p in left if p.key not in run.hidden]
        if still:
            _give_up(got, still, run.output.ending, "", visible=False)
        left = [p for p in still if p.key not in got.answers]


def _mha_wanted(reports, info, probes, answers) -> bool:
    """From the visible phase only: did the code use (or need) the ``mha`` package?"""
    if info is None or info.get("mha_used") is True:
        return True
    for probe in probes:
        answer = answers.get(probe.key)
        if answer and answer.status == "raised" and "mha" in answer.exc[1]:
            return True
    return any(error and "mha" in error[1] for _, error in reports.values())


def collect(request: Request, probes: list[Probe], got: Collected, quiet: bool = False) -> None:
    """Answer ``probes``: first without ``mha``; again with it, if the code used it, the calls it
    could not answer without it (and the cells, for their true errors).

    An answer given without ``mha`` stands: code that answers with ``mha`` when it is there and
    otherwise with something else is graded on what it does on its own, as the NumPy-only test
    assumes. A function that answered a visible call only with ``mha`` fails the NumPy-only test,
    whatever it returned without ``mha`` for that test's own inputs.
    """
    reports, info = ask(request, probes, False, got, quiet)
    main = [p for p in probes if p.variant == "main"
            and not (p.key in got.answers and got.answers[p.key].status == "ok")]
    visible_main = [p for p in main if not p.hidden]
    if _mha_wanted(reports, info, visible_main, got.answers):
        absent = {n for n, (_, error) in reports.items() if error and error[1].startswith(_MHA_MISSING)}
        with_reports, with_info = ask(request, main, True, got, quiet)
        needed = {p.name for p in visible_main
                  if p.key in got.answers and got.answers[p.key].status == "ok"}
        for probe in probes:
            if probe.variant == "numpy_only" and probe.name in needed:
                got.answers[probe.key] = Answer("raised", exc=(
                    "ImportError", f"{probe.name} answered other calls only when the mha package "
                    "was there"))
        if with_info is not None:
            absent = {n for n in absent if with_reports.get(n, ("ok", None))[0] == "ok"}
            reports, info = with_reports, with_info
        if not quiet:
            got.used_mha = sorted(needed) + [f"cell {n}" for n in sorted(absent)]
    if not quiet:
        got.cells.update(reports)
        if info is not None:
            got.info = info


def collect_borrowing(assignment, notebook, request: Request, probes, got: Collected):
    """:func:`collect`, run again from the start while the code turns out to use names that visible
    test cells define (:mod:`~mha_classroom.borrowed`). Returns the cells that ran and the numbers
    of the test cells among them."""
    borrowed: set[int] = set()
    start, said = len(got.notes), []
    own = list(request.cells)
    collect(request, probes, got)
    for _ in range(MAX_BORROWS):  # a test cell brought in may need a name from a test cell above it
        visible = {key: answer for key, answer in got.answers.items() if answer.phase == "visible"}
        extra, notes = borrowed_test_cells(assignment, notebook, got.cells, visible,
                                           {number for number, _ in own})
        if not extra or got.visible.spent():
            break
        own = sorted(own + extra)
        borrowed.update(number for number, _ in extra)
        said += notes
        got.notes[start:] = said  # the last run's own notes were about a notebook without those cells
        for found in (got.answers, got.cells, got.stalls):  # what the next run finds replaces it
            found.clear()
        got.info, got.used_mha = None, []
        request = Request(**{**vars(request), "cells": own})
        collect(request, probes, got)
    return own, borrowed


def consistent_signatures(signatures: dict, probes, answers: dict) -> dict:
    """The reported signatures that every visible call the code answered fits.

    A signature comes from the student's process, where ``__signature__`` can claim anything: a
    function that takes a mask may claim it does not, and a check would then skip its mask cases.
    A claim that a call the code answered contradicts (four arguments answered by a function said to
    take three) is dropped, and the tests treat that function as taking any arguments.
    """
    kept = dict(signatures)
    for probe in probes:
        answer = answers.get(probe.key)
        if (probe.kind != "call" or probe.hidden or probe.name not in kept or answer is None
                or answer.status != "ok"):
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
