"""Checks for the chapter "Cross-attention: one sequence reads another" (``chapters/cross_attention.md``).

What a learner finds here: :func:`check_cross_attention_shapes`, the chapter's exercise that predicts
every shape of a decoder layer reading a wider encoder (the four projections, the weights, the output)
and, for a wrong one, says why the shape is what it is.
"""

from __future__ import annotations

import numpy as np

from mha import layers
from mha.checks._core import Checker, learner_check
from mha.checks._shared import expect_shapes


@learner_check
def check_cross_attention_shapes(predicted: object, *, quiet: bool = False) -> None:
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
