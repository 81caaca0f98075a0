"""Checks for the chapter "Shapes: following every array through the layer" (``chapters/shapes.md``).

What a learner finds here: :func:`check_split_heads` and :func:`check_merge_heads`, the two reshapes
around the heads (also called in assignment 2), each with the wrong reshapes it recognises, and
:func:`check_head_shapes`, the chapter's exercise that predicts every shape in cross-attention. The
split and merge mistakes live in ``_shared.py``, because the multi-head check recognises them too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention, layers
from mha.checks._core import Checker, Mistake, learner_check
from mha.checks._shared import (
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
