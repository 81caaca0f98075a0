"""The machine a benchmark runs on, in one line: its CPU, caches, load and its own matmul rate, now.

Matmul speed differs by a quarter or more between machines of the same kind, and a busy machine is slower
still, so every benchmark prints :func:`machine_line` before its figures: a time or a ratio is then read
beside the rate of the machine that measured it, taken in the same run.

The CPU's name and cache sizes come from Linux (``/proc/cpuinfo``, ``/sys``); elsewhere they are left out.
"""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

MATMUL_SIZE = 1024  # (1024, 1024) @ (1024, 1024): large enough for BLAS's full speed, 0.03 s in float32


def cpu_name() -> str:
    """The CPU's model name, or the architecture when the system does not say."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cache_sizes() -> dict[str, str]:
    """Data cache sizes of the first core by level, e.g. ``{"L1": "32K", "L2": "512K", "L3": "8192K"}``.

    An L3 is usually shared between the cores; L1 and L2 are each core's own.
    """
    caches = {}
    with contextlib.suppress(OSError, ValueError):
        for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
            level = int((index / "level").read_text())
            if (index / "type").read_text().strip() != "Instruction":
                caches[f"L{level}"] = (index / "size").read_text().strip()
    return caches


def matmul_gflops(dtype=np.float32, repeat: int = 15) -> float:
    """NumPy's matrix-product rate in GFLOP/s: the median of ``repeat`` timed (1024, 1024) products."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    a = np.random.default_rng(0).standard_normal((MATMUL_SIZE, MATMUL_SIZE)).astype(dtype)
    a @ a  # warm-up: BLAS starts its threads and the pages are mapped
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        a @ a
        times.append(time.perf_counter() - start)
    return 2 * MATMUL_SIZE**3 / statistics.median(times) / 1e9


def machine_summary(repeat: int = 15) -> dict:
    """The machine now: ``cpu``, ``cores``, ``caches``, ``load_average`` and ``matmul_gflops`` by dtype."""
    return {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "caches": cache_sizes(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "matmul_gflops": {np.dtype(dtype).name: matmul_gflops(dtype, repeat)
                          for dtype in (np.float32, np.float64)},
    }


def machine_line(summary: dict | None = None) -> str:
    """One line naming the machine and its matmul rates (a fresh :func:`machine_summary` by default)."""
    summary = machine_summary() if summary is None else summary
    caches = ", ".join(f"{level} {size}" for level, size in summary["caches"].items()) or "caches unknown"
    load = summary["load_average"]
    load = " ".join(f"{x:.1f}" for x in load) if load is not None else "unknown"
    rates = ", ".join(f"{name} {rate:.0f} GF/s" for name, rate in summary["matmul_gflops"].items())
    return (f"Machine: {summary['cpu']}, {summary['cores']} cores ({caches}); load average {load}; "
            f"matmul {MATMUL_SIZE}^3: {rates}")
