"""Checks for the chapters' predict-and-count exercises: the learner's answer is a number, a list
of numbers or a dict of shapes, and the check compares it with what the package computes.

A placeholder (``answer = ...``) prints "not done yet". A wrong answer fails with what was
expected, what came and, for the wrong answers a known slip produces, the slip's likely cause.
"""

from __future__ import annotations

import math

import numpy as np

from mha import cost, layers
from mha.checks._core import Checker, learner_check
from mha.checks._shared import expect_shapes, expect_value, expect_values

# ---------------------------------------------------------------------- cross-attention


@learner_check
def check_cross_attention_shapes(predicted, *, quiet: bool = False) -> None:
    """Check predicted shapes for a decoder (d_model 64, 8 heads) reading a 48-wide encoder.

    ``predicted`` maps ``"W_q", "W_k", "W_v", "W_o", "weights", "output"`` to shape tuples, for a
    batch of 2 with 7 decoder tokens and 50 encoder frames.
    """
    check = Checker("check_cross_attention_shapes", lambda: None, "prediction")
    layer = layers.MultiHeadAttention(64, 8, kdim=48, vdim=48, rng=0)
    out, weights = layer(np.zeros((2, 7, 64)), np.zeros((2, 50, 48)), return_weights=True)
    parameters = layer.parameters()
    expected = {name: parameters[name].shape for name in ("W_q", "W_k", "W_v", "W_o")}
    expected.update(weights=weights.shape, output=out.shape)
    expect_shapes(check, predicted, expected, {
        "W_k": "keys are projected from the 48-wide encoder vectors",
        "W_v": "values are projected from the 48-wide encoder vectors",
        "weights": "(batch, n_heads, seq_q, seq_k): one row per decoder token, one column per "
                   "frame",
        "output": "one vector per decoder token, in the decoder's width"})
    check.passed("all six shapes match mha.MultiHeadAttention(64, 8, kdim=48, vdim=48).", quiet)


# --------------------------------------------------------------------------------- cost


@learner_check
def check_crossover(crossing, *, quiet: bool = False) -> None:
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
def check_kv_budget(served, *, quiet: bool = False) -> None:
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
def check_block_size(block_size, *, quiet: bool = False) -> None:
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


# --------------------------------------------------------------------- heads that learn


@learner_check
def check_uniform_entropy(mean_entropy, *, quiet: bool = False) -> None:
    """Check the mean entropy (nats) of a causal head spreading evenly over 4 tokens."""
    check = Checker("check_uniform_entropy", lambda: None, "answer")
    expected = math.log(24) / 4
    expect_value(check, mean_entropy, expected, "the mean entropy in nats", {
        math.log2(24) / 4: "that is in bits (log base 2); nats use the natural log.",
        math.log(24): "that is the sum over the 4 queries; the question asks for the mean.",
        math.log(4): "log 4 is the entropy of the *last* query only; query i sees i + 1 keys."})
    check.passed(f"(log 1 + log 2 + log 3 + log 4) / 4 = {expected:.3f} nats.", quiet)


# ------------------------------------------------------------------ efficient attention


def _tokens_that_fit(n_layers: int = 32) -> list[int]:
    return [24 * 2**30 // (n_layers * cost.kv_cache_bytes(1, 1, 4096, 32, n_kv_heads=n_kv,
                                                          dtype=np.float16))
            for n_kv in (32, 8, 1)]


@learner_check
def check_cache_tokens(tokens, *, quiet: bool = False) -> None:
    """Check how many tokens of KV cache fit in 24 GiB (32 layers, d_model 4096, 32 heads,
    16-bit) with 32, 8 and 1 key/value heads: a list of three numbers."""
    check = Checker("check_cache_tokens", lambda: None, "answer")
    expected = _tokens_that_fit()
    expect_values(check, tokens, expected, "tokens that fit with 32, 8 and 1 key/value heads", {
        tuple(_tokens_that_fit(1)): "that is for one layer; each of the 32 layers caches every "
                                    "token."})
    check.passed(f"{expected}: each halving of the key/value heads doubles it.", quiet)


# -------------------------------------------------------------------- transformer block


@learner_check
def check_ffn_share(limit, *, quiet: bool = False) -> None:
    """Check the share of a block's parameters in its feed-forward network as d_model grows."""
    check = Checker("check_ffn_share", lambda: None, "answer")
    expect_value(check, limit, 2 / 3, "the limit of the FFN's share", {
        0.5: "the FFN has 2 · 4d² = 8d² weights (two d × 4d matrices), attention 4d²: "
             "8 / (8 + 4).",
        0.8: "attention has four d × d matrices (W_q, W_k, W_v, W_o), 4d², not 2d²."})
    check.passed("8d² / 12d² = 2/3: the FFN holds two thirds of a wide block.", quiet)


# ---------------------------------------------------------------------- encoder-decoder


@learner_check
def check_uniform_match(score, *, quiet: bool = False) -> None:
    """Check the match score of a head spreading evenly over a 5-digit source and ``</s>``."""
    check = Checker("check_uniform_match", lambda: None, "answer")
    expect_value(check, score, 1 / 6, "the uniform head's match score", {
        1 / 5: "the source has 6 real tokens: the 5 digits and </s>.",
        1 / 7: "only the 5 digits and </s> are real source tokens (padding is masked)."})
    check.passed("1/6: one right token out of 6 equally weighted ones.", quiet)


__all__ = [
    "check_block_size", "check_cache_tokens", "check_cross_attention_shapes", "check_crossover",
    "check_ffn_share", "check_kv_budget", "check_uniform_entropy",
    "check_uniform_match"
]
