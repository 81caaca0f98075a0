"""How fast is the layer's forward pass, relative to the machine's own matrix multiply?

Every number is a ratio measured in this one run, so the result does not depend on how fast the machine
is today. The reference is NumPy's ``(batch*seq, d_model) @ (d_model, d_model)`` matmul; the layer's FLOPs
are the matrix products of ``mha.cost.flops`` (projections, q kᵀ, weights @ v, output projection).
Where PyTorch is installed, ``torch.nn.MultiheadAttention`` (need_weights=False) is timed at the same shape,
dtype and thread count.

A second reference, timed in the same blocks, is NumPy's ``exp`` on a cache-sized tile of shifted scores:
the one step of the softmax that is neither a product nor a cheap pass. From the two rates the script
prints the layer's floor on this machine today (its products at the matmul rate, plus one ``exp`` per
score spread over the package's threads) and the best ratio that floor allows. NumPy's vectorised
float64 ``exp`` needs AVX-512; on an AVX2 machine such as the course's each element goes through the C
library's ``exp`` (5 to 10 ns, against 1.3 to 2.7 ns in float32), and that speed moves from minute to
minute as much as the matmul's does. The floor says how much of a missed target is the machine's; beside
PyTorch's time it says whether NumPy can reach 0.8x PyTorch here at all (PyTorch brings its own vector
``exp``, so where NumPy's is slow, the floor alone may take more than 0.8x PyTorch's time).

Run: ``python benchmarks/bench_forward.py`` (add ``--quick`` for a smaller shape).
Targets from issue 16: >= 65 % of the matmul rate in float32 and in float64, <= 0.8x PyTorch's time.
The machine's load average is printed with the results: on a shared machine every number moves with it.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np
from machine import machine_line  # benchmarks/ is on sys.path when run

import mha
from mha.fast import worker_count
from mha.fast.tiles import TILE_BYTES

TARGETS = {"float32": 0.65, "float64": 0.65}
TORCH_TARGET = 0.8


def median_times(fns, repeats: int, rounds: int = 3) -> list[float]:
    """Median seconds of each function, measured in alternating blocks with a pause before each block.

    Not interleaved call by call: BLAS (OpenBLAS, and PyTorch's OpenMP) threads keep spinning for a while
    after a call and would slow whatever runs next, flattering one side or the other. Blocks alternate so
    that slow drifts of the machine hit every function alike; the result is the median of block medians.
    """
    blocks = [[] for _ in fns]
    for _ in range(rounds):
        for fn, bucket in zip(fns, blocks, strict=True):
            time.sleep(0.3)
            fn()  # warm up: first-touch allocations, thread start
            times = []
            for _ in range(max(3, repeats // rounds)):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            bucket.append(statistics.median(times))
    return [statistics.median(bucket) for bucket in blocks]


def lesson_style_forward(x, W_q, W_k, W_v, W_o, n_heads):
    """The lessons' way, for context: separate projections, scale by np.sqrt, softmax on fresh arrays."""
    batch, seq, d_model = x.shape
    d_k = d_model // n_heads
    Q = (x @ W_q).reshape(batch, seq, n_heads, d_k).transpose(0, 2, 1, 3)
    K = (x @ W_k).reshape(batch, seq, n_heads, d_k).transpose(0, 2, 1, 3)
    V = (x @ W_v).reshape(batch, seq, n_heads, d_k).transpose(0, 2, 1, 3)
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d_k)  # NumPy 2: float32 / float64 scalar -> float64
    exp = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = exp / np.sum(exp, axis=-1, keepdims=True)
    context = (weights @ V).transpose(0, 2, 1, 3).reshape(batch, seq, d_model)
    return context @ W_o


def exp_tile(dtype, rng):
    """``np.exp`` on a cache-sized tile of shifted scores (-20 to 0), as a function; and the tile's size."""
    scores = rng.uniform(-20.0, 0.0, TILE_BYTES // np.dtype(dtype).itemsize).astype(dtype)
    out = np.empty_like(scores)
    return (lambda: np.exp(scores, out=out)), scores.size


def bench_dtype(dtype, batch, seq, d_model, n_heads, repeats, torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, seq, d_model)).astype(dtype)
    layer = mha.MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
    flat, square = x.reshape(batch * seq, d_model), layer.W_o.copy()

    f = mha.cost.flops(batch, seq, d_model, n_heads, bias=False)
    layer_flops = f.projections + f.scores + f.weighted_sum + f.output_projection
    matmul_flops = 2 * batch * seq * d_model * d_model

    exp_fn, exp_size = exp_tile(dtype, rng)
    fns = [lambda: flat @ square, exp_fn, lambda: layer(x),
           lambda: lesson_style_forward(x, layer.W_q, layer.W_k, layer.W_v, layer.W_o, n_heads)]
    if torch is not None:
        module = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True,
                                             dtype=getattr(torch, np.dtype(dtype).name)).eval()
        tx = torch.from_numpy(x)

        def torch_forward():
            with torch.inference_mode():
                module(tx, tx, tx, need_weights=False)

        fns.append(torch_forward)
    # Five rounds: a stall of the machine during one block of the (short) matmul reference moves its
    # median of five block medians far less than it moved a median of three.
    t_matmul, t_exp, t_layer, t_lesson, *t_torch = median_times(fns, repeats, rounds=5)
    exp_per_score = t_exp / exp_size  # seconds per element on one core
    # The floor: every product at the reference's rate, one exp per score on each of the package's threads
    # (the layer spreads its tiles over them when threadpoolctl can hold BLAS to one thread, as installed).
    n_scores = batch * n_heads * seq * seq
    threads = worker_count()
    floor = layer_flops * t_matmul / matmul_flops + n_scores * exp_per_score / threads
    row = {
        "dtype": np.dtype(dtype).name,
        "matmul GF/s": matmul_flops / t_matmul / 1e9,
        "exp ns": exp_per_score * 1e9,
        "threads": threads,
        "floor ms": floor * 1e3,
        "floor/matmul rate": (layer_flops / floor) / (matmul_flops / t_matmul),
        "layer ms": t_layer * 1e3,
        "layer GF/s": layer_flops / t_layer / 1e9,
        "layer/matmul rate": (layer_flops / t_layer) / (matmul_flops / t_matmul),
        "lesson-style/matmul rate": (layer_flops / t_lesson) / (matmul_flops / t_matmul),
    }
    if t_torch:
        row["torch ms"] = t_torch[0] * 1e3
        row["layer/torch time"] = t_layer / t_torch[0]
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch 2, seq 256 instead of batch 8, seq 512")
    parser.add_argument("--repeats", type=int, default=25, help="timed calls per function, over 5 rounds")
    args = parser.parse_args()
    print(machine_line())
    batch, seq = (2, 256) if args.quick else (8, 512)
    d_model, n_heads = 512, 8
    try:
        import torch
    except ImportError:
        torch = None
        print("PyTorch not installed: skipping the PyTorch comparison.")
    else:
        print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"Forward pass, batch {batch}, seq {seq}, d_model {d_model}, {n_heads} heads, "
          "no weights returned")
    print("load average before: " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + "\n")
    for dtype in (np.float32, np.float64):
        row = bench_dtype(dtype, batch, seq, d_model, n_heads, args.repeats, torch)
        name = row["dtype"]
        ok = "meets" if row["layer/matmul rate"] >= TARGETS[name] else "MISSES"
        print(f"{name}: matmul {row['matmul GF/s']:.0f} GF/s; layer {row['layer ms']:.1f} ms = "
              f"{row['layer GF/s']:.0f} GF/s")
        print(f"  layer / matmul FLOP rate  {row['layer/matmul rate']:.2f}  "
              f"({ok} target {TARGETS[name]:.2f})")
        print(f"  lesson-style / matmul     {row['lesson-style/matmul rate']:.2f}")
        print(f"  floor / matmul FLOP rate  {row['floor/matmul rate']:.2f}  (products at the matmul rate "
              f"+ exp at {row['exp ns']:.1f} ns per score on {row['threads']} threads: "
              f"{row['floor ms']:.0f} ms)")
        if "layer/torch time" in row:
            ok = "meets" if row["layer/torch time"] <= TORCH_TARGET else "MISSES"
            print(f"  layer / PyTorch time      {row['layer/torch time']:.2f}  "
                  f"(PyTorch {row['torch ms']:.1f} ms; {ok} target <= {TORCH_TARGET})")
            # The floor's time over PyTorch's: the best ratio this machine's matmul and exp allow. PyTorch
            # brings its own exp; where NumPy's is slow, the floor itself may miss 0.8.
            print(f"  floor / PyTorch time      {row['floor ms'] / row['torch ms']:.2f}")
        if not math.isfinite(row["layer GF/s"]):
            raise SystemExit("non-finite timing")
    print("\nload average after: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
