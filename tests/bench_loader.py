"""Load a script of ``benchmarks/`` as a module by its path, for tests of its helpers (nothing is timed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str):
    """The module in ``benchmarks/<name>.py``, executed fresh.

    ``benchmarks/`` goes on ``sys.path`` (at the end, shadowing nothing), as when a script is run there, so
    that its imports of the other scripts (``machine``, ``bench_forward``) resolve the same way.
    """
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
