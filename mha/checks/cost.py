"""Checks for the chapter "What attention costs" (``chapters/cost.md``).

What a learner finds here: the chapter's three counting exercises, each compared with what
:mod:`mha.cost` computes: :func:`check_crossover` (the length where attention outgrows the
projections), :func:`check_kv_budget` (how many sequences a KV-cache budget serves) and
:func:`check_block_size` (the largest block whose score tiles fit). Each knows the answers that a
common slip gives and names the slip.
"""

from __future__ import annotations

import numpy as np

from mha import cost
from mha.checks.machinery import Checker, learner_check
from mha.checks.shared import expect_value, expect_values


@learner_check
def check_crossover(crossing: object, *, quiet: bool = False) -> None:
    """Check the first sequence length at which the attention products (scores and weighted
    sum) cost more FLOPs than the four projections, for d_model 512 and 8 heads."""
    check = Checker("check_crossover", lambda: None, "answer")

    def attention_wins(n):
        f = cost.flops(1, n, 512, 8)
        return f.scores + f.weighted_sum > f.projections + f.output_projection

    expected = next(n for n in range(1, 4096) if attention_wins(n))
    expect_value(check, crossing, expected, "the first length where attention costs more", {
        1024.0: "1024 = 2·d_model is where 8·seq·d² = 4·seq²·d exactly; the biases add a few "
                "linear terms to the projections, so the first length where attention costs "
                "*more* comes one later.",
        512.0: "512 = d_model; solve 8·seq·d² = 4·seq²·d for seq: seq = 2·d_model."}, rel=0)
    check.passed(f"{expected} tokens, one past 2·d_model.", quiet)


def _sequences_served(bytes_per_value: int, n_layers: int = 32) -> list[int]:
    budget, dtype = 24 * 2**30, {2: np.float16, 4: np.float32}[bytes_per_value]
    return [budget // (n_layers * cost.kv_cache_bytes(1, 8192, 4096, 32, n_kv_heads=n_kv,
                                                      dtype=dtype))
            for n_kv in (32, 8, 1)]


@learner_check
def check_kv_budget(served: object, *, quiet: bool = False) -> None:
    """Check how many 8192-token sequences fit in 24 GiB of KV cache (32 layers, d_model 4096,
    32 query heads, 16-bit) with 32, 8 and 1 key/value heads: a list of three numbers."""
    check = Checker("check_kv_budget", lambda: None, "answer")
    expected = _sequences_served(2)
    expect_values(check, served, expected, "sequences served with 32, 8 and 1 key/value heads", {
        tuple(_sequences_served(4)): "16-bit floats take 2 bytes each, not 4.",
        tuple(_sequences_served(2, n_layers=1)): "that is for one layer; every one of the 32 "
                                                 "layers keeps its own cache.",
        tuple(2 * n for n in _sequences_served(2)): "the cache holds keys *and* values: "
                                                    "2 · layers · seq · n_kv · d_head numbers "
                                                    "per sequence."})
    check.passed(f"{expected}: each halving of the key/value heads doubles it.", quiet)


@learner_check
def check_block_size(block_size: object, *, quiet: bool = False) -> None:
    """Check the largest power-of-two block whose float32 score tiles (16 heads, 32 768 tokens,
    d_model 1024, as mha.cost.memory_bytes counts them) fit in 64 MiB."""
    check = Checker("check_block_size", lambda: None, "answer")

    def tiles(b):
        return cost.memory_bytes(1, 32768, 1024, 16, block_size=b).scores

    expected = max(2**p for p in range(4, 15) if tiles(2**p) <= 64 * 2**20)
    expect_value(check, block_size, expected, "the largest block size that fits", {
        2.0 * expected: f"a block of {2 * expected} needs {tiles(2 * expected) / 2**20:.1f} MiB: "
                        "the running maximum and sum per row push it just over 64 MiB."}, rel=0)
    check.passed(f"block_size = {expected}: {tiles(expected) / 2**20:.1f} MiB of tiles.", quiet)
