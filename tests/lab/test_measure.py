import tracemalloc

import numpy as np
import pytest

from mha.lab.measure import interleaved_seconds, median_seconds, peak_bytes


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


def test_interleaved_calls_take_turns_and_keep_each_calls_best_round(monkeypatch):
    import mha.lab.measure

    order = []
    # call a lasts 5, 1, 3 ticks in rounds 1-3, call b 2, 2, 9: bests 1 and 2
    durations = iter([5, 2, 1, 2, 3, 9])
    clock = [0.0]

    def perf_counter():
        return clock[0]

    def timed(name):
        def call():
            order.append(name)
            if len(order) > 2:  # after the two untimed warm-up calls
                clock[0] += next(durations)
        return call

    monkeypatch.setattr(mha.lab.measure, "perf_counter", perf_counter)
    assert interleaved_seconds([timed("a"), timed("b")], rounds=3).tolist() == [1.0, 2.0]
    assert order == ["a", "b"] * 4  # one warm-up each, then turns
    with pytest.raises(TypeError, match="callable"):
        interleaved_seconds([1])
    with pytest.raises(ValueError, match="rounds"):
        interleaved_seconds([timed("a")], rounds=0)


def test_the_cpu_clock_is_the_process_time_and_no_other_clock_is_taken(monkeypatch):
    import mha.lab.measure

    ticks = iter(range(100))
    monkeypatch.setattr(mha.lab.measure, "process_time", lambda: float(next(ticks)))
    monkeypatch.setattr(mha.lab.measure, "perf_counter", lambda: 0.0)  # would time every call at 0
    assert interleaved_seconds([lambda: None, lambda: None], rounds=2, clock="cpu").tolist() == [1.0, 1.0]
    for clock in ("CPU", "process", None, 1):
        with pytest.raises(ValueError, match='clock is "wall"'):
            interleaved_seconds([lambda: None], clock=clock)
