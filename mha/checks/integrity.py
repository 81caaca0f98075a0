"""Tell whether an answer was written with NumPy or borrowed from the ``mha`` package.

The assignments ask for NumPy-only code while their tests compare with ``mha``. In a student's own
notebook, inside :func:`package_forbidden`, every function and method of every loaded module of the
package (all of ``mha`` but these checks: the core, ``mha.positions``, ``mha.lab`` once imported
...) raises :class:`PackageUsed`, whichever way the answer reached it (``mha.softmax``,
``from mha.attention import softmax``, a subclass of ``MultiHeadAttention``): the function objects
themselves are swapped to a refusing body for the duration of the block, then put back. That is a
convenience for learners, not a verdict.

When the grader replays the tests (:data:`GRADING` set), the block only marks the answer calls made
inside it as *NumPy-only probes*: the grader has the student's code answer them in a separate
sandboxed run where the ``mha`` package is physically absent, so nothing the student's code does
can make it look NumPy-only.

It lives here, not in the grader (``mha_classroom``, a distribution of its own), because the
assignments' "NumPy only" test cell is visible: it runs in the student's own notebook, where only
this package is installed, and under nbgrader.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

CHECKS = __name__.rpartition(".")[0]  # mha.checks: the one part of the package that keeps running
#: True while the grader records or replays tests (set by ``mha_classroom.probes``).
GRADING: ContextVar[bool] = ContextVar("mha_classroom_grading", default=False)
#: "main", or "numpy_only" inside :func:`package_forbidden` while grading.
VARIANT: ContextVar[str] = ContextVar("mha_classroom_variant", default="main")
MESSAGE = ("your answer calls the mha package; the assignment asks you to write it with NumPy only "
           "(the tests compare your answer with mha)")


class PackageUsed(AssertionError):  # noqa: N818 - read as "package used (where it must not be)"
    """An answer called the ``mha`` package inside :func:`package_forbidden`."""


def _refuse(*args, **kwargs):
    # This body runs with the globals of whichever mha function it replaced: reach this module
    # through a builtin only.
    error = __import__("mha.checks.integrity", fromlist=["PackageUsed"]).PackageUsed
    raise error(__import__("mha.checks.integrity", fromlist=["MESSAGE"]).MESSAGE)


def _package_functions() -> list:
    """The functions and methods defined in the loaded modules of ``mha``, its checks aside."""
    importlib.import_module("mha")  # the core loads with it
    functions = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "mha" or name.startswith("mha.")) or \
                name == CHECKS or name.startswith(CHECKS + "."):
            continue
        for value in list(vars(module).values()):
            if inspect.isclass(value) and value.__module__ == name:
                functions.update({id(v): v for v in vars(value).values() if inspect.isfunction(v)})
            elif inspect.isfunction(value) and value.__module__ == name:
                functions[id(value)] = value
    return [f for f in functions.values() if not f.__code__.co_freevars]


@contextmanager
def package_forbidden() -> Iterator[None]:
    """Make every function of ``mha`` (its checks aside) raise :class:`PackageUsed` within the block.

    Examples
    --------
    >>> import numpy as np, mha
    >>> with package_forbidden():  # doctest: +ELLIPSIS
    ...     mha.softmax(np.zeros(3))
    Traceback (most recent call last):
    mha.checks.integrity.PackageUsed: your answer calls the mha package; ...
    >>> with package_forbidden():  # doctest: +ELLIPSIS
    ...     mha.sinusoidal_encoding(2, 4)
    Traceback (most recent call last):
    mha.checks.integrity.PackageUsed: your answer calls the mha package; ...
    >>> mha.softmax(np.zeros(2))
    array([0.5, 0.5])
    """
    if GRADING.get():
        token = VARIANT.set("numpy_only")
        try:
            yield
        finally:
            VARIANT.reset(token)
        return
    saved = {function: function.__code__ for function in _package_functions()}
    try:
        for function in saved:
            function.__code__ = _refuse.__code__
        yield
    finally:
        for function, code in saved.items():
            function.__code__ = code
