"""Checks for the chapters' predict-and-count exercises: the learner's answer is a number, a list
of numbers or a dict of shapes, and the check compares it with what the package computes.

A placeholder (``answer = ...``) prints "not done yet". A wrong answer fails with what was
expected, what came and, for the wrong answers a known slip produces, the slip's likely cause.
"""

from __future__ import annotations

import math

import numpy as np

from mha import cost
from mha.checks._core import Checker, learner_check
from mha.checks._shared import expect_value, expect_values

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


__all__ = [ "check_cache_tokens",
    "check_ffn_share", "check_uniform_entropy",
    "check_uniform_match"
]
