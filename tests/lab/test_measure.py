import tracemalloc

import numpy as np
import pytest

from mha.lab.measure import median_seconds, peak_bytes


def test_peak_bytes_sees_a_temporary_array_and_not_what_existed_before():
    kept = np.ones(2_000_000)  # 16 MB that already exists
    peak = peak_bytes(lambda: np.ones(500_000).sum())  # a 4 MB temporary
    assert 4_000_000 <= peak < 4_000_000 + 1_000_000
    assert kept.size


def test_peak_bytes_leaves_tracemalloc_as_it_found_it():
    assert not tracemalloc.is_tracing()
    peak_bytes(lambda: None)
    assert not tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        peak_bytes(lambda: None)
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()


def test_median_seconds_calls_warmup_plus_repeats_and_returns_the_median(monkeypatch):
    """A fake clock makes each timed call last a known time: 5 s, 1 s, then 3 s."""
    import mha.lab.measure

    ticks = iter([0.0, 5.0, 10.0, 11.0, 20.0, 23.0])
    monkeypatch.setattr(mha.lab.measure, "perf_counter", lambda: next(ticks))
    calls = []
    assert median_seconds(lambda: calls.append(1), repeats=3, warmup=2) == 3.0
    assert len(calls) == 5


def test_measure_errors():
    with pytest.raises(TypeError, match="callable"):
        median_seconds(3)
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        median_seconds(lambda: None, repeats=0)
    with pytest.raises(TypeError, match="callable"):
        peak_bytes("x")
