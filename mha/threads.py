"""How many threads the BLAS library behind NumPy's matrix products may use, for a block of code.

NumPy hands matrix products to BLAS (OpenBLAS in NumPy's wheels), which splits each product over all
cores. For small matrices, waking the threads costs more than they save; on a machine whose cores are
busy with other work, a multi-threaded product can be many times slower than a single-threaded one.
The course's training loops, and the chapters' timing cells, run with one BLAS thread for that reason:
their numbers then measure the algorithm, not the traffic on the machine.

``threadpoolctl`` does the work when it is installed; without it (e.g. in a browser kernel, where
NumPy has no threads anyway) :func:`blas_threads` changes nothing.
"""

from __future__ import annotations

import contextlib

from mha._validation import check_positive_int

__all__ = ["blas_threads"]


def blas_threads(n: int | None):
    """A context manager that limits BLAS to ``n`` threads inside a ``with`` block.

    Parameters
    ----------
    n : int or None
        Threads allowed; None leaves the setting alone.

    Examples
    --------
    >>> import numpy as np
    >>> with blas_threads(1):
    ...     product = np.ones((64, 64)) @ np.ones((64, 64))
    >>> float(product[0, 0])
    64.0
    """
    if n is None:
        return contextlib.nullcontext()
    n = check_positive_int(n, "n")
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: only slower without it
        return contextlib.nullcontext()
    return threadpool_limits(n, user_api="blas")
