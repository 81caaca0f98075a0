"""The line every benchmark prints first (benchmarks/machine.py): the machine and its matmul rate, now."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tests.bench_loader import load_benchmark


@pytest.fixture(scope="module")
def machine():
    return load_benchmark("machine")


def test_matmul_rate_is_a_positive_finite_rate_for_each_precision(machine):
    for dtype in (np.float32, np.float64):
        rate = machine.matmul_gflops(dtype, repeat=2)
        assert math.isfinite(rate) and rate > 0


def test_matmul_rate_refuses_no_repeats(machine):
    with pytest.raises(ValueError, match="repeat must be at least 1, got 0"):
        machine.matmul_gflops(np.float32, repeat=0)


def test_machine_line_names_the_cpu_and_both_rates(machine):
    line = machine.machine_line(machine.machine_summary(repeat=2))
    assert line.startswith(f"Machine: {machine.cpu_name()}, ")
    rates = re.findall(r"(float32|float64) (\d+) GF/s", line)
    assert [dtype for dtype, _ in rates] == ["float32", "float64"]
    assert all(int(rate) > 0 for _, rate in rates)


def test_machine_line_formats_a_given_summary_without_measuring_again(machine):
    summary = {"cpu": "Test CPU", "cores": 2, "caches": {"L2": "512K"}, "load_average": None,
               "matmul_gflops": {"float32": 70.4, "float64": 33.6}}
    assert machine.machine_line(summary) == (
        "Machine: Test CPU, 2 cores (L2 512K); load average unknown; matmul 1024^3: float32 70 GF/s, "
        "float64 34 GF/s")


def test_cache_sizes_are_data_caches_by_level(machine):
    caches = machine.cache_sizes()  # empty where the system does not say
    assert all(re.fullmatch(r"L[1-4]", level) for level in caches)
    assert all(re.fullmatch(r"\d+[KMG]?", size) for size in caches.values())
