"""Threads for speed: a small shared pool, BLAS thread limits, and element-wise chains run part by part.

Nothing here changes a number; it changes where the work happens. NumPy's element-wise loops (``exp``,
``max``, a GELU's dozen passes) use one core, and BLAS brings its own threads only to matrix products.
:mod:`mha._kernels` hands attention tiles to a pool of threads (NumPy releases the GIL inside its loops),
each running its products with BLAS held to one thread; :func:`elementwise_inplace` splits a long
element-wise chain over the same pool, each thread working through cache-sized blocks of its part.
``threadpoolctl`` holds BLAS; without it tiles run in the calling thread. Where threads cannot start
(in a browser kernel), everything runs in the calling thread.

Set the environment variable ``MHA_NUM_THREADS`` to cap the pool (``1`` turns it off).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from mha._validation import check_positive_int

__all__ = ["blas_threads", "worker_count", "elementwise_inplace"]

_pool: ThreadPoolExecutor | None = None
_THREAD_PREFIX = "mha-worker"

#: Below this many elements an element-wise chain runs whole, in the calling thread: handing parts to
#: threads costs more than it saves (measured on the course's machine: a GELU on 96 x 1536 float32
#: values took as long in two threads as in one; on 240 x 1536, 0.6 of the time).
SPLIT_MIN_ELEMENTS = 1 << 18
#: Elements per block of an element-wise chain (512 KiB of float32). Smaller blocks would stay in L1 or
#: L2 cache, but every NumPy call takes the GIL, and two threads calling on small blocks queue for it:
#: 16K-element blocks made a large GELU slower than one thread did on the whole array; 128K measured
#: best (a GELU on 4096 x 2048 float32 values: 21 ms, against 74 ms in one thread, whole).
BLOCK_ELEMENTS = 1 << 17


def worker_count() -> int:
    """Threads the package may use: ``MHA_NUM_THREADS`` if set, else the usable cores (at most 8)."""
    override = os.environ.get("MHA_NUM_THREADS")
    if override:
        return max(1, int(override))
    try:
        return min(8, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return min(8, os.cpu_count() or 1)


def _thread_pool(workers: int) -> ThreadPoolExecutor | None:
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


def _can_limit_blas() -> bool:
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
    """Threads to spread tiles over: the pool's, or 1 where BLAS cannot be held to one thread per worker."""
    workers = _pool_workers()
    return workers if workers > 1 and _can_limit_blas() else 1


def run_tiles(run_one, tiles: list, n_workers: int) -> None:
    """Call ``run_one(tile, scratch)`` for every tile, on ``n_workers`` threads taking tiles in turn.

    ``scratch`` is a dict private to the thread, for buffers reused from tile to tile. Any failure is
    re-raised in the caller.
    """
    if n_workers < 2 or len(tiles) < 2:
        scratch = {}
        for tile in tiles:
            run_one(tile, scratch)
        return
    queue = iter(tiles)  # a list iterator hands out each tile once, whichever thread asks
    lock = threading.Lock()

    def worker():
        scratch = {}
        while True:
            with lock:
                tile = next(queue, None)
            if tile is None:
                return
            run_one(tile, scratch)

    pool = _thread_pool(n_workers)
    with blas_threads(1):  # every core runs its own tiles end to end: products, exp and sums
        for done in [pool.submit(worker) for _ in range(min(n_workers, len(tiles)))]:
            done.result()


def elementwise_inplace(chain, x: np.ndarray) -> np.ndarray:
    """``chain(x)`` for an in-place element-wise ``chain``, run in parts on threads when ``x`` is large.

    ``chain(view)`` must overwrite ``view`` with its result, each element's depending on that element
    alone (a GELU's passes, say). A C-contiguous array of at least :data:`SPLIT_MIN_ELEMENTS` is cut into
    one contiguous part per thread; each thread runs the chain on blocks of :data:`BLOCK_ELEMENTS` of its
    part, so every pass reads from cache instead of memory. Anything smaller, or not contiguous, is handed
    to ``chain`` whole. Returns ``x``, overwritten.
    """
    if x.size < SPLIT_MIN_ELEMENTS or not x.flags.c_contiguous:
        chain(x)
        return x
    flat = x.reshape(-1)  # (size,), a view
    workers = _pool_workers()
    pool = _thread_pool(workers) if workers > 1 else None
    bounds = np.linspace(0, flat.size, workers + 1).astype(int)

    def run_part(start: int, stop: int) -> None:
        for i in range(start, stop, BLOCK_ELEMENTS):
            chain(flat[i:min(i + BLOCK_ELEMENTS, stop)])

    parts = list(zip(bounds[:-1], bounds[1:], strict=True))  # (start, stop) of each thread's part
    others = [pool.submit(run_part, *part) for part in parts[1:]]  # none without a pool
    run_part(*parts[0])  # the calling thread takes the first part
    for done in others:
        done.result()
    return x
