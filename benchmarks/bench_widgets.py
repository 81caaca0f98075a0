"""Median redraw time of a widget render callable: render one frame and encode it as PNG.

A frame explorer (mha.explorers.frames) calls its render function once per slider combination, so a
chapter's build time and a live notebook's responsiveness both scale with this number. The
course budget is a median under 150 ms for 8 heads x 32 tokens.

Usage (from the repository root):

    python benchmarks/bench_widgets.py                       # a stand-in heatmap grid
    python benchmarks/bench_widgets.py --render mypkg.plots:render_heads \\
        --values n_heads=8 seq_len=32 --repeat 15 --check

``--render`` names any importable ``module:function`` that takes the ``--values`` as keywords and
returns a matplotlib Figure or an HTML string (the mha.explorers.frames render contract). ``--check`` exits
with status 1 when the median exceeds the budget.

``--live`` times what a reader in a running kernel waits for: an explorer in live mode, one control
set after another (the observer, the render, the PNG, the output's new value). The values alternate
between ``--values`` and ``--other`` so that every redraw really recomputes:

    python benchmarks/bench_widgets.py --live mha.explorers:head_explorer \
        --values n_heads=8 seq_len=32 --other n_heads=4 --repeat 15
"""

from __future__ import annotations

import argparse
import ast
import importlib
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from machine import machine_line  # benchmarks/ is on sys.path when run

BUDGET_SECONDS = 0.150


def heatmap_grid(n_heads: int = 8, seq_len: int = 32):
    """Stand-in render: one attention-like heatmap per head, as chapters draw them."""
    import matplotlib.pyplot as plt
    import numpy as np

    rng = np.random.default_rng(0)
    scores = rng.standard_normal((n_heads, seq_len, seq_len))  # (n_heads, seq_q, seq_k)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    n_cols = min(n_heads, 4)
    n_rows = -(-n_heads // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(2.2 * n_cols, 2.2 * n_rows), squeeze=False)
    # Fixed margins instead of tight/constrained layout, and two ticks per axis: each of those
    # costs more than the drawing itself on an 8-panel figure (measured with this script).
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.1, top=0.92, wspace=0.3, hspace=0.4)
    for head, ax in enumerate(axes.flat):
        if head >= n_heads:
            ax.set_axis_off()
            continue
        ax.imshow(weights[head], cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"head {head + 1}", fontsize=8)
        ax.set_xticks([0, seq_len - 1])
        ax.set_yticks([0, seq_len - 1])
        ax.set_xlabel("key", fontsize=7)
        ax.set_ylabel("query", fontsize=7)
    return fig


def load_render(spec: str) -> Callable[..., Any]:
    """``"package.module:function"`` -> the function."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise ValueError(f"--render expects 'module:function', got {spec!r}")
    return getattr(importlib.import_module(module_name), function_name)


def parse_values(pairs: list[str]) -> dict[str, Any]:
    """``["n_heads=8", "label='x'"]`` -> ``{"n_heads": 8, "label": "x"}`` (Python literals)."""
    values = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            raise ValueError(f"--values expects name=value pairs, got {pair!r}")
        try:
            values[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            values[name] = text  # a bare word is a string
    return values


def redraw_times(render: Callable[..., Any], values: dict[str, Any], repeat: int) -> list[float]:
    """Seconds per redraw (render + PNG encoding, as mha.explorers.frames does it), ``repeat`` times."""
    import matplotlib

    matplotlib.use("Agg")
    from mha.explorers.frames import render_frames

    controls = {name: [value] for name, value in values.items()}
    render_frames(render, controls)  # warm-up: imports, font cache
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        render_frames(render, controls)
        times.append(time.perf_counter() - start)
    return times


def live_redraw_times(explorer_spec: str, values: dict[str, Any], other: dict[str, Any],
                      repeat: int) -> tuple[list[float], list[float]]:
    """Seconds per live redraw of an explorer (controls alternating between two value sets), and of the
    stand-in heatmap grid timed between them (the same machine load for both: compare the ratio)."""
    import matplotlib

    matplotlib.use("Agg")
    from mha.explorers.frames import figure_to_png

    explorer = load_render(explorer_spec)()
    explorer.go_live()
    controls = explorer.live.controls
    for name, value in values.items():  # start at the measured values (warm-up)
        controls[name].value = value
    figure_to_png(heatmap_grid())  # warm-up
    times, stand_in = [], []
    for i in range(2 * repeat):
        target = values if i % 2 else other  # odd runs land on the measured values
        start = time.perf_counter()
        for name, value in target.items():
            controls[name].value = value
        elapsed = time.perf_counter() - start
        if explorer.live.message.value:
            raise ValueError(f"the explorer refused {target}: {explorer.live.message.value}")
        if i % 2:
            times.append(elapsed)
            start = time.perf_counter()
            figure_to_png(heatmap_grid())
            stand_in.append(time.perf_counter() - start)
    return times, stand_in


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render", help="module:function (default: a stand-in heatmap grid)")
    parser.add_argument("--live", help="module:explorer_function, timed in live mode")
    parser.add_argument("--other", nargs="*", default=["n_heads=4"],
                        help="values alternated with --values in --live mode")
    parser.add_argument("--values", nargs="*", default=["n_heads=8", "seq_len=32"])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--check", action="store_true", help="exit 1 when over budget")
    args = parser.parse_args(argv)
    print(machine_line())

    values = parse_values(args.values)
    if args.live:
        times, stand_in = live_redraw_times(args.live, values, parse_values(args.other), args.repeat)
        name = f"{args.live} (live)"
        ratio = statistics.median(times) / statistics.median(stand_in)
        print(f"stand-in heatmap grid, timed between the redraws: median "
              f"{statistics.median(stand_in) * 1e3:.1f} ms; live / stand-in = {ratio:.2f}")
    else:
        render = load_render(args.render) if args.render else heatmap_grid
        times = redraw_times(render, values, args.repeat)
        name = args.render or "heatmap_grid (stand-in)"
    median = statistics.median(times)
    print(f"{name} {values}: median redraw {median * 1e3:.1f} ms over {len(times)} runs "
          f"(min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}); "
          f"{median / BUDGET_SECONDS:.2f} x the {BUDGET_SECONDS * 1e3:.0f} ms budget")
    return 1 if args.check and median > BUDGET_SECONDS else 0


if __name__ == "__main__":
    sys.exit(main())
