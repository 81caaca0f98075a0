"""The textbook path (the code a chapter shows) against PyTorch, at the chapters' own sizes.

``mha.MultiHeadAttention`` runs the readable code unless a problem is large and asks for no weights,
when it takes the annex's door (:mod:`mha.fast`). This script closes the door (``mha.fast.disabled()``)
and times the readable code against ``torch.nn.MultiheadAttention`` at the sizes the chapters use, and
at the forward benchmark's (batch 8, seq 512, d_model 512, 8 heads), in float32 and float64. With
weights asked for, PyTorch is asked for per-head weights too (``average_attn_weights=False``).

Each row is a ratio measured in one run, the two sides timed in alternating blocks (never call by call);
the machine line above the table gives the matmul rate of the same run. Target from issue 35: the
readable path within 1.5x of PyTorch's time everywhere.

Run: ``python benchmarks/bench_textbook.py`` (``--runs 3`` repeats the table; PyTorch is required).
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from bench_forward import median_times  # benchmarks/ is on sys.path when run
from machine import machine_line

import mha

TARGET = 1.5
#: (batch, seq, d_model, n_heads, weights): where the chapters call the layer, and the forward benchmark.
SIZES = [
    (1, 11, 64, 4, True),  # self-attention: one sentence, its weights drawn
    (2, 5, 64, 8, False),  # the package in one screen
    (1, 24, 64, 4, True),  # multi-head: the head explorer's longest sentence
    (1, 256, 512, 8, False),  # multi-head: loop against package
    (1, 64, 512, 64, False),
    (1, 512, 512, 1, True),  # multi-head and cost: one to 64 heads at d_model 512
    (1, 512, 512, 8, True),
    (1, 512, 512, 64, True),
    (1, 128, 64, 4, True),  # cost: time and memory against seq
    (1, 1024, 64, 4, True),
    (1, 2048, 64, 4, True),
    (8, 512, 512, 8, False),  # the forward benchmark's size
    (8, 512, 512, 8, True),
]


def time_pair(batch, seq, d_model, n_heads, weights, dtype, torch, repeats):
    """Median seconds of the textbook layer and of PyTorch's, same input, alternating blocks."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, seq, d_model)).astype(dtype)
    layer = mha.MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
    module = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True,
                                         dtype=getattr(torch, np.dtype(dtype).name)).eval()
    tx = torch.from_numpy(x)

    def ours():
        with mha.fast.disabled():
            layer(x, return_weights=weights)

    def theirs():
        with torch.inference_mode():
            module(tx, tx, tx, need_weights=weights, average_attn_weights=False)

    return median_times([ours, theirs], repeats, rounds=5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="how many times to measure the whole table")
    args = parser.parse_args()
    import torch

    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads")
    for run in range(1, args.runs + 1):
        print(f"\nrun {run}: " + machine_line())
        print("load average: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
        print(f"{'batch':>5} {'seq':>5} {'d_model':>7} {'heads':>5} {'weights':>7} {'dtype':>7} "
              f"{'mha ms':>9} {'torch ms':>9} {'ratio':>6}")
        worst = 0.0
        for batch, seq, d_model, n_heads, weights in SIZES:
            for dtype in (np.float32, np.float64):
                scores = batch * n_heads * seq * seq
                repeats = 2000 if scores < 10_000 else 200 if scores < 1_000_000 else 15
                t_ours, t_theirs = time_pair(batch, seq, d_model, n_heads, weights, dtype, torch, repeats)
                ratio = t_ours / t_theirs
                worst = max(worst, ratio)
                flag = "" if ratio <= TARGET else "  MISSES"
                print(f"{batch:>5} {seq:>5} {d_model:>7} {n_heads:>5} {str(weights):>7} "
                      f"{np.dtype(dtype).name:>7} {t_ours * 1e3:>9.3f} {t_theirs * 1e3:>9.3f} "
                      f"{ratio:>6.2f}{flag}", flush=True)
        print(f"worst ratio {worst:.2f} (target <= {TARGET})")


if __name__ == "__main__":
    main()
