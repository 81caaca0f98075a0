"""Record the answer calls the tests make, and replay the tests on a student's recorded answers.

**Recording** (trusted, once per assignment): the instructor's notebook runs in the grader with
every answer name (a function a solution cell defines) replaced by a proxy that notes each call
the *test cells* make, ``name(*args, **kwargs)`` with its inputs as plain data, and returns the
instructor's result. Calls made inside ``package_forbidden()`` are tagged "numpy_only".

**Replay** (trusted, per student): the instructor's given and test cells (hidden tests included)
run in the grader with each answer name bound to a :func:`replayer` that returns the output the
student's code gave for those exact inputs (matched by a hash of the inputs), re-raises the
exception it raised (standard types only), and applies any change it made to an input array. A
call whose inputs were not probed yet (a test that feeds one answer's output into another) stops
that test; the grader asks the student's code for it in another round. The tests, the check
functions and the points never run next to the student's code.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import inspect
import io
import os
import sys
import threading
import warnings
from dataclasses import dataclass, field

import numpy as np

import mha_classroom.wire as wire
from mha.checks import strict as checks_strict
from mha.checks.integrity import GRADING, MESSAGE, VARIANT, PackageUsed
from mha_classroom.source import Assignment, AssignmentError, instructor_source

HIDDEN_FAILED = ("a hidden test failed (the grader runs more tests than you see): make your answer "
                 "right in general, not only on the visible examples")
REPLAYED = {name: getattr(builtins, name) for name in (
    "ValueError", "TypeError", "IndexError", "KeyError", "ZeroDivisionError", "AssertionError",
    "AttributeError", "NotImplementedError", "RuntimeError", "ArithmeticError", "OverflowError",
    "FloatingPointError", "LookupError", "NameError", "UnboundLocalError", "RecursionError",
    "MemoryError", "ImportError", "ModuleNotFoundError", "UnicodeError")}
REPLAYED.update(LinAlgError=np.linalg.LinAlgError, AxisError=np.exceptions.AxisError)
_LOCK = threading.Lock()  # replays redirect sys.stdout: one at a time


class ProbeMissing(BaseException):  # noqa: N818 - not an error: "ask the student's code"
    """A replayed call with inputs the student's code was not asked about yet (``hidden``: from a
    hidden line)."""

    def __init__(self, name: str, hidden: bool = False):
        super().__init__(name)
        self.hidden = hidden


class AnswerError(Exception):
    """The student's answer raised an exception of a type the grader does not re-raise."""


class NotAnswered(AnswerError):  # noqa: N818 - read as "(the call was) not answered"
    """The grader got no answer to a visible call (time limit, a run cut short): its own words. On
    a hidden line, as every failure there, it becomes :data:`HIDDEN_FAILED`."""


@dataclass(frozen=True)
class Probe:
    """One call (or value read) to ask the student's code: inputs as a tree plus arrays."""

    key: str
    name: str
    kind: str  # "call" or "value"
    variant: str  # "main" or "numpy_only"
    args: list
    kwargs: list
    arrays: tuple = ()
    hidden: bool = False  # made only from hidden test lines: sent after the visible answers


@dataclass
class Recording:
    """The probes of an assignment, in the order the tests first make them."""

    answers: dict[str, str]  # name -> "call" or "value"
    probes: dict[str, Probe] = field(default_factory=dict)


def make_probe(name: str, kind: str, variant: str, args=(), kwargs=None,
               hidden: bool = False) -> Probe:
    """Encode a call's inputs (raises wire.WireError for inputs that are not plain data)."""
    arrays: list = []
    args_tree = wire.encode(tuple(args), arrays)
    kwargs_tree = wire.encode(dict(sorted((kwargs or {}).items())), arrays)
    key = wire.digest(["probe", kind, name, variant, args_tree, kwargs_tree], arrays)
    return Probe(key, name, kind, variant, args_tree, kwargs_tree, tuple(arrays), hidden)


def hidden_lines(assignment: Assignment) -> dict[str, set[int]]:
    """For each test cell's file name (``<test grade_id>``), its hidden line numbers."""
    return {f"<test {cell.grade_id}>": _hidden_lines(cell) for cell in assignment.tests}


def _from_hidden_line(hidden: dict[str, set[int]]) -> bool:
    """True if the innermost test-cell frame calling now is on a hidden line."""
    frame = sys._getframe(2)
    while frame is not None:
        lines = hidden.get(frame.f_code.co_filename)
        if lines is not None:
            return frame.f_lineno in lines
        frame = frame.f_back
    return False


def _keep(probes: dict, probe: Probe) -> None:
    """Add ``probe``; a call made from a visible line stays visible."""
    known = probes.get(probe.key)
    if known is None or (known.hidden and not probe.hidden):
        probes[probe.key] = probe


def answer_names(assignment: Assignment) -> dict[str, str]:
    """Names the solution cells define at top level: functions ("call") or values ("value")."""
    names: dict[str, str] = {}
    for cell in assignment.cells:
        if cell.role != "solution":
            continue
        for node in ast.parse(instructor_source(cell)).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names[node.name] = "call"
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update({t.id: "value" for t in targets if isinstance(t, ast.Name)})
    return names


def _recorder(name, target, recording, depth, hidden):
    """A function standing for the instructor's ``target`` that notes each call a test makes."""
    def recorder(*args, **kwargs):
        if depth[0]:  # a call from inside another answer: not a test's call
            return target(*args, **kwargs)
        try:
            probe = make_probe(name, "call", VARIANT.get(), args, kwargs,
                               _from_hidden_line(hidden))
        except wire.WireError as error:
            raise AssignmentError(f"a test calls {name}() with inputs the grader cannot send to "
                                  f"the student's code ({error})") from None
        _keep(recording.probes, probe)
        depth[0] += 1
        try:
            result = target(*args, **kwargs)
        finally:
            depth[0] -= 1
        try:
            wire.encode(result, [])
        except wire.WireError as error:
            raise AssignmentError(f"{name}() returns a value the grader cannot carry back from "
                                  f"the sandbox ({error})") from None
        return result

    recorder.__name__ = recorder.__qualname__ = name
    recorder.__signature__ = inspect.signature(target)
    recorder.mha_recorder = True
    return recorder


def _run_cell(source: str, namespace: dict, filename: str) -> None:
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the instructor's own code


@contextlib.contextmanager
def _grading():
    """Run instructor cells here: strict checks, quiet output, and the grader's environment kept.

    The cells may set environment variables (the assignments set ``MHA_CHECKS_STRICT`` for nbgrader's
    kernels); in the grader's own process that must not outlive the block.
    """
    token = GRADING.set(True)
    with _LOCK, contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(), \
            checks_strict():  # a stub fails a check, it is not "not done yet"
        warnings.simplefilter("ignore")
        environment = dict(os.environ)  # under the lock: another grading thread may be mid-block
        try:
            yield
        finally:
            GRADING.reset(token)
            if os.environ != environment:
                os.environ.clear()
                os.environ.update(environment)


def record(assignment: Assignment) -> Recording:
    """Run the instructor's notebook with recording proxies; every test must pass."""
    recording = Recording(answer_names(assignment))
    namespace: dict = {"__name__": "__main__"}
    depth, hidden = [0], hidden_lines(assignment)
    with _grading():
        for number, cell in enumerate(assignment.cells, start=1):
            if cell.role == "markdown":
                continue
            filename = f"<test {cell.grade_id}>" if cell.role == "test" else f"<cell {number}>"
            try:
                _run_cell(instructor_source(cell), namespace, filename)
            except AssignmentError:
                raise
            except Exception as error:  # noqa: BLE001 - reported to the teacher
                raise AssignmentError(f"{assignment.path}, cell {number} fails with the "
                                      f"instructor's solution: {type(error).__name__}: {error}") from None
            if cell.role != "solution":
                continue
            for name, kind in recording.answers.items():
                value = namespace.get(name)
                if kind == "call" and callable(value) and not hasattr(value, "mha_recorder"):
                    namespace[name] = _recorder(name, value, recording, depth, hidden)
                elif kind == "value" and name in namespace:
                    _keep(recording.probes, make_probe(name, "value", "main"))
    return recording


@dataclass
class Answer:
    """The student's code's answer to one probe (already validated)."""

    status: str  # ok, raised, missing, not_callable, timeout, unsupported, not_run
    out: list | None = None
    arrays: tuple = ()
    exc: tuple[str, str] = ("", "")
    mutated: tuple = ()  # (position or keyword, tree)
    detail: str = ""
    phase: str = "visible"  # "hidden": given after the hidden inputs reached the student's code


def _exception(name: str, answer: Answer, variant: str) -> BaseException:
    kind, message = answer.exc
    if answer.status == "missing" and variant == "numpy_only":
        return PackageUsed(f"{name} is not defined when the mha package is absent (an import "
                           f"of mha in its cell?): {MESSAGE}")
    if answer.status == "missing":
        return NameError(f"name {name!r} is not defined")
    if answer.status == "not_callable":
        return TypeError(f"{name} is a {answer.detail}, not a function")
    if answer.status == "timeout":
        return NotAnswered(f"{name}() ran longer than the grader's time limit")
    if answer.status == "not_run":
        return NotAnswered(f"{name}() was not run: {answer.detail}")
    if answer.status == "unsupported":
        return AnswerError(f"{name}(): {answer.detail}")
    if variant == "numpy_only" and (kind in ("ImportError", "ModuleNotFoundError")
                                    or (kind == "NameError" and "mha" in message)):
        return PackageUsed(MESSAGE)
    if kind == "NotImplementedError" and not message:
        message = "not answered yet (the '# YOUR CODE HERE' stub is still there)"
    error_type = REPLAYED.get(kind)
    if error_type is None:
        return AnswerError(f"{kind}: {message}" if message else kind)
    return error_type(message) if message else error_type()


def replayer(name: str, answers: dict, missing: dict, hidden: dict, parameters=None,
             unanswered: list | None = None):
    """A function standing for the student's ``name``: returns what their code returned.

    Calls the grader got no answer to (time limit, a run cut short) are noted in ``unanswered``:
    a test that fails on one says so, whatever the test made of the error.
    """
    def replay_call(*args, **kwargs):
        variant = VARIANT.get()
        on_hidden_line = _from_hidden_line(hidden)
        try:
            probe = make_probe(name, "call", variant, args, kwargs, on_hidden_line)
        except wire.WireError as error:
            raise AnswerError(f"the grader cannot pass these inputs to {name}(): {error}") \
                from None
        answer = answers.get(probe.key)
        if answer is None or (answer.phase == "hidden" and not on_hidden_line):
            _keep(missing, probe)  # a visible line never reads what the hidden phase wrote
            raise ProbeMissing(name, on_hidden_line)
        if answer.mutated:  # never copied onto the test's arrays: the test would then check itself
            which = ", ".join(f"argument {where + 1}" if isinstance(where, int) else repr(where)
                              for where, _ in answer.mutated)
            raise AnswerError(f"{name}() changed its input ({which}) in place: leave the arrays you "
                              "are given as they are and compute into new ones (x = x - m, not x -= m)")
        if answer.status != "ok":
            error = _exception(name, answer, variant)
            if isinstance(error, NotAnswered) and unanswered is not None and not on_hidden_line:
                unanswered.append(str(error))
            raise error
        return wire.decode(answer.out, list(answer.arrays))

    replay_call.__name__ = replay_call.__qualname__ = name
    if parameters is not None:
        replay_call.__signature__ = parameters
    return replay_call


def signature_of(described) -> inspect.Signature | None:
    """Rebuild a signature the runner described as ``[[name, kind, has_default], ...]``."""
    if not isinstance(described, list) or len(described) > 64:
        return None
    try:
        parameters = [inspect.Parameter(name, inspect._ParameterKind(kind),
                                        default=None if has_default else inspect.Parameter.empty)
                      for name, kind, has_default in described]
        return inspect.Signature(parameters)
    except (TypeError, ValueError):
        return None


@dataclass
class TestOutcome:
    """One test cell's verdict: passed, failed (with feedback) or pending (needs more probes)."""

    grade_id: str
    status: str
    message: str = ""


def _hidden_lines(cell) -> set[int]:
    lines, number = set(), 0
    for segment in cell.segments:
        for _ in segment.lines:
            number += 1
            if segment.kind == "hidden":
                lines.add(number)
    return lines


def _failure(error: BaseException, cell, filename: str) -> str:
    line = 0
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == filename:
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    if line in _hidden_lines(cell):  # the same words, whatever happened on a hidden line
        return HIDDEN_FAILED
    text = str(error).strip()
    message = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return message if len(message) <= 1000 else message[:1000] + " …(cut)"


def replay(assignment: Assignment, recording: Recording, answers: dict, defined: set | None,
           signatures: dict) -> tuple[list[TestOutcome], dict]:
    """Run the tests on recorded answers; return the outcomes and the probes still missing.

    ``defined`` is the set of answer names the student's code defined (None if unknown).
    """
    namespace: dict = {"__name__": "__main__"}
    missing: dict = {}
    unanswered: list[str] = []  # the current test's calls that got no answer (grader's words)
    outcomes, hidden = [], hidden_lines(assignment)
    with _grading():
        for number, cell in enumerate(assignment.cells, start=1):
            if cell.role in ("markdown",):
                continue
            if cell.role == "solution":
                names = answer_names_in(cell, recording)
                for name in names:
                    namespace.pop(name, None)
                    if recording.answers[name] == "value":  # `defined` lists callables only
                        probe = make_probe(name, "value", "main")
                        answer = answers.get(probe.key)
                        if answer is not None and answer.status == "ok":
                            namespace[name] = wire.decode(answer.out, list(answer.arrays))
                        continue
                    if defined is not None and name not in defined:
                        continue
                    namespace[name] = replayer(name, answers, missing, hidden,
                                               signature_of(signatures.get(name)), unanswered)
                continue
            filename = f"<test {cell.grade_id}>" if cell.role == "test" else f"<cell {number}>"
            unanswered.clear()
            try:
                _run_cell(instructor_source(cell), namespace, filename)
                if cell.role == "test":
                    outcomes.append(TestOutcome(cell.grade_id, "passed"))
            except ProbeMissing as pending:
                if cell.role == "test":
                    outcomes.append(TestOutcome(cell.grade_id, "pending",
                                                HIDDEN_FAILED if pending.hidden else ""))
            except Exception as error:  # noqa: BLE001 - a failed test
                if cell.role != "test":
                    raise AssignmentError(f"given cell {number} fails in the grader: {error}") \
                        from None
                message = _failure(error, cell, filename)
                if unanswered and message != HIDDEN_FAILED:  # the grader's reason first: no answer came
                    message = f"{unanswered[0]} ({message})"
                outcomes.append(TestOutcome(cell.grade_id, "failed", message))
    return outcomes, missing


def answer_names_in(cell, recording: Recording) -> list[str]:
    """The answer names a solution cell defines (in the recording's order)."""
    defined = set()
    for node in ast.parse(instructor_source(cell)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {t.id for t in targets if isinstance(t, ast.Name)}
    return [name for name in recording.answers if name in defined]
