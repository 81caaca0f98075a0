"""How time and peak memory of attention grow: with the sequence, the batch and the heads, full and chunked.

For each size the script times full attention (``mha.scaled_dot_product_attention``) and chunked attention
(``mha.chunked_attention``) in alternating blocks and measures each one's peak memory with ``tracemalloc``
(``mha.lab.peak_bytes``). Each sweep ends with the fitted exponent ``p`` of ``cost ∝ size^p`` (the log-log
slope over the last three sizes) printed next to the exponent that ``mha.cost`` predicts over the same sizes:
FLOPs of the attention products and softmax for time, the score bytes plus ``q``, ``k``, ``v`` and output
for memory. Full attention is only run up to ``--max-full`` tokens (its scores grow as seq²); chunked goes on.

Times depend on the machine and its load (printed); exponents much less so.

Run: ``python benchmarks/bench_scaling.py`` (``--quick`` for shorter sweeps).
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

import numpy as np
from bench_forward import median_times  # alternating timed blocks; benchmarks/ is on sys.path when run
from machine import machine_line  # benchmarks/ is on sys.path when run

import mha
from mha.lab import peak_bytes

D_HEAD, BLOCK = 64, 256
DTYPE = np.float32


def slope(sizes, values) -> float:
    """Log-log slope over the last three points."""
    x, y = np.log(np.asarray(sizes[-3:], dtype=float)), np.log(np.asarray(values[-3:], dtype=float))
    return float(np.polyfit(x, y, 1)[0])


def predicted(batch, seq, n_heads, block=None):
    """(FLOPs, bytes) that mha.cost predicts for one attention call on given q, k, v."""
    d_model = n_heads * D_HEAD
    f = mha.cost.flops(batch, seq, d_model, n_heads, bias=False)
    m = mha.cost.memory_bytes(batch, seq, d_model, n_heads, dtype=DTYPE, block_size=block)
    qkv_out = 4 * batch * seq * d_model * np.dtype(DTYPE).itemsize  # inputs and output
    return f.scores + f.softmax + f.weighted_sum, m.scores + qkv_out


def measure(batch, seq, n_heads, with_full: bool, repeats: int):
    """Seconds and peak bytes of full (or None) and chunked attention at one size."""
    rng = np.random.default_rng(seq + 7 * n_heads + 31 * batch)
    q, k, v = (rng.standard_normal((batch, n_heads, seq, D_HEAD)).astype(DTYPE) for _ in range(3))
    calls = [partial(mha.chunked_attention, q, k, v, block_size=BLOCK)]
    if with_full:
        calls.append(partial(mha.scaled_dot_product_attention, q, k, v))
    if repeats > 1:
        seconds = median_times(calls, repeats, rounds=2)
    else:  # long sequences: one warm-up and one timed call each, alternating
        seconds = []
        for call in calls:
            call()
            start = time.perf_counter()
            call()
            seconds.append(time.perf_counter() - start)
    peaks = [peak_bytes(call) for call in calls]
    chunked = (seconds[0], peaks[0])
    full = (seconds[1], peaks[1]) if with_full else None
    return full, chunked


def sweep(name, sizes, shape_of, max_full, repeats_of):
    """Print one table and its fitted exponents; ``shape_of(size)`` gives (batch, seq, n_heads)."""
    print(f"\n{name} sweep (batch, seq, heads) = {[shape_of(s) for s in sizes]}")
    print(f"{name:>7} {'full ms':>10} {'full MiB':>10} {'chunked ms':>11} {'chunked MiB':>12}")
    results = {"full": ([], [], []), "chunked": ([], [], [])}  # sizes, seconds, bytes
    for size in sizes:
        batch, seq, n_heads = shape_of(size)
        full, chunked = measure(batch, seq, n_heads, seq <= max_full, repeats_of(seq))
        for method, result in (("full", full), ("chunked", chunked)):
            if result is not None:
                for column, value in zip(results[method], (size, *result), strict=True):
                    column.append(value)
        full_text = f"{full[0] * 1e3:>10.1f} {full[1] / 2**20:>10.1f}" if full else f"{'-':>10} {'-':>10}"
        print(f"{size:>7} {full_text} {chunked[0] * 1e3:>11.1f} {chunked[1] / 2**20:>12.1f}", flush=True)
    print("  exponents over the last three sizes (measured / mha.cost):")
    for method, (done, seconds, peaks) in results.items():
        if len(done) < 3:
            continue
        block = BLOCK if method == "chunked" else None
        model = [predicted(*shape_of(s), block=block) for s in done]
        print(f"  {method:>8}: time {slope(done, seconds):5.2f} / {slope(done, [m[0] for m in model]):4.2f}"
              f"   memory {slope(done, peaks):5.2f} / {slope(done, [m[1] for m in model]):4.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sequences up to 2048 only")
    parser.add_argument("--max-seq", type=int, default=16384)
    parser.add_argument("--max-full", type=int, default=8192, help="longest sequence for full attention")
    args = parser.parse_args()
    print(machine_line())
    max_seq = 2048 if args.quick else args.max_seq
    print(f"d_head {D_HEAD}, float32, chunked block {BLOCK}")  # the load before: on the Machine line
    lengths = [n for n in (128, 256, 512, 1024, 2048, 4096, 8192, 16384) if n <= max_seq]

    def repeats_of(seq):
        return 3 if seq <= 2048 else 1

    sweep("seq", lengths, lambda n: (1, n, 2), args.max_full, repeats_of)
    sweep("batch", [1, 2, 4, 8], lambda b: (b, 1024, 4), args.max_full, repeats_of)
    sweep("heads", [1, 2, 4, 8, 16], lambda h: (1, 1024, h), args.max_full, repeats_of)
    print("\nload average after: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
