"""Numbers a page's prose quotes, handed over by the cell that computes them.

A sentence such as "the model copies 99.6 % of the held-out sequences" must show what the cell computed
on the reader's machine, not a number typed when the page was written: training sums in another order on
another CPU, and a typed number drifts from the output beside it. :func:`glue` hands a value to the page
through myst-nb's ``glue`` (the book's notebook engine); the prose shows it with the ``glue:text`` role and
a format, e.g. ``{glue:text}`copy_exact:.1%```. The book build fails when a role names a value no cell
glued.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

__all__ = ["glue"]

T = TypeVar("T")


def glue(name: str, value: T) -> T:
    """Hand ``value`` to the page's prose under ``name``; return it unchanged.

    Parameters
    ----------
    name : str
        The key the prose names (``{glue:text}`name:.2f```); one per page.
    value : int, float, str or NumPy scalar
        NumPy scalars are handed over as Python numbers, so that every format (``.2f``, ``.1%``, ``,d``)
        applies to them.

    Returns
    -------
    The value, so that ``x = glue("x", compute())`` reads as an assignment.

    Raises
    ------
    TypeError
        For a value that is not a single number or a string: the prose quotes one number at a time.

    Notes
    -----
    Outside the book's tools (JupyterLab without myst-nb, JupyterLite, Colab) nothing is displayed and the
    value is only returned: the page the reader downloaded already quotes the build's number.

    Examples
    --------
    >>> glue("answer", np.float32(0.25))
    np.float32(0.25)
    """
    shown: Any = value.item() if isinstance(value, np.generic) else value
    if isinstance(shown, bool) or not isinstance(shown, int | float | str):
        raise TypeError(f"glue({name!r}, ...) takes one number or string for the prose to quote, "
                        f"got {type(value).__name__}: pick the element or compute the scalar first")
    try:
        from myst_nb import glue as myst_glue
    except ImportError:  # no book tools: the prose the reader has already shows the build's value
        return value
    myst_glue(name, shown, display=False)
    return value
