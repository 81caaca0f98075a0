"""Threads: how many BLAS may use, and a small pool for the work NumPy leaves on one core.

NumPy hands matrix products to BLAS (OpenBLAS in NumPy's wheels), which splits each product over all
cores. For small matrices, waking the threads costs more than they save; on a machine whose cores are
busy with other work, a multi-threaded product can be many times slower than a single-threaded one.
The course's training loops, and the chapters' timing cells, run with one BLAS thread for that reason:
their numbers then measure the algorithm, not the traffic on the machine.

Element-wise NumPy (``exp``, ``max``, ``sum``) runs on one core. For large attention problems
:func:`mha.attention.attend` therefore splits the independent (batch, head) slices over a pool of
threads (NumPy releases the GIL inside its loops) while BLAS is held to one thread: every core then
does products *and* softmax, instead of BLAS threads spinning idle while one core exponentiates.

``threadpoolctl`` does the BLAS part when it is installed; without it (e.g. in a browser kernel, where
NumPy has no threads anyway) :func:`blas_threads` changes nothing and attention stays serial.
Set the environment variable ``MHA_NUM_THREADS`` to cap the pool (``1`` turns it off).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from mha._validation import check_positive_int

__all__ = ["blas_threads", "worker_count", "parallel_pool", "task_slices", "run_parallel", "slice_operand"]

_pool: ThreadPoolExecutor | None = None
_THREAD_PREFIX = "mha-worker"


def worker_count() -> int:
    """Threads the package may use: ``MHA_NUM_THREADS`` if set, else the usable cores (at most 8)."""
    override = os.environ.get("MHA_NUM_THREADS")
    if override:
        return max(1, int(override))
    try:
        return min(8, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return min(8, os.cpu_count() or 1)


def thread_pool(workers: int) -> ThreadPoolExecutor | None:
    """The shared pool, resized to ``workers``; None where threads cannot start (Pyodide)."""
    global _pool
    if _pool is None or _pool._max_workers != workers:
        try:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=_THREAD_PREFIX)
        except RuntimeError:
            return None
    return _pool


@functools.lru_cache(maxsize=1)
def _controller():
    """threadpoolctl's view of the loaded BLAS libraries, built once (building it scans the process)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # optional: only slower without it
        return None
    return ThreadpoolController()


def can_limit_blas() -> bool:
    """Whether :func:`blas_threads` really controls BLAS here."""
    controller = _controller()
    return controller is not None and bool(controller.select(user_api="blas").lib_controllers)


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
    controller = _controller()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=n, user_api="blas")


#: Below this many attention scores a problem runs serially: threads would cost more than they save.
PARALLEL_MIN_SCORES = 1 << 20
#: Target size of one task's score block (bytes): small enough to be reused from the allocator's heap and
#: to stay in cache, instead of fresh, page-faulting mappings.
TASK_SCORE_BYTES = 8 << 20


def parallel_pool(n_items: int, n_scores: int) -> tuple[ThreadPoolExecutor, int] | None:
    """The pool and its size when ``n_items`` independent slices holding ``n_scores`` scores in all are
    worth spreading over threads; None when not (small problem, one core, no BLAS control, or already
    inside one of the pool's threads, where waiting on the pool could deadlock)."""
    if n_scores < PARALLEL_MIN_SCORES or n_items < 2:
        return None
    if threading.current_thread().name.startswith(_THREAD_PREFIX):
        return None
    workers = worker_count()
    if workers < 2 or not can_limit_blas():
        return None
    pool = thread_pool(workers)
    return None if pool is None else (pool, workers)


def task_slices(n_items: int, workers: int, bytes_per_item: int) -> list[slice]:
    """Contiguous slices of ``range(n_items)``: at least one per worker, each near ``TASK_SCORE_BYTES``."""
    wanted = -(-n_items * bytes_per_item // TASK_SCORE_BYTES)  # ceiling division
    parts = min(n_items, max(workers, wanted))
    bounds = [round(i * n_items / parts) for i in range(parts + 1)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def run_parallel(pool: ThreadPoolExecutor, work, slices: list[slice]) -> None:
    """Run ``work(slice)`` for every slice on the pool, BLAS held to one thread; re-raise any failure."""
    with blas_threads(1):  # every core runs its own slices end to end: products, exp and sums
        for done in [pool.submit(work, chunk) for chunk in slices]:
            done.result()


def slice_operand(arr, ndim: int, axis: int, chunk: slice):
    """The part of a broadcastable operand (mask, bias, q, k, v) that goes with ``chunk`` of ``axis``.

    ``arr`` is aligned to ``ndim`` dimensions as broadcasting would; a size-1 ``axis`` broadcasts, so it is
    shared whole. None stays None.
    """
    if arr is None:
        return None
    aligned = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    return aligned if aligned.shape[axis] == 1 else aligned[(slice(None),) * axis + (chunk,)]
