"""Checks for the chapters' predict-and-count exercises: the learner's answer is a number, a list
of numbers or a dict of shapes, and the check compares it with what the package computes.

A placeholder (``answer = ...``) prints "not done yet". A wrong answer fails with what was
expected, what came and, for the wrong answers a known slip produces, the slip's likely cause.
"""

from __future__ import annotations

from mha.checks._core import Checker, learner_check
from mha.checks._shared import expect_value

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
    "check_ffn_share",
    "check_uniform_match"
]
