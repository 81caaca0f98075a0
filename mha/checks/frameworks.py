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
from mha.checks.machinery import Checker, Mistake, NotDone, learner_check, placeholder
from mha.checks.questions import Choice, Option, check_function


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


# ------------------------------------------------------------ questions answered before the solutions
TORCH_MASK_ROWS = Choice("check_torch_mask_rows", (
    "A colleague passes `attn_mask=torch.from_numpy(mha.causal_mask(seq))` to `nn.MultiheadAttention`. "
    "Which rows of the weights come out `nan`?"), [
    Option("None: PyTorch gives fully masked rows zeros.",
           hint="`nn.MultiheadAttention` gives NaN, not zeros, for a query that may attend to nothing, "
                "and here one query can attend to nothing. Read True as *blocked*."),
    Option("The first row.",
           hint="PyTorch reads True as *blocked*, so the first query is blocked only from key 0, itself: it "
                "still sees every later key."),
    Option("The last row.",
           explains="PyTorch reads True as blocked, so query i sees only the keys *after* it (hence the fast "
                    "training loss: it reads what it must predict), and the last query has none: 0/0 = NaN."),
    Option("Every row.",
           hint="only a row whose keys are all blocked is NaN. Query i is blocked from keys 0 … i and "
                "sees the rest."),
])

check_torch_mask_rows = check_function(TORCH_MASK_ROWS, __name__,
                                       "Grade your answer to “Diagnose a mask”: a letter.")

AVERAGE_TELLS = Choice("check_average_tells", (
    "`averaged` is the mean over heads of the per-head weights. Which of these can `averaged` alone tell "
    "you?"), [
    Option("That each query's weights still sum to 1.",
           explains="(a): an average of rows that each sum to 1 sums to 1.",
           hint="(a) can be read off: every head's row sums to 1, and so does the mean of those rows."),
    Option("The key each head weights most.",
           hint="(b) cannot: the heads' favourite keys differ, and the average's favourite need not be any "
                "head's."),
    Option("For each query and key, a lower bound on the largest weight any head gives that pair.",
           explains="(c): a mean is never above the largest value it averages, so some head gives the "
                    "pair at least the averaged weight.",
           hint="(c) can be read off: a mean never exceeds the largest value it averages, so "
                "`averaged[i, j]` is a floor for the largest head's weight on (i, j)."),
], several=True)

check_average_tells = check_function(AVERAGE_TELLS, __name__,
                                     "Grade your answer to “What the average keeps”: letters.")
