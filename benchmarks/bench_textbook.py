"""The textbook path (the code a chapter shows) and the default path against PyTorch, at the chapters' sizes.

``mha.MultiHeadAttention`` runs the readable code unless a problem asks for no weights and is large
enough for the annex's door (:mod:`mha.fast`, at least ``mha.fast.TILE_MIN_SCORES`` scores). For each
size this script times the layer three ways, in float32 and float64: with the door closed
(``mha.fast.disabled()``: the readable code, whatever the size), as it runs by default (a large problem
goes through the annex: without weights its tiles, with weights the textbook's softmax steps tile by tile
over the cores, the same numbers), and
``torch.nn.MultiheadAttention``. The sizes are those the chapters use, and the forward benchmark's
(batch 8, seq 512, d_model 512, 8 heads). With weights asked for, PyTorch is asked for per-head weights
too (``average_attn_weights=False``).

Each row is a ratio measured in one run, the three timed in alternating blocks (never call by call; the
median of seven blocks each, every block's calls back to back after a warm-up); the machine line above
the table gives the matmul rate of the same run. Target from issue 35: the readable default path within
1.5x of PyTorch's time. On a small machine PyTorch runs its softmax on every core, which one core's
whole-array NumPy cannot match once the scores outgrow the caches; without weights, that is the door's job.

Run: ``python benchmarks/bench_textbook.py`` (``--runs 3`` repeats the table; PyTorch is required).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from machine import machine_line  # benchmarks/ is on sys.path when run

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


def block_seconds(fn, seconds: float) -> float:
    """Mean seconds per call of ``fn``, called back to back for at least ``seconds``."""
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds or calls < 3:
        fn()
        calls += 1
    return elapsed / calls


def alternating_medians(fns, rounds: int = 7, block: float = 0.25) -> list[float]:
    """Median over ``rounds`` of each function's mean time per call, the functions taking turns.

    Each block is warmed up by a short block of its own first and runs back to back with no pause:
    a pause lets the core clock down, and a call of 60 µs then runs a whole block at the low clock.
    """
    results = [[] for _ in fns]
    for _ in range(rounds):
        for fn, bucket in zip(fns, results, strict=True):
            block_seconds(fn, block / 5)  # warm up: threads awake, caches and pages ready
            bucket.append(block_seconds(fn, block))
    return [statistics.median(bucket) for bucket in results]


def time_three(batch, seq, d_model, n_heads, weights, dtype, torch):
    """Median seconds of the textbook layer, the default layer and PyTorch's; same input, alternating."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, seq, d_model)).astype(dtype)
    layer = mha.MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
    module = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True,
                                         dtype=getattr(torch, np.dtype(dtype).name)).eval()
    tx = torch.from_numpy(x)

    def textbook():
        with mha.fast.disabled():
            layer(x, return_weights=weights)

    def default():
        layer(x, return_weights=weights)

    def theirs():
        with torch.inference_mode():
            module(tx, tx, tx, need_weights=weights, average_attn_weights=False)

    return alternating_medians([textbook, default, theirs],
                               block=0.25 if batch * seq * d_model < 1 << 20 else 1.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="how many times to measure the whole table")
    parser.add_argument("--only", help="one size, BATCHxSEQxD_MODELxHEADS (e.g. 1x1024x64x4; weights asked)")
    args = parser.parse_args()
    sizes = SIZES if args.only is None else [(*map(int, args.only.split("x")), True)]
    import torch

    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads")
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
    print("BLAS: " + ", ".join(f"{i['internal_api']} {i.get('version')} {i.get('architecture')} "
                                f"({i['num_threads']} threads)" for i in blas))
    for run in range(1, args.runs + 1):
        print(f"\nrun {run}: " + machine_line())
        print("load average: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
        print(f"{'batch':>5} {'seq':>5} {'d_model':>7} {'heads':>5} {'weights':>7} {'dtype':>7} "
              f"{'default':>8} {'textbook ms':>11} {'default ms':>10} {'torch ms':>9} "
              f"{'textbook/torch':>14} {'default/torch':>13}")
        worst = 0.0
        for batch, seq, d_model, n_heads, weights in sizes:
            large = mha.fast.worth_it(batch * n_heads * seq * seq)
            path = ("tiles" if weights else "annex") if large else "textbook"
            for dtype in (np.float32, np.float64):
                t_book, t_default, t_torch = time_three(batch, seq, d_model, n_heads, weights, dtype, torch)
                ratio = t_default / t_torch
                worst = max(worst, ratio)
                flag = "" if ratio <= TARGET else "  MISSES"
                print(f"{batch:>5} {seq:>5} {d_model:>7} {n_heads:>5} {str(weights):>7} "
                      f"{np.dtype(dtype).name:>7} {path:>8} {t_book * 1e3:>11.3f} {t_default * 1e3:>10.3f} "
                      f"{t_torch * 1e3:>9.3f} {t_book / t_torch:>14.2f} {ratio:>13.2f}{flag}", flush=True)
        print(f"worst default / torch {worst:.2f} (target <= {TARGET})")


if __name__ == "__main__":
    main()
