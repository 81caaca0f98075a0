"""The machinery behind the check functions: call the learner's code, compare, name the mistake.

A check runs the learner's function on seeded inputs and compares with the package. When the
answers differ it recomputes the answer the way each known mistake would (scale forgotten, softmax
over the wrong axis, ...) and raises :class:`CheckFailed` with the message of the first mistake that
reproduces the learner's numbers; if none does, the message says what differs and where.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from mha.typing import DTypeLike


class CheckFailed(AssertionError):  # noqa: N818 - reads as "check failed: <what went wrong>"
    """The learner's function gave a wrong answer; the message names the likely mistake."""

    __module__ = "mha.checks"  # shown in tracebacks as mha.checks.CheckFailed


class NotDone(Exception):  # noqa: N818 - "not done yet" is a state, not an error
    """The learner's starter is still a placeholder (``...`` or ``raise NotImplementedError``)."""


NOT_DONE = ("not done yet: write your answer where it says # YOUR CODE HERE (replacing the `...` "
            "or the `raise NotImplementedError`), then run this cell again.")


_STRICT = contextvars.ContextVar("mha_checks_strict", default=False)


@contextlib.contextmanager
def strict() -> Iterator[None]:
    """Within this block, an unfinished answer fails its check instead of printing "not done yet".

    Graders use it (the course's grader, ``mha_classroom``, does while it replays tests): a stub
    must not pass. Setting the environment variable ``MHA_CHECKS_STRICT=1`` does the same for a
    whole process (e.g. when autograding with nbgrader).
    """
    token = _STRICT.set(True)
    try:
        yield
    finally:
        _STRICT.reset(token)


def _strict() -> bool:
    return _STRICT.get() or os.environ.get("MHA_CHECKS_STRICT", "") not in ("", "0")


def learner_check(check: Callable) -> Callable:
    """Make ``check`` report an untouched starter cell with one line instead of raising.

    A starter holds a placeholder: ``answer = ...`` or a function whose body is
    ``raise NotImplementedError``. Run as it is, the check prints ``… <name>: not done yet`` and
    returns, so a notebook that nobody has filled in still runs from top to bottom. Under
    :func:`strict` (grading) the same answer raises :class:`CheckFailed`.
    """

    @functools.wraps(check)
    def wrapper(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except (NotDone, NotImplementedError) as error:
            if _strict():
                raise CheckFailed(f"{check.__name__}: {NOT_DONE}") from error
            print(f"… {check.__name__}: {NOT_DONE}")
            return None

    return wrapper


def placeholder(value: object) -> bool:
    """True for the starter's ``...`` (and ``NotImplemented``)."""
    return value is Ellipsis or value is NotImplemented


@dataclass(frozen=True)
class Mistake:
    """A known mistake: what to tell the learner, and how to compute the answer it produces."""

    message: str
    compute: Callable[..., Any]  # called with no arguments (lambdas may bind values as defaults)


def tolerances(dtype: DTypeLike) -> dict[str, Any]:
    """``rtol``/``atol`` for comparing arrays of ``dtype`` (looser for float32)."""
    if np.dtype(dtype) == np.float32:
        return {"rtol": 2e-4, "atol": 2e-6}
    return {"rtol": 1e-6, "atol": 1e-9}


def _parameters(fn: Callable) -> list | None:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


def _positional_at(parameters: list, position: int) -> bool:
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) > position or any(p.kind == p.VAR_POSITIONAL for p in parameters)


def accepts(fn: Callable, name: str, position: int | None = None) -> bool:
    """True if ``fn`` takes a parameter called ``name`` (or, given ``position``, has a positional
    parameter at that index)."""
    parameters = _parameters(fn)
    if parameters is None:
        return False
    return any(p.name == name for p in parameters) or (
        position is not None and _positional_at(parameters, position))


def takes_positional(fn: Callable, position: int) -> bool:
    """True if ``fn`` can take an argument at index ``position`` by position (False if unknown)."""
    parameters = _parameters(fn)
    return parameters is not None and _positional_at(parameters, position)


def describe_shape(shape: tuple[int, ...], names: dict[int, str] | None) -> str:
    """``(2, 3)``, or ``(2, 3) = (batch, seq)`` when every size has a distinct name."""
    text = str(tuple(shape))
    if names and shape and all(size in names for size in shape):
        text += " = (" + ", ".join(names[size] for size in shape) + ")"
    return text


class Checker:
    """One check in progress: calls the learner's function and fails with a helpful message."""

    def __init__(self, name: str, fn: Callable[..., Any], what: str) -> None:
        if not callable(fn):
            raise TypeError(f"{name} expects your function (a callable), got {type(fn).__name__}")
        self.name, self.fn, self.what = name, fn, what

    def fail(self, message: str) -> NoReturn:
        raise CheckFailed(f"{self.name}: {message}")

    def call(self, *args: Any, case: str, hint: Callable[[Exception], str] | None = None,
             **kwargs: Any) -> Any:
        """Call the learner's function on copies of the arrays, with NumPy warnings silenced;
        report any exception, and any input the function changed in place."""
        copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                result = self.fn(*copies, **kwargs)
            except NotImplementedError as error:
                raise NotDone(self.name) from error
            except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
                extra = hint(error) if hint else ""
                detail = str(error).strip()
                raised = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
                self.fail(f"your {self.what} raised {raised} (on {case}).{' ' + extra if extra else ''}")
        for position, (original, copy) in enumerate(zip(args, copies, strict=True)):
            if isinstance(original, np.ndarray) and not np.array_equal(original, copy, equal_nan=True):
                self.fail(f"your {self.what} changed its input array number {position + 1} in place "
                          f"(on {case}); e.g. `x -= x.max(...)` edits the caller's array: compute into "
                          "a new array instead, `shifted = x - x.max(...)`.")
        return result

    def as_array(self, result: Any, case: str) -> np.ndarray:
        if placeholder(result):
            raise NotDone(self.name)
        if isinstance(result, np.ndarray):
            return result
        try:
            array = np.asarray(result)
        except (TypeError, ValueError):
            array = np.asarray(None)
        if array.dtype == object or array.ndim == 0:
            self.fail(f"your {self.what} returned {type(result).__name__}, expected a NumPy array "
                      f"(on {case}).")
        return array

    def compare(self, got: Any, expected: np.ndarray, *, case: str, mistakes: Iterable[Mistake] = (),
                names: dict[int, str] | None = None, exact: bool = False) -> np.ndarray:
        """Fail unless ``got`` matches ``expected``, naming the first mistake that explains it."""
        got = self.as_array(got, case)
        if _same(got, expected, exact):
            return got
        for mistake in mistakes:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                try:
                    candidate = np.asarray(mistake.compute())
                except ValueError:  # this mistake cannot even happen on these shapes
                    continue
            if _same(got, candidate, exact):
                self.fail(f"{mistake.message} (found on {case})")
        self.fail(_difference(got, expected, case, names))

    def check_dtype(self, got: np.ndarray, expected_dtype: DTypeLike, case: str, advice: str) -> None:
        if got.dtype != expected_dtype:
            self.fail(f"your {self.what} returned {got.dtype} for {np.dtype(expected_dtype)} "
                      f"inputs (on {case}). {advice}")

    def passed(self, summary: str, quiet: bool) -> None:
        if not quiet:
            print(f"✔ {self.name} passed: {summary}")


def _same(got: np.ndarray, expected: np.ndarray, exact: bool) -> bool:
    if got.shape != expected.shape:
        return False
    if exact or expected.dtype == bool:
        return bool(np.array_equal(got, expected))
    if not (np.issubdtype(got.dtype, np.number) or got.dtype == bool):
        return False
    with np.errstate(all="ignore"):
        return bool(np.allclose(got, expected, equal_nan=True, **tolerances(expected.dtype)))


def _difference(got: np.ndarray, expected: np.ndarray, case: str, names) -> str:
    if got.shape != expected.shape:
        return (f"your output has shape {describe_shape(got.shape, names)}, expected "
                f"{describe_shape(expected.shape, names)} (on {case}).")
    if got.dtype == bool or expected.dtype == bool:
        wrong = np.argwhere(got != expected)
        first = tuple(int(i) for i in wrong[0])
        return (f"{len(wrong)} of {got.size} entries differ, the first at index {first}: got "
                f"{got[first]!r}, expected {expected[first]!r} (on {case}).")
    finite = np.isfinite(got)
    if not finite.all():
        first = tuple(int(i) for i in np.argwhere(~finite)[0])
        return (f"your output contains {got[first]} at index {first}, where the expected value "
                f"is {expected[first]:.6g} (on {case}).")
    with np.errstate(all="ignore"):
        wrong = ~np.isclose(got, expected, **tolerances(expected.dtype))
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    error = float(np.max(np.abs(got.astype(np.float64) - expected)))
    return (f"{int(wrong.sum())} of {got.size} values differ, the first at index {first}: got "
            f"{got[first]:.6g}, expected {expected[first]:.6g}; largest difference {error:.3g} "
            f"(on {case}).")
