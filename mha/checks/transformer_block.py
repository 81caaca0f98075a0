"""Checks for the chapter "The transformer block" (``chapters/transformer_block.md``).

What a learner finds here: the chapter's two exercises: :func:`check_ffn_share` (the share of a wide
block's parameters in its feed-forward network) and :func:`check_rms_norm` (RMSNorm, compared with
the formula, with the mistakes it recognises: layer norm instead, gamma missing, eps misplaced).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import normalization
from mha.checks.machinery import Checker, Mistake, learner_check
from mha.checks.questions import Choice, Option, check_function
from mha.checks.shared import FLOAT32_ADVICE, expect_value, input_rng


@learner_check
def check_ffn_share(limit: object, *, quiet: bool = False) -> None:
    """Check the share of a block's parameters in its feed-forward network as d_model grows."""
    check = Checker("check_ffn_share", lambda: None, "answer")
    expect_value(check, limit, 2 / 3, "the limit of the FFN's share", {
        0.5: "the FFN has 2 · 4d² = 8d² weights (two d × 4d matrices), attention 4d²: "
             "8 / (8 + 4).",
        0.8: "attention has four d × d matrices (W_q, W_k, W_v, W_o), 4d², not 2d²."})
    check.passed("8d² / 12d² = 2/3: the FFN holds two thirds of a wide block.", quiet)


@learner_check
def check_rms_norm(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                   quiet: bool = False) -> None:
    """Check ``rms_norm(x, gamma, eps=1e-5)``: ``gamma * x / sqrt(mean(x²) + eps)`` over the
    last axis, float32 kept float32."""
    rng = input_rng(rng)
    check = Checker("check_rms_norm", fn, "rms_norm")
    x, gamma = rng.normal(1.0, 2.0, size=(3, 5, 8)), rng.normal(size=8)

    def rms(a, g, eps=1e-5):
        return g * a / np.sqrt(np.mean(a * a, axis=-1, keepdims=True) + eps)

    case = "x (3, 5, 8) with mean 1"
    check.compare(check.call(x, gamma, case=case), rms(x, gamma), case=case, mistakes=[
        Mistake("you subtracted the mean: that is layer norm; RMSNorm divides x itself by its "
                "root mean square.", lambda: normalization.layer_norm(x, gamma, eps=1e-5)),
        Mistake("gamma is missing: multiply by gamma after normalising.",
                lambda: rms(x, np.ones_like(gamma))),
        Mistake("you took the mean square over the wrong axis: normalise each token over its "
                "features, axis=-1.",
                lambda: gamma * x / np.sqrt(np.mean(x * x, axis=0, keepdims=True) + 1e-5)),
        Mistake("eps sits outside the square root; it belongs inside: sqrt(mean(x²) + eps).",
                lambda: gamma * x / (np.sqrt(np.mean(x * x, axis=-1, keepdims=True)) + 1e-5)),
    ])
    zeros = np.zeros((2, 8))
    got = check.as_array(check.call(zeros, gamma, case="an all-zero token"), "an all-zero token")
    if not np.isfinite(got).all():
        check.fail("an all-zero token gave NaN: add eps inside the square root.")
    x32, g32 = x.astype(np.float32), gamma.astype(np.float32)
    got = check.compare(check.call(x32, g32, case="float32 inputs"), rms(x32, g32),
                        case="float32 inputs")
    check.check_dtype(got, np.float32, "float32 inputs", FLOAT32_ADVICE)
    check.passed("matches gamma * x / sqrt(mean(x²) + eps), float32 stays float32.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
POST_NORM_FINAL = Choice("check_post_norm_final", (
    "A pre-norm stack needs one more `LayerNorm` after its last block, because its stream grows with depth. "
    "Would a post-norm stack need it too?"), [
    Option("Yes: its stream grows with depth too.",
           hint="in a post-norm block the layer norm comes *after* the residual addition, so every "
                "block hands on a stream of unit size per token: nothing is left to shrink."),
    Option("No: it already ends in a layer norm.",
           explains="post-norm normalises after each residual addition, its last block included, so its "
                    "output already has the size the output layer expects."),
    Option("Yes: an output layer always needs a norm of its own.",
           hint="the output layer needs a stream of a known size, not a norm of its own; a post-norm stack's "
                "last operation already gives that."),
])

check_post_norm_final = check_function(POST_NORM_FINAL, __name__,
                                       "Grade your answer to “The final norm of a pre-norm stack”: a letter.")
