"""Peak memory of chunked (online-softmax) attention against full attention.

Peak memory is what ``tracemalloc`` sees NumPy allocate during the call (NumPy reports its array
buffers to it), on top of the inputs. Full attention at 16k tokens would need 8 GiB of float32 scores for
8 heads, so it is only predicted (``mha.cost.memory_bytes``), measured at shorter lengths.

Run: ``python benchmarks/bench_chunked.py`` (``--seq`` to change the long length).
Target from issue 2: chunked attention at seq 16384, 8 heads, d_head 64, float32, batch 1 peaks < 1 GiB.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from functools import partial

import numpy as np

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=16384)
    parser.add_argument("--block-size", type=int, default=256)
    args = parser.parse_args()
    n_heads, d_head, d_model = 8, 64, 512
    rng = np.random.default_rng(0)

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
