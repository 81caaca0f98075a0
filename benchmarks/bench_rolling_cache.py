"""Decoding time per token after a long prefix: a full KV cache against a rolling one, as ratios.

The modern-attention chapter measures what a rolling cache saves in bytes (its cells assert that the
cache stops growing); this script measures what it saves in time. One float32 ``mha.ModernAttention``
layer of the chapter's shape (d_model 256, 8 heads, 2 key/value heads, RoPE) decodes ``--tokens`` more
tokens after a prefix of 1k, 4k and 16k tokens, once with a :class:`mha.KVCache` holding the whole
prefix and once with a :class:`mha.RollingKVCache` of window 128 and 4 sinks. The prefixes' keys and
values are random (their values do not change the work). The two caches alternate in blocks, so a change
in the machine's load hits both alike; the medians of the blocks are compared.

Run: ``python benchmarks/bench_rolling_cache.py`` (``--repeat`` for more blocks).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from machine import machine_line  # benchmarks/ is on sys.path when run

import mha

WINDOW, SINKS = 128, 4


def _prefilled(layer: mha.ModernAttention, prefix: int, rolling: bool,
               rng: np.random.Generator) -> mha.KVCache:
    """A cache that has seen ``prefix`` tokens (random keys and values)."""
    shape = (1, prefix, layer.n_kv_heads * layer.d_head)  # (batch, tokens, n_kv_heads * d_head)
    if rolling:
        cache = mha.RollingKVCache(1, layer.n_kv_heads, layer.d_head, window=WINDOW, sinks=SINKS,
                                   dtype=np.float32)
    else:
        cache = mha.KVCache(1, layer.n_kv_heads, layer.d_head, dtype=np.float32, capacity=prefix)
    cache.append(rng.standard_normal(shape), rng.standard_normal(shape))
    return cache


def per_token(layer: mha.ModernAttention, prefix: int, n_tokens: int, repeat: int) -> dict[str, float]:
    """Median seconds per decoded token after ``prefix`` tokens, for each cache."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, n_tokens, layer.d_model)).astype(np.float32)
    times: dict[str, list[float]] = {"full": [], "rolling": []}
    for block in range(repeat + 1):  # alternating blocks; the first is a warm-up
        for name in times:
            cache = _prefilled(layer, prefix, name == "rolling", rng)
            layer.decode(x[:, :1], cache)  # the rolling cache evicts the prefix here
            start = time.perf_counter()
            for t in range(n_tokens):
                layer.decode(x[:, t:t + 1], cache)
            if block:
                times[name].append((time.perf_counter() - start) / n_tokens)
    return {name: statistics.median(series) for name, series in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=16)
    args = parser.parse_args(argv)
    print(machine_line())
    layer = mha.ModernAttention(256, 8, n_kv_heads=2, rope=True, rng=0, dtype=np.float32)
    print(f"one layer, d_model 256, 8 heads, 2 key/value heads, float32; rolling: window {WINDOW} + "
          f"{SINKS} sinks; {args.tokens} tokens per block, {args.repeat} blocks")
    for prefix in (1024, 4096, 16384):
        found = per_token(layer, prefix, args.tokens, args.repeat)
        print(f"prefix {prefix:6d}: full {1e3 * found['full']:.3f} ms per token, rolling "
              f"{1e3 * found['rolling']:.3f} ms: full / rolling = {found['full'] / found['rolling']:.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
