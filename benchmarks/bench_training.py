"""Speed of the training code and of the two chapters' widget frames, as ratios measured in one run.

- Training step of the chapters' model (2 layers x 4 heads, d_model 32, batch 32 x 24 tokens) with BLAS
  on one thread against BLAS's default: why ``mha.lab.training.train`` pins one thread. The two settings
  alternate so that a change in the machine's load hits both alike.
- Backward pass against forward pass of one layer: the chain rule should cost a small multiple.
- Redraw time (render + PNG) of each widget frame of the chapters, against the 150 ms budget.

Run: ``python benchmarks/bench_training.py`` (``--repeat`` for more rounds).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from machine import machine_line  # benchmarks/ is on sys.path when run

import mha
from mha.grad import multi_head_backward
from mha.lab import blas_threads
from mha.lab.models import AttentionOnlyModel
from mha.lab.tasks import repeated_tokens

BUDGET_SECONDS = 0.150


def seconds(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def training_step_threads(repeat: int) -> None:
    model = AttentionOnlyModel(16, 24, d_model=32, n_heads=4, rng=0)
    batch = repeated_tokens(32, 24, 16, min_period=3, max_period=10, rng=0)
    step = lambda: [model.loss_and_grads(batch) for _ in range(20)]  # noqa: E731
    one, default = [], []
    step()  # warm-up
    for _ in range(repeat):  # interleaved rounds
        with blas_threads(1):
            one += seconds(step, 1)
        default += seconds(step, 1)
    one_ms, default_ms = (1e3 * statistics.median(t) / 20 for t in (one, default))
    print(f"training step: {one_ms:.2f} ms on one BLAS thread, {default_ms:.2f} ms with BLAS's default "
          f"threads: default / one = {default_ms / one_ms:.1f}")


def backward_over_forward(repeat: int) -> None:
    layer = mha.MultiHeadAttention(256, 8, rng=0, dtype=np.float32)
    x = np.random.default_rng(1).standard_normal((8, 64, 256)).astype(np.float32)
    out, cache = layer.forward(x, causal=True)
    with blas_threads(1):
        forward = statistics.median(seconds(lambda: layer.forward(x, causal=True), repeat))
        backward = statistics.median(seconds(lambda: multi_head_backward(out, cache), repeat))
    print(f"one layer (batch 8, 64 tokens, d_model 256): backward / forward = {backward / forward:.2f}")


def widget_frames(repeat: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from mha.explorers.frames import figure_to_png
    from mha.lab.analysis import pruning_curve
    from mha.plotting import plot_heads, plot_online_softmax, plot_pruning

    rng = np.random.default_rng(2)
    weights = rng.dirichlet(np.ones(24), size=(8, 24))  # (n_heads, seq_q, seq_k)
    tokens = [chr(65 + i % 16) for i in range(24)]
    cost = rng.random((2, 4))
    curve = pruning_curve(lambda m: float(np.sum(cost * (1 - m))), cost)
    frames = {
        "training_explorer (4 heads x 24 tokens)": lambda: plot_heads(weights[:4], tokens, title="layer 0"),
        "kv_sharing_explorer (8 heads x 24 tokens)": lambda: plot_heads(weights, tokens, ncols=4, title="x"),
        "pruning_explorer": lambda: plot_pruning(curve, np.linspace(1, 0, 9), n_removed=3),
        "online_softmax_explorer": lambda: plot_online_softmax(
            rng.standard_normal(12), 4, [0.5, 1.0, 1.8], [2.2, 3.6, 3.7], rng.standard_normal((3, 3)),
            rng.standard_normal(3), step=1),
    }
    for name, render in frames.items():
        figure_to_png(render())  # warm-up
        median = statistics.median(seconds(lambda render=render: figure_to_png(render()), repeat))
        print(f"{name}: median redraw {1e3 * median:.0f} ms = {median / BUDGET_SECONDS:.2f} x the budget")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    print(machine_line())
    training_step_threads(args.repeat)
    backward_over_forward(args.repeat)
    widget_frames(args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
