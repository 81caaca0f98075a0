"""Checks for the chapter "From `mha` to PyTorch and Keras" (``chapters/frameworks.md``).

What a learner finds here: the chapter's two exercises that move weights between layouts:
:func:`check_from_state_dict` (a PyTorch ``nn.MultiheadAttention`` state dict to ``x @ W`` matrices)
and :func:`check_keras_output_kernel` (``W_o`` as Keras's per-head output kernel), each with the
transposes and reshapes it recognises as wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mha import layers
from mha.checks._core import Checker, Mistake, NotDone, learner_check, placeholder


@learner_check
def check_from_state_dict(fn: Callable[..., Any], *, quiet: bool = False) -> None:
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
def check_keras_output_kernel(fn: Callable[..., Any], *, quiet: bool = False) -> None:
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
