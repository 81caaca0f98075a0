"""Measure what the cost model predicts: wall time and peak memory of a call.

Timings are medians of repeated calls after a warm-up; they vary with the machine, so compare them as
ratios measured in the same run. Peak memory is what ``tracemalloc`` sees NumPy allocate during one call
(NumPy reports its array buffers to it), which is the number the cost model's bytes predict.
"""

from __future__ import annotations

import statistics
import tracemalloc
from collections.abc import Callable
from time import perf_counter

from mha._validation import check_positive_int
from mha.threads import blas_threads

__all__ = ["median_seconds", "peak_bytes", "blas_threads"]


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
