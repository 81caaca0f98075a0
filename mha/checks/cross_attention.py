"""Checks for the chapter "Cross-attention: one sequence reads another" (``chapters/cross_attention.md``).

What a learner finds here: :func:`check_cross_attention_shapes`, the chapter's exercise that predicts
every shape of a decoder layer reading a wider encoder (the four projections, the weights, the output)
and, for a wrong one, says why the shape is what it is.
"""

from __future__ import annotations

import numpy as np

from mha import layers
from mha.checks.machinery import Checker, learner_check
from mha.checks.questions import Choice, Option, check_function
from mha.checks.shared import expect_shapes


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


# ------------------------------------------------------------ questions answered before the solutions
REVERSED_SOURCE = Choice("check_reversed_source", (
    "You reverse the English sentence and embed it again, so each word also gets a new position. Which "
    "head's weights do not change at all?"), [
    Option("The meaning head.",
           hint="the meaning head reads no position, so its weights follow the words: each column moves with "
                "its word, and the map is the old one with its columns reversed, not the same map."),
    Option("The position head.",
           explains="it reads only positions, and the reversed sentence has the same positions 0 … n−1 "
                    "in the same places: the head sees exactly what it saw before."),
    Option("The mixed head.",
           hint="it reads meaning and position, and reversing changes which word sits at each position, so "
                "its weights change, in a way that is neither a reversal nor nothing."),
    Option("None: every head sees a new input.",
           hint="a head sees only what its projections keep. The position head's `W_k` keeps only the "
                "position part of each key, and that part did not change."),
])

check_reversed_source = check_function(REVERSED_SOURCE, __name__,
                                       "Grade your answer to “Shuffle the source”: a letter.")

TARGET_PADDING = Choice("check_target_padding", (
    "The source mask `mask` has shape `(batch, 1, 1, seq_k)`, and `real_rows = np.arange(seq_q) < "
    "tgt_lengths[:, None]` has shape `(batch, seq_q)`. Which expression hides every key from the padded "
    "target rows, with shape `(batch, 1, seq_q, seq_k)`?"), [
    Option("`mask & real_rows`",
           hint="`(batch, seq_q)` lines up from the right with `(…, 1, seq_k)`: batch lands on the "
                "query axis and seq_q on the key axis. Give `real_rows` the axes it means."),
    Option("`mask & real_rows[:, None, :, None]`",
           explains="`real_rows` becomes `(batch, 1, seq_q, 1)`, one flag per target row spread along "
                    "the keys, and & keeps a key only where both masks allow it."),
    Option("`mask & real_rows[:, None, None, :]`",
           hint="that puts the target rows on the *key* axis: it hides keys by the target's length (and fits "
                "only when seq_q equals seq_k)."),
    Option("`mask | real_rows[:, None, :, None]`",
           hint="| lets a key through when *either* mask allows it, so padded rows would still see "
                "every real source word. True means “may attend”: combine with &."),
])

check_target_padding = check_function(TARGET_PADDING, __name__,
                                      "Grade your answer to “Mask the target padding too”: a letter.")
