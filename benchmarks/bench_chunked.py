"""Chunked (online-softmax) attention against full attention: the speed crossover and peak memory.

Speed: both are timed at growing sequence lengths in alternating blocks, and the ratio chunked / full is
printed for each length, next to the size of full attention's score tensor and the machine's matmul rate
measured in the same run. Full attention writes every score to memory (and NumPy maps fresh pages for
them); once the scores no longer fit in the caches, that traffic costs more than the online softmax's
bookkeeping, and the tiles, which stay in cache, win. ``--record`` appends the run to a JSON file that the
efficient-attention chapter plots (so the book never times anything while it builds), with the machine it
ran on: its CPU, cache sizes and the time of NumPy's float32 ``exp``, the two things that decide where the
tiles start to win and by how much.

Peak memory is what ``tracemalloc`` sees NumPy allocate during the call (NumPy reports its array
buffers to it), on top of the inputs. Full attention at 16k tokens would need 8 GiB of float32 scores for
8 heads, so it is only predicted (``mha.cost.memory_bytes``), measured at shorter lengths.

Run: ``python benchmarks/bench_chunked.py`` (``--seq`` to change the long length).
Target from issue 2: chunked attention at seq 16384, 8 heads, d_head 64, float32, batch 1 peaks < 1 GiB.
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
import tracemalloc
from functools import partial
from pathlib import Path

import numpy as np
from bench_forward import exp_tile, median_times  # benchmarks/ is on sys.path when run
from machine import machine_line, machine_summary

import mha

GIB = 2**30


def peak_bytes(fn) -> int:
    """Peak bytes NumPy allocated while ``fn`` ran (tracing slows allocations, so no timing here)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def qkv(seq, n_heads, d_head, rng):
    return [rng.standard_normal((1, n_heads, seq, d_head), dtype=np.float32) for _ in range(3)]


def exp_ns() -> float:
    """NumPy's float32 ``exp`` per element, in ns, on bench_forward's cache-sized tile of scores.

    With the caches, it decides where the tiles start to pay on a machine, and by how much.
    """
    exp_fn, exp_size = exp_tile(np.float32, np.random.default_rng(0))  # bench_forward's exp reference
    (exp_s,) = median_times([exp_fn], 30)
    return exp_s / exp_size * 1e9


def crossover(lengths, n_heads, d_head, block_size, dtype, repeats):
    """Seconds of full and chunked attention at each length, timed in alternating blocks."""
    rng = np.random.default_rng(1)
    rows = []
    for seq in lengths:
        q, k, v = (rng.standard_normal((1, n_heads, seq, d_head)).astype(dtype) for _ in range(3))
        # Five rounds of alternating blocks, as in bench_forward: a stall of the machine during one block
        # moves the median of five block medians far less than the two it once took.
        full_s, chunked_s = median_times(
            [partial(mha.scaled_dot_product_attention, q, k, v),
             partial(mha.chunked_attention, q, k, v, block_size=block_size)],
            repeats, rounds=5)
        score_bytes = n_heads * seq * seq * np.dtype(dtype).itemsize
        rows.append({"seq": seq, "full_s": full_s, "chunked_s": chunked_s, "score_bytes": score_bytes})
        verdict = "faster" if chunked_s < full_s else "slower"
        print(f"{seq:>6} {score_bytes / 2**20:>10.0f} {full_s * 1e3:>10.1f} {chunked_s * 1e3:>12.1f} "
              f"{chunked_s / full_s:>8.2f}  chunked {verdict}", flush=True)
    return rows


def same_numbers(block_size) -> float:
    """Largest |chunked - full| in float64 at seq 1024 with a padding mask and a causal mask."""
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 4, 1024, 64)) for _ in range(3))
    mask = np.ones((2, 1, 1, 1024), dtype=bool)
    mask[1, ..., 900:] = False  # padding
    full = mha.scaled_dot_product_attention(q, k, v, mask & mha.causal_mask(1024))
    chunked = mha.chunked_attention(q, k, v, mask, causal=True, block_size=block_size)
    return float(np.abs(chunked - full).max())


def record(path: Path, run: dict) -> None:
    """Append ``run`` to the JSON file at ``path`` (a list of runs under "runs")."""
    data = json.loads(path.read_text()) if path.exists() else {"runs": []}
    data["runs"].append(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=16384)
    parser.add_argument("--block-size", type=int, default=256)
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 512, 1024, 2048, 4096])
    parser.add_argument("--heads", type=int, default=4, help="heads in the speed comparison")
    parser.add_argument("--repeats", type=int, default=15,
                        help="timed calls per function and length, over 5 rounds")
    parser.add_argument("--record", type=Path, help="append the speed results to this JSON file")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    n_heads, d_head, d_model = 8, 64, 512
    dtype = np.float32
    summary = machine_summary()
    machine = {"cpu": summary["cpu"], "caches": summary["caches"], "exp_ns": exp_ns()}
    print(machine_line(summary))
    print(f"float32 exp: {machine['exp_ns']:.1f} ns per element")
    print(f"Speed: batch 1, {args.heads} heads, d_head {d_head}, float32, block {args.block_size}")
    print(f"{'seq':>6} {'scores MiB':>10} {'full ms':>10} {'chunked ms':>12} {'ratio':>8}")
    rows = crossover(args.lengths, args.heads, d_head, args.block_size, dtype, args.repeats)
    gap = same_numbers(args.block_size)
    print(f"float64, seq 1024, padding + causal masks: max |chunked - full| = {gap:.1e} "
          f"({'meets' if gap <= 1e-12 else 'MISSES'} <= 1e-12)")
    if args.record:
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        record(args.record, {"date": now, "machine": machine,
                             "load_average": summary["load_average"],
                             "matmul_gflops": summary["matmul_gflops"]["float32"], "dtype": "float32",
                             "batch": 1, "n_heads": args.heads, "d_head": d_head,
                             "block_size": args.block_size, "max_abs_difference_float64": gap, "rows": rows})
        print(f"recorded in {args.record}")
    if args.skip_memory:
        return
    rng = np.random.default_rng(0)
    print()

    print(f"{'seq':>6} {'method':>8} {'peak MiB':>10} {'predicted scores MiB':>21} {'seconds':>8}")
    for seq in (1024, 2048, 4096):
        q, k, v = qkv(seq, n_heads, d_head, rng)
        methods = {
            "full": (partial(mha.scaled_dot_product_attention, q, k, v), None),
            "chunked": (partial(mha.chunked_attention, q, k, v, block_size=args.block_size), args.block_size),
        }
        for name, (fn, block) in methods.items():
            predicted = mha.cost.memory_bytes(1, seq, d_model, n_heads, block_size=block).scores
            print(f"{seq:>6} {name:>8} {peak_bytes(fn) / 2**20:>10.1f} {predicted / 2**20:>21.1f} "
                  f"{seconds(fn):>8.2f}")

    seq = args.seq
    q, k, v = qkv(seq, n_heads, d_head, rng)
    chunked = partial(mha.chunked_attention, q, k, v, block_size=args.block_size)
    peak, elapsed = peak_bytes(chunked), seconds(chunked)
    full_scores = mha.cost.memory_bytes(1, seq, d_model, n_heads).scores
    verdict = "meets" if peak < GIB else "MISSES"
    print(f"\nseq {seq}: chunked attention peaked at {peak / 2**20:.0f} MiB in {elapsed:.1f} s "
          f"({verdict} the < 1 GiB target); full scores alone would be {full_scores / GIB:.1f} GiB "
          f"({full_scores / 1e9:.1f} GB), {full_scores / peak:.0f}x more.")


if __name__ == "__main__":
    main()
