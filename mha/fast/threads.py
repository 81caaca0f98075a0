"""Threads for the annex: a small shared pool that takes tiles in turn, and BLAS thread limits.

Nothing here changes a number; it changes where the work happens. NumPy's element-wise loops (``exp``,
``max``) use one core, and BLAS brings its own threads only to matrix products. :mod:`mha.fast.tiles`
hands attention tiles to a pool of threads (NumPy releases the GIL inside its loops), each running its
products with BLAS held to one thread. ``threadpoolctl`` holds BLAS; without it tiles run in the calling
thread. Where threads cannot start (in a browser kernel), everything runs in the calling thread. The pool
starts on first use, never at import.

Set the environment variable ``MHA_NUM_THREADS`` to cap the pool (``1`` turns it off).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mha.typing import FloatArray
from mha.validation import check_positive_int

#: A thread's own buffers, by name, reused from tile to tile.
Scratch = dict[str, FloatArray]
_Tile = TypeVar("_Tile")

__all__ = ["blas_threads", "worker_count", "workers_for_tiles", "run_tiles"]

_pool: ThreadPoolExecutor | None = None
_pool_size = 0  # the threads _pool was made with
_pool_lock = threading.Lock()
_THREAD_PREFIX = "mha-worker"


def worker_count() -> int:
    """Threads the package may use: ``MHA_NUM_THREADS`` if set, else the usable cores (at most 8).

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    ValueError
        ``MHA_NUM_THREADS`` is set to something other than an integer.

    Examples
    --------
    >>> 1 <= worker_count() <= max(8, int(os.environ.get("MHA_NUM_THREADS", 1)))
    True
    """
    override = os.environ.get("MHA_NUM_THREADS")
    if override:
        return max(1, int(override))
    try:
        return min(8, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return min(8, os.cpu_count() or 1)


def _thread_pool(workers: int) -> ThreadPoolExecutor | None:
    """The shared pool, resized to ``workers``; None where threads cannot start (Pyodide).

    A pool replaced by one of another size is shut down: its threads finish what they hold and exit.
    """
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size != workers:
            try:
                pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=_THREAD_PREFIX)
            except RuntimeError:
                return None
            if _pool is not None:
                _pool.shutdown(wait=False)  # work already handed to it still runs to the end
            _pool, _pool_size = pool, workers
        return _pool


@functools.lru_cache(maxsize=1)
def _controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries, built once (building it scans the process)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # optional: only slower without it
        return None
    return ThreadpoolController()


def _can_limit_blas() -> bool:
    controller = _controller()
    return controller is not None and bool(controller.select(user_api="blas").lib_controllers)


def blas_threads(n: int | None) -> contextlib.AbstractContextManager[Any]:
    """A context manager that limits BLAS to ``n`` threads inside a ``with`` block.

    Without ``threadpoolctl`` (an optional dependency) it changes nothing.

    Parameters
    ----------
    n : int or None
        Threads allowed; None leaves the setting alone.

    Returns
    -------
    contextlib.AbstractContextManager

    Raises
    ------
    TypeError
        ``n`` is not an integer.
    ValueError
        ``n`` is below 1.

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
    limit: contextlib.AbstractContextManager[Any] = controller.limit(limits=n, user_api="blas")
    return limit


def _in_pool_thread() -> bool:
    return threading.current_thread().name.startswith(_THREAD_PREFIX)


def _pool_workers() -> int:
    """Threads the pool can give the caller: 1 inside a pool thread (waiting on the pool there could
    deadlock), on one core, or where threads cannot start."""
    if _in_pool_thread():
        return 1
    workers = worker_count()
    if workers < 2 or _thread_pool(workers) is None:
        return 1
    return workers


def workers_for_tiles() -> int:
    """Threads to spread tiles over: the pool's, or 1 where BLAS cannot be held to one thread per worker.

    Returns
    -------
    int
        1 inside a pool thread, on one core, where threads cannot start or without ``threadpoolctl``.

    Examples
    --------
    >>> 1 <= workers_for_tiles() <= worker_count()
    True
    """
    workers = _pool_workers()
    return workers if workers > 1 and _can_limit_blas() else 1


def run_tiles(run_one: Callable[[_Tile, Scratch], None], tiles: Sequence[_Tile], n_workers: int) -> None:
    """Call ``run_one(tile, scratch)`` for every tile, on ``n_workers`` threads taking tiles in turn.

    Parameters
    ----------
    run_one : callable
        ``run_one(tile, scratch)``, where ``scratch`` is a dict private to the thread, for buffers reused
        from tile to tile. Its return value is ignored.
    tiles : sequence
        The tiles, in the order they are handed out.
    n_workers : int
        Threads to use; below 2 (or with fewer than 2 tiles) everything runs in the calling thread.

    Raises
    ------
    Exception
        Whatever ``run_one`` raises on any tile, re-raised in the caller.

    Examples
    --------
    >>> squares = {}
    >>> run_tiles(lambda tile, scratch: squares.update({tile: tile * tile}), range(5), n_workers=2)
    >>> sorted(squares.values())
    [0, 1, 4, 9, 16]
    """
    if n_workers < 2 or len(tiles) < 2:
        scratch: Scratch = {}
        for tile in tiles:
            run_one(tile, scratch)
        return
    queue = iter(tiles)  # a list iterator hands out each tile once, whichever thread asks
    lock = threading.Lock()

    def worker() -> None:
        scratch: Scratch = {}
        while True:
            with lock:
                tile = next(queue, None)
            if tile is None:
                return
            run_one(tile, scratch)

    pool = _thread_pool(n_workers)
    if pool is None:  # threads cannot start here after all: run them in turn
        worker()
        return
    with blas_threads(1):  # every core runs its own tiles end to end: products, exp and sums
        for done in [pool.submit(worker) for _ in range(min(n_workers, len(tiles)))]:
            done.result()
