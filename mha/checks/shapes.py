"""Checks for the chapter "Shapes: following every array through the layer" (``chapters/shapes.md``).

What a learner finds here: :func:`check_split_heads` and :func:`check_merge_heads`, the two reshapes
around the heads (also called in assignment 2), each with the wrong reshapes it recognises, and
:func:`check_head_shapes`, the chapter's exercise that predicts every shape in cross-attention. The
split and merge mistakes live in ``shared.py``, because the multi-head check recognises them too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention, layers
from mha.checks.machinery import Checker, Mistake, learner_check
from mha.checks.questions import Choice, Number, Option, Range, check_function
from mha.checks.shared import (
    BATCH,
    D_HEAD,
    D_MODEL,
    MERGE_MISTAKES,
    N_HEADS,
    NAMES,
    SEQ,
    SPLIT_MISTAKES,
    expect_shapes,
    input_rng,
)


@learner_check
def check_split_heads(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                      quiet: bool = False) -> None:
    """Check your ``split_heads(x, n_heads)`` against :func:`mha.split_heads`.

    ``x`` is (batch, seq, d_model); the answer is (batch, n_heads, seq, d_head), head ``i``
    holding features ``i*d_head:(i+1)*d_head``.

    Examples
    --------
    >>> def no_transpose(x, n_heads):
    ...     batch, seq, d_model = x.shape
    ...     return x.reshape(batch, n_heads, seq, d_model // n_heads)
    >>> check_split_heads(no_transpose)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    mha.checks.CheckFailed: check_split_heads: you reshaped straight to (batch, n_heads, seq, ...
    """
    check = Checker("check_split_heads", fn, "split_heads")
    x = input_rng(rng).normal(size=(BATCH, SEQ, D_MODEL))
    case = f"x {x.shape} = (batch, seq, d_model), n_heads = {N_HEADS}"
    got = check.call(x, N_HEADS, case=case)
    transposed_late = Mistake("you reshaped to (batch, seq, n_heads, d_head) but did not move the "
                              "heads axis forward: transpose(0, 2, 1, 3).",
                              lambda: x.reshape(BATCH, SEQ, N_HEADS, D_HEAD))
    mistakes = [Mistake(m, lambda f=f: f(x, N_HEADS)) for f, m in SPLIT_MISTAKES.items()]
    check.compare(got, attention.split_heads(x, N_HEADS), case=case, names=NAMES, exact=True,
                  mistakes=[*mistakes, transposed_late])
    check.passed("(batch, seq, d_model) → (batch, n_heads, seq, d_head), heads in order.", quiet)


@learner_check
def check_merge_heads(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                      quiet: bool = False) -> None:
    """Check your ``merge_heads(x)`` against :func:`mha.merge_heads`.

    ``x`` is (batch, n_heads, seq, d_head); the answer is (batch, seq, n_heads * d_head) with the
    heads side by side in order.

    Examples
    --------
    >>> import mha
    >>> check_merge_heads(mha.merge_heads)
    ✔ check_merge_heads passed: (batch, n_heads, seq, d_head) → (batch, seq, d_model).
    """
    check = Checker("check_merge_heads", fn, "merge_heads")
    x = input_rng(rng).normal(size=(BATCH, N_HEADS, SEQ, D_HEAD))
    case = f"x {x.shape} = (batch, n_heads, seq, d_head)"
    got = check.call(x, case=case)
    mistakes = [Mistake(m, lambda f=f: f(x)) for f, m in MERGE_MISTAKES.items()]
    check.compare(got, attention.merge_heads(x), case=case, names=NAMES, exact=True, mistakes=mistakes)
    check.passed("(batch, n_heads, seq, d_head) → (batch, seq, d_model).", quiet)


@learner_check
def check_head_shapes(predicted: object, *, quiet: bool = False) -> None:
    """Check predicted shapes in cross-attention: batch 2, 5 queries, 9 keys, d_model 32, 4 heads.

    Keys: ``"q_heads", "k_heads", "v_heads", "scores", "heads_out", "output"``.
    """
    check = Checker("check_head_shapes", lambda: None, "prediction")
    layer = layers.MultiHeadAttention(32, 4, rng=0)
    xq, xkv = np.zeros((2, 5, 32)), np.zeros((2, 9, 32))
    q, k, v = (attention.split_heads(t, 4) for t in layer.project(xq, xkv))
    heads_out, scores = attention.scaled_dot_product_attention(q, k, v, return_weights=True)
    expected = {"q_heads": q.shape, "k_heads": k.shape, "v_heads": v.shape,
                "scores": scores.shape, "heads_out": heads_out.shape,
                "output": layer(xq, xkv).shape}
    expect_shapes(check, predicted, expected, {
        "k_heads": "keys carry seq_k = 9", "v_heads": "values carry seq_k = 9",
        "scores": "(batch, n_heads, seq_q, seq_k)",
        "heads_out": "after the weighted sum each query has one d_head vector per head",
        "output": "one d_model vector per query"})
    check.passed("only the sequence axes differ between queries and keys.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
FLAT_MASK = Choice("check_flat_mask", (
    "Five sequences padded to 5 positions, 2 heads: the scores are `(5, 2, 5, 5)`. The mask "
    "`np.arange(5) < lengths[:, None]` has shape `(batch, seq_k) = (5, 5)`. What does NumPy do with "
    "`np.where(mask, scores, -np.inf)`?"), [
    Option("It raises: the mask has no head axis.",
           hint="a missing leading axis is never an error: NumPy adds axes of size 1 on the left."),
    Option("It broadcasts, and sequence b's padding is applied to query b of every sequence.",
           explains="shapes are matched from the right: the mask's (5, 5) meets (seq_q, seq_k), so its batch "
                    "axis lands on the queries. With 3 sequences NumPy would raise; with 5 it says nothing."),
    Option("It broadcasts as meant: each sequence gets its own padding.",
           hint="axes are matched from the right, never by name: the mask's batch axis meets the query axis. "
                "Give it the shape (batch, 1, 1, seq_k)."),
])

check_flat_mask = check_function(FLAT_MASK, __name__,
                                 "Grade your answer to “Predict the broadcast”: a letter.")

SCORES_MEBIBYTES = Number("check_scores_mebibytes", (
    "A float32 layer with batch 2, 256 tokens, d_model 64 and 8 heads: how many MiB (2\u00b2\u2070 bytes) "
    "does its scores array own?"), Range(3.995, 4.005), unit="MiB", wrong=[
    Range(0.495, 0.505, "that is one head's worth: the scores hold one (seq, seq) matrix per head, "
                        "(batch, n_heads, seq, seq)."),
    Range(1.995, 2.005, "that leaves out the batch: each of the 2 sequences has its own matrices."),
    Range(7.99, 8.01, "that is float64 (8 bytes a number); the layer is float32, 4 bytes."),
    Range(31.9, 32.1, "that counts bits: a float32 number takes 32 bits, which is 4 bytes."),
    Range(4.18, 4.2, "4.19 is in megabytes (10\u2076 bytes); a mebibyte is 2\u00b2\u2070 = 1,048,576 bytes."),
    Range(0.12, 0.13, "that is the size of q, k or v, (batch, seq, d_model): it grows with seq. The scores "
                      "are seq \u00d7 seq per head."),
], otherwise="count the elements, batch × n_heads × seq × seq, times 4 bytes each, then divide by 2²⁰.",
    explanation="2 \u00d7 8 \u00d7 256 \u00d7 256 numbers of 4 bytes = 4,194,304 bytes = 4 MiB; twice the "
                "tokens would make it 16 MiB, because the scores grow with the square of seq.")

check_scores_mebibytes = check_function(SCORES_MEBIBYTES, __name__,
                                        "Grade your answer to “The biggest array”: a number.")
