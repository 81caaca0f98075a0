"""Checks for the chapters' exercises: one call under each starter cell.

A starter cell holds a placeholder, ``answer = ...`` or a function whose body is
``raise NotImplementedError``; run as it is, its check prints "not done yet" and returns. Once
filled in, the check prints one ✔ line or raises :class:`CheckFailed` naming what was expected,
what came, and (when a known mistake reproduces it) the likely cause.
"""

from __future__ import annotations

import numpy as np

from mha import attention, layers
from mha.checks._core import Checker, Mistake, NotDone, learner_check, placeholder
from mha.checks._shared import input_rng

# --------------------------------------------------------------------------- frameworks


@learner_check
def check_from_state_dict(fn, *, quiet: bool = False) -> None:
    """Check ``from_state_dict(state)`` -> ``(W_q, W_k, W_v, W_o)`` for ``x @ W``, from a
    PyTorch ``nn.MultiheadAttention`` state dict (packed ``in_proj_weight``, ``(out, in)``)."""
    check = Checker("check_from_state_dict", fn, "from_state_dict")
    layer = layers.MultiHeadAttention(12, 3, rng=7)
    state = layer.to_torch_state_dict()
    case = "a (d_model 12, 3 heads) layer's state dict"
    result = check.call(state, case=case)
    if placeholder(result):
        raise NotDone(check.name)
    if not isinstance(result, tuple | list) or len(result) != 4:
        check.fail(f"expected a tuple (W_q, W_k, W_v, W_o), got {type(result).__name__} "
                   f"of length {len(result) if hasattr(result, '__len__') else '?'}.")
    for name, got in zip(("W_q", "W_k", "W_v", "W_o"), result, strict=True):
        expected = getattr(layer, name)
        check.compare(got, expected, case=f"{case}, {name}", exact=True, mistakes=[
            Mistake(f"{name} is not transposed: PyTorch stores (out, in) for x @ W.T; this course "
                    "multiplies x @ W, so transpose each matrix.", lambda e=expected: e.T)])
    check.passed("four (d_model, d_model) matrices for x @ W, equal to the layer's.", quiet)


@learner_check
def check_keras_output_kernel(fn, *, quiet: bool = False) -> None:
    """Check ``keras_output_kernel(W_o, n_heads)``: the Keras output kernel
    (n_heads, d_head, d_model) from this course's ``W_o`` (d_model, d_model)."""
    check = Checker("check_keras_output_kernel", fn, "keras_output_kernel")
    layer = layers.MultiHeadAttention(12, 3, rng=5)
    case = "W_o (12, 12), 3 heads"
    d_head = 12 // 3
    expected = layer.to_keras_weights()[6]
    check.compare(check.call(layer.W_o, 3, case=case), expected, case=case, exact=True, mistakes=[
        Mistake("you transposed W_o: in concat @ W_o, head i's features meet *rows* i·d_head to "
                "(i+1)·d_head - 1, so the kernel is W_o.reshape(n_heads, d_head, d_model).",
                lambda: layer.W_o.T.reshape(3, d_head, 12)),
        Mistake("the head and feature axes are swapped: reshape to (n_heads, d_head, d_model), "
                "rows grouped head by head.",
                lambda: layer.W_o.reshape(d_head, 3, 12).transpose(1, 0, 2)),
    ])
    check.passed("W_o.reshape(n_heads, d_head, d_model): a reshape, no transpose.", quiet)


# ---------------------------------------------------------------------------- real heads


@learner_check
def check_previous_token_share(fn, *, rng: np.random.Generator | None = None,
                               quiet: bool = False) -> None:
    """Check ``previous_token_share(weights)``: for weights (n_heads, seq, seq), each head's
    mean weight from query i on key i - 1, over the queries that have a previous token."""
    rng = input_rng(rng)
    check = Checker("check_previous_token_share", fn, "previous_token_share")
    weights = attention.softmax(2 * rng.normal(size=(3, 6, 6)))  # (n_heads, seq_q, seq_k)
    case = "weights (3, 6, 6) = (n_heads, seq_q, seq_k)"
    expected = np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean(axis=-1)  # (n_heads,)
    check.compare(check.call(weights, case=case), expected, case=case, mistakes=[
        Mistake("you measured the weight on the *next* token (key i + 1); the previous token is "
                "key i - 1: np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).",
                lambda: np.diagonal(weights, offset=1, axis1=-2, axis2=-1).mean(axis=-1)),
        Mistake("you included query 0, which has no previous token: average over queries "
                "1 .. seq - 1 only.", lambda: np.diagonal(weights, offset=-1, axis1=-2,
                                                          axis2=-1).sum(axis=-1) / 6),
        Mistake("you averaged over the heads too: return one share per head, shape (n_heads,).",
                lambda: np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean()),
        Mistake("you measured the diagonal (each token on itself).",
                lambda: np.diagonal(weights, axis1=-2, axis2=-1).mean(axis=-1)),
    ])
    check.passed("one share per head, averaged over the queries that have a previous token.",
                 quiet)


__all__ = [ "check_from_state_dict", "check_keras_output_kernel",
    "check_previous_token_share",
]
