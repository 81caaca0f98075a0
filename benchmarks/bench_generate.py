"""Time per generated token of the tiny GPT, with the KV cache and by full recomputation, as ratios.

For each context length, the two ways of generating (``use_cache=True`` and ``False``) alternate in
rounds, so a change in the machine's load hits both alike; each round writes a full context of tokens
from a one-token prompt (no window restart). Also reported: the machine and its matmul rate
(``machine.py``), to set the absolute times in proportion, and a training step of the chapter's model
(batch 32 x 32 characters).

Run: ``python benchmarks/bench_generate.py`` (``--repeat`` for more rounds).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from machine import machine_line  # benchmarks/ is on sys.path when run

from mha.lab import blas_threads
from mha.lab.text import text_batch
from mha.lab.tiny_gpt import TinyGPT, generate


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def per_token(context: int, repeat: int) -> tuple[float, float]:
    model = TinyGPT(80, context, d_model=64, n_heads=4, n_layers=2, rng=0)
    prompt, n_new = np.array([[1]]), context - 1
    cached, full = [], []
    generate(model, prompt, 4, rng=0)  # warm-up
    for _ in range(repeat):  # alternating rounds
        cached.append(_seconds(lambda: generate(model, prompt, n_new, rng=0)) / n_new)
        full.append(_seconds(lambda: generate(model, prompt, n_new, rng=0, use_cache=False)) / n_new)
    return statistics.median(cached), statistics.median(full)


def training_step(repeat: int) -> float:
    model = TinyGPT(80, 32, d_model=64, n_heads=4, n_layers=2, rng=0)
    batch = text_batch(np.arange(2000) % 80, 32, 32, rng=0)
    with blas_threads(1):
        model.loss_and_grads(batch)
        return statistics.median(_seconds(lambda: model.loss_and_grads(batch)) for _ in range(repeat))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(machine_line())
    step = training_step(args.repeat)
    print(f"training step (batch 32 x 32 characters, one BLAS thread): {1e3 * step:.0f} ms")
    for context in (32, 128, 256):
        cached, full = per_token(context, args.repeat)
        print(f"context {context:4d}: {1e3 * cached:.2f} ms per token with the cache, {1e3 * full:.2f} ms "
              f"without: without / with = {full / cached:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
