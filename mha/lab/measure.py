"""Measure what the cost model predicts: wall time and peak memory of a call.

Timings are medians of repeated calls after a warm-up, or, to compare several calls on a busy machine,
each call's best over rounds in which the calls take turns (:func:`interleaved_seconds`: noise then
hits every call alike). They vary with the machine, so compare them as ratios measured in the same run.
Peak memory is what ``tracemalloc`` sees NumPy allocate during one call (NumPy reports its array
buffers to it), which is the number the cost model's bytes predict.
"""

from __future__ import annotations

import statistics
import tracemalloc
from collections.abc import Callable, Iterable
from time import perf_counter, process_time

import numpy as np

from mha.fast import blas_threads  # timing cells hold BLAS to one thread on a shared machine
from mha.validation import check_positive_int

__all__ = ["median_seconds", "interleaved_seconds", "peak_bytes", "blas_threads"]


def median_seconds(fn: Callable[[], object], *, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``repeats`` calls, after ``warmup`` untimed calls.

    Examples
    --------
    >>> median_seconds(lambda: sum(range(1000)), repeats=3) > 0
    True
    """
    repeats = check_positive_int(repeats, "repeats")
    warmup = check_positive_int(warmup, "warmup", minimum=0)
    if not callable(fn):
        raise TypeError(f"fn must be callable with no arguments, got {type(fn).__name__}")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = perf_counter()
        fn()
        times.append(perf_counter() - start)
    return statistics.median(times)


def interleaved_seconds(calls: Iterable[Callable[[], object]], *, rounds: int = 5,
                        clock: str = "wall") -> np.ndarray:
    """Each call's best time over ``rounds`` rounds in which the calls take turns, ``(len(calls),)``.

    Compare calls with it rather than timing each on its own: a burst of load from elsewhere then slows
    one round of every call, not all the repeats of one, and the best round of each survives it. Every
    call runs once untimed first (allocations, threads starting).

    ``clock="cpu"`` times with :func:`time.process_time`: the processor time this process spent (all its
    threads), which other programs sharing the machine do not inflate. On a machine busier than its cores,
    wall times jump by whole scheduling slices and even the best round can mislead; CPU times of
    single-threaded calls (hold BLAS to one thread with :func:`blas_threads`) stay what an idle machine's
    wall clock would show, give or take cache effects.

    Examples
    --------
    >>> fast, slow = interleaved_seconds([lambda: sum(range(10)), lambda: sum(range(100_000))], rounds=3)
    >>> bool(fast < slow)
    True
    >>> interleaved_seconds([lambda: None], clock="cpu").shape
    (1,)
    """
    rounds = check_positive_int(rounds, "rounds")
    if clock not in ("wall", "cpu"):
        raise ValueError(f'clock is "wall" (time.perf_counter) or "cpu" (time.process_time), got {clock!r}')
    timer = process_time if clock == "cpu" else perf_counter
    calls = list(calls)
    for call in calls:
        if not callable(call):
            raise TypeError(f"every call must be callable with no arguments, got {type(call).__name__}")
        call()  # warm-up
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for i, call in enumerate(calls):
            start = timer()
            call()
            best[i] = min(best[i], timer() - start)
    return np.array(best)  # (len(calls),)


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes allocated while ``fn()`` runs, above what was allocated before it started.

    Tracing slows allocation down, so do not time the same call.

    Examples
    --------
    >>> import numpy as np
    >>> peak_bytes(lambda: np.ones(1_000_000)) >= 8_000_000
    True
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable with no arguments, got {type(fn).__name__}")
    already = tracemalloc.is_tracing()
    if not already:
        tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not already:
            tracemalloc.stop()
    return peak - before
