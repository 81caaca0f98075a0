"""Checks for the chapter "Self-attention and scaled dot-product attention" (``chapters/self_attention.md``).

The one head a learner builds there, and in assignment 1: :func:`check_softmax`,
:func:`check_attention` (with masks, if your function takes one) and :func:`check_causal_mask`; then
the chapter's exercises: :func:`check_dot_variance` (why the scores are divided by √d_k),
:func:`check_window_mask` and :func:`check_padding_mask`. Next to each check sit the mistakes it
recognises, each with the message it prints when your numbers match that mistake.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention, masks
from mha.checks.machinery import Checker, Mistake, accepts, learner_check, takes_positional
from mha.checks.questions import Choice, Option, check_function
from mha.checks.shared import FLOAT32_ADVICE, expect_value, input_rng, output_and_weights

OVERFLOW = (
    "overflow: np.exp of large scores is inf, and inf / inf is NaN. Subtract each row's max before "
    "np.exp (softmax does not change when a row is shifted), or use a stable softmax."
)


def _keepdims_hint(error: Exception) -> str:
    if "broadcast" in str(error):
        return ("A sum or max taken without keepdims=True loses its axis and no longer lines up "
                "with the rows: use keepdims=True.")
    return ""


def _exp_normalise(e: np.ndarray) -> np.ndarray:
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_mistakes(x: np.ndarray) -> list[Mistake]:
    mistakes = [
        Mistake("softmax over the wrong axis: your output matches a softmax down the columns "
                "(axis=-2). Each row holds one query's scores over all the keys, so normalise "
                "along the last axis, axis=-1.", lambda: attention.softmax(x, axis=-2)),
        Mistake("softmax over the wrong axis (axis 0): normalise along the last axis, axis=-1.",
                lambda: attention.softmax(x, axis=0)),
        Mistake("you divided by the sum over the whole array; sum along the last axis only: "
                "e.sum(axis=-1, keepdims=True).", lambda: np.exp(x) / np.exp(x).sum()),
        Mistake("the rows do not sum to 1: divide the exponentials by their sum along the last "
                "axis.", lambda: np.exp(x)),
        Mistake("the rows do not sum to 1: after subtracting the max, divide the exponentials by "
                "their sum along the last axis.", lambda: np.exp(x - x.max(-1, keepdims=True))),
        Mistake("np.exp is missing: softmax exponentiates the scores before normalising them.",
                lambda: x / x.sum(axis=-1, keepdims=True)),
        Mistake("you summed without keepdims=True: the row sums then broadcast along the last "
                "axis instead of each row. Use e.sum(axis=-1, keepdims=True).",
                lambda: np.exp(x) / np.exp(x).sum(axis=-1)),
        Mistake("you took the max without keepdims=True, so each row subtracted the maxima of "
                "other rows. Use x.max(axis=-1, keepdims=True).",
                lambda: _exp_normalise(np.exp(x - x.max(axis=-1)))),
        Mistake("you subtracted the max along the wrong axis: use each row's own max, "
                "x.max(axis=-1, keepdims=True).",
                lambda: _exp_normalise(np.exp(x - x.max(axis=-2, keepdims=True)))),
    ]
    return mistakes


@learner_check
def check_softmax(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                  quiet: bool = False) -> None:
    """Check your softmax over the last axis against :func:`mha.softmax`.

    Parameters
    ----------
    fn : callable
        ``fn(x)`` (optionally ``fn(x, axis=...)``) returning an array shaped like ``x``.
    rng : numpy.random.Generator, optional
        Where the test inputs come from (default: seeded with 0).
    quiet : bool
        If True, print nothing when every case passes.

    Raises
    ------
    CheckFailed
        An ``AssertionError`` whose message names the mistake: wrong axis, missing keepdims,
        overflow without subtracting the max, the global max, a float32 input upcast, ...

    Examples
    --------
    >>> import mha
    >>> check_softmax(mha.softmax)
    ✔ check_softmax passed: matches mha.softmax on 2-D, 3-D, huge and float32 inputs.
    >>> def unstable(x):
    ...     e = np.exp(x)
    ...     return e / e.sum(axis=-1, keepdims=True)
    >>> check_softmax(unstable)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    mha.checks.CheckFailed: check_softmax: overflow: np.exp of large scores is inf, ...
    """
    rng = input_rng(rng)
    check = Checker("check_softmax", fn, "softmax")
    for x, case in ((rng.normal(size=(3, 5)), "a (3, 5) input"),
                    (2.0 * rng.normal(size=(4, 4, 4)), "a (4, 4, 4) input")):
        got = check.call(x, case=case, hint=_keepdims_hint)
        check.compare(got, attention.softmax(x), case=case, mistakes=_softmax_mistakes(x))
    offsets = rng.permutation([-3000.0, -1000.0, 0.0, 2000.0]).reshape(4, 1, 1)
    for big, case, message in (
        (x + 1000.0, "scores near 1000", OVERFLOW),
        (x + offsets, "rows with very different scales",
         "you subtracted the max of the whole array: rows far below it underflow to 0 / 0 = NaN. "
         "Subtract each row's own max, x.max(axis=-1, keepdims=True)."),
    ):
        got = check.as_array(check.call(big, case=case), case)
        if got.shape == big.shape and not np.isfinite(got).all():
            check.fail(f"{message} (found on {case})")
        check.compare(got, attention.softmax(big), case=case)
    x32 = x.astype(np.float32)
    got = check.compare(check.call(x32, case="float32 input"), attention.softmax(x32),
                        case="float32 input")
    check.check_dtype(got, np.float32, "float32 input", FLOAT32_ADVICE)
    if accepts(fn, "axis"):
        case = "axis=0 on a (4, 4, 4) input"
        ignored = Mistake("your softmax ignores its axis argument.", lambda: attention.softmax(x))
        check.compare(check.call(x, axis=0, case=case), attention.softmax(x, axis=0), case=case,
                      mistakes=[ignored])
    check.passed("matches mha.softmax on 2-D, 3-D, huge and float32 inputs.", quiet)


def _transpose_hint(error: Exception) -> str:
    if "matmul" in str(error) or "aligned" in str(error) or "shapes" in str(error):
        return ("The scores are q @ kᵀ: transpose k on its last two axes only, "
                "np.swapaxes(k, -1, -2) (`.T` reverses every axis of a batch), and use @ rather "
                "than np.dot, which is not a batched product.")
    return ""


def _scores_then(q, k, v, weigh) -> np.ndarray:
    scores = q @ np.swapaxes(k, -1, -2)
    return weigh(scores) @ v


def _attention_mistakes(q, k, v) -> list[Mistake]:
    d_k, d_v = q.shape[-1], v.shape[-1]
    sdpa = attention.scaled_dot_product_attention
    return [
        Mistake(f"the scores were not scaled: divide q @ kᵀ by √d_k = √{d_k} before the softmax "
                "(without it, large d_k saturates the softmax).",
                lambda: sdpa(q * math.sqrt(d_k), k, v)),
        Mistake(f"you divided the scores by d_k = {d_k}; the scale is its square root, √d_k.",
                lambda: sdpa(q / math.sqrt(d_k), k, v)),
        Mistake(f"you scaled by √d_v = √{d_v} (the values' size); the scale is √d_k, the size of "
                "the vectors in the dot product.", lambda: sdpa(q * math.sqrt(d_k / d_v), k, v)),
        Mistake("softmax over the wrong axis (axis=-2, over the queries): each query's weights "
                "must sum to 1 over the keys, axis=-1.",
                lambda: _scores_then(q / math.sqrt(d_k), k, v, lambda s: attention.softmax(s, axis=-2))),
        Mistake("the softmax is missing: the weights are softmax(q @ kᵀ / √d_k).",
                lambda: _scores_then(q / math.sqrt(d_k), k, v, lambda s: s)),
        Mistake("you returned the attention weights (seq_q, seq_k); the output is weights @ v.",
                lambda: sdpa(q, k, v, return_weights=True)[1]),
        Mistake("you mixed the keys, not the values: the output is weights @ v.",
                lambda: sdpa(q, k, k)),
    ]


def _call_attention(check, fn, q, k, v, mask, case, by_name):
    if mask is None:
        result = check.call(q, k, v, case=case, hint=_transpose_hint)
    elif by_name:
        result = check.call(q, k, v, mask=mask, case=case, hint=_transpose_hint)
    else:
        result = check.call(q, k, v, mask, case=case, hint=_transpose_hint)
    return output_and_weights(check, result, case)


def _check_masks(check, fn, rng, q, k, v) -> None:
    # The mask goes in fourth place whenever it can, whatever the parameter is called (m, attn_mask):
    # by name only to a function that takes it by keyword alone.
    by_name = not takes_positional(fn, 3)
    sdpa = attention.scaled_dot_product_attention
    mask = rng.random((q.shape[-2], k.shape[-2])) < 0.5
    mask[:, 0], mask[:, 1] = True, False  # every row keeps a key and loses one, either polarity
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    case = "a random boolean mask"
    out, _ = _call_attention(check, fn, q, k, v, mask, case, by_name)
    check.compare(out, sdpa(q, k, v, mask), case=case, mistakes=[
        Mistake("the mask polarity is inverted: in this course True means 'may attend'; you "
                "blocked the True positions.", lambda: sdpa(q, k, v, ~mask)),
        Mistake("masked scores were set to 0, but exp(0) = 1 still gives them weight: set them "
                "to -inf, np.where(mask, scores, -np.inf).",
                lambda: attention.softmax(np.where(mask, scores, 0.0)) @ v),
        Mistake("the mask was applied after the softmax, so the weights no longer sum to 1: mask "
                "the scores before the softmax.", lambda: (attention.softmax(scores) * mask) @ v),
    ])
    batch_q = rng.normal(size=(2, *q.shape))
    causal = masks.causal_mask(q.shape[-2], k.shape[-2])
    case = "a batch with a (seq_q, seq_k) causal mask"
    out, _ = _call_attention(check, fn, batch_q, k, v, causal, case, by_name)
    check.compare(out, sdpa(batch_q, k, v, causal), case=case)
    blocked = mask.copy()
    blocked[0] = False
    case = "a mask whose first row is all False"
    out, _ = _call_attention(check, fn, q, k, v, blocked, case, by_name)
    if out.shape == (q.shape[-2], v.shape[-1]) and np.isnan(out[0]).any():
        check.fail("a query that may attend to no key gave NaN: the softmax of a row of -inf is "
                   "0 / 0. Give such rows zero weights (and so a zero output).")
    check.compare(out, sdpa(q, k, v, blocked), case=case, mistakes=[Mistake(
        "a query that may attend to no key got uniform weights over all keys (masking with a "
        "large negative number such as -1e9 does this, and attends to padding): give such rows "
        "zero weights.", lambda: np.concatenate([v.mean(axis=0, keepdims=True),
                                                 sdpa(q, k, v, blocked)[1:]]))])


@learner_check
def check_attention(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                    quiet: bool = False) -> None:
    """Check your scaled dot-product attention against :func:`mha.scaled_dot_product_attention`.

    Parameters
    ----------
    fn : callable
        ``fn(q, k, v)`` or ``fn(q, k, v, mask)`` with q (..., seq_q, d_k), k (..., seq_k, d_k),
        v (..., seq_k, d_v), returning the output (..., seq_q, d_v) or ``(output, weights)``.
        If it takes a mask (a parameter named ``mask``, or a fourth one), masks are checked too:
        True means "may attend", and a query with no allowed key gets a zero output.
    rng : numpy.random.Generator, optional
        Where the test inputs come from (default: seeded with 0).
    quiet : bool
        If True, print nothing when every case passes.

    Examples
    --------
    >>> import mha
    >>> check_attention(mha.scaled_dot_product_attention)
    ✔ check_attention passed: one sequence, batches, large scores, float32 and masks.
    >>> def unscaled(q, k, v):
    ...     return mha.softmax(q @ np.swapaxes(k, -1, -2)) @ v
    >>> check_attention(unscaled)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    mha.checks.CheckFailed: check_attention: the scores were not scaled: divide q @ kᵀ by √d_k ...
    """
    rng = input_rng(rng)
    check = Checker("check_attention", fn, "attention")
    names = {3: "seq_q", 5: "seq_k", 4: "d_k", 6: "d_v", 2: "batch", 7: "n_heads"}
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 6))
    case = "one sequence: q (3, 4), k (5, 4), v (5, 6)"
    out, weights = _call_attention(check, fn, q, k, v, None, case, False)
    check.compare(out, attention.scaled_dot_product_attention(q, k, v), case=case, names=names,
                  mistakes=_attention_mistakes(q, k, v))
    if weights is not None:
        expected = attention.scaled_dot_product_attention(q, k, v, return_weights=True)[1]
        check.compare(weights, expected, case=case + ", the weights", names=names)
    for lead in ((2,), (2, 7)):
        qb, kb, vb = (rng.normal(size=(*lead, *a.shape)) for a in (q, k, v))
        case = f"a batch: q {qb.shape}, k {kb.shape}, v {vb.shape}"
        out, _ = _call_attention(check, fn, qb, kb, vb, None, case, False)
        check.compare(out, attention.scaled_dot_product_attention(qb, kb, vb), case=case, names=names)
    case = "large scores (q and k times 30)"
    out, _ = _call_attention(check, fn, 30 * q, 30 * k, v, None, case, False)
    if out.shape == (3, 6) and not np.isfinite(out).all():
        check.fail(f"{OVERFLOW} (found on {case})")
    check.compare(out, attention.scaled_dot_product_attention(30 * q, 30 * k, v), case=case)
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    out, _ = _call_attention(check, fn, q32, k32, v32, None, "float32 inputs", False)
    check.compare(out, attention.scaled_dot_product_attention(q32, k32, v32), case="float32 inputs")
    check.check_dtype(out, np.float32, "float32 inputs", FLOAT32_ADVICE)
    masked = accepts(fn, "mask", 3)
    if masked:
        _check_masks(check, fn, rng, q, k, v)
    check.passed("one sequence, batches, large scores, float32"
                 + (" and masks." if masked else " (no mask argument, masks not checked)."), quiet)


@learner_check
def check_causal_mask(fn: Callable[..., Any], *, quiet: bool = False) -> None:
    """Check your causal mask against :func:`mha.causal_mask` (True = may attend).

    Parameters
    ----------
    fn : callable
        ``fn(seq)`` or ``fn(seq_q, seq_k)`` returning a bool array (seq_q, seq_k). With two
        sizes the mask is end-aligned: the queries are the last seq_q positions.
    quiet : bool
        If True, print nothing when every case passes.

    Examples
    --------
    >>> check_causal_mask(lambda seq: np.triu(np.ones((seq, seq), dtype=bool)))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    mha.checks.CheckFailed: check_causal_mask: True above the diagonal lets a query see ...
    """
    check = Checker("check_causal_mask", fn, "causal mask")
    expected = masks.causal_mask(5)
    case = "seq = 5"
    got = check.as_array(check.call(5, case=case), case)
    if got.dtype != bool and got.shape == expected.shape:
        if np.array_equal(got, np.where(expected, 0.0, -np.inf)):
            check.fail("you returned an additive mask (0 / -inf); this course's masks are boolean, "
                       "True where a query may attend.")
        if np.isin(got, (0, 1)).all() and np.array_equal(got != 0, expected):
            check.fail(f"the pattern is right but the dtype is {got.dtype}: return a bool array, "
                       "e.g. np.tri(seq, dtype=bool) or .astype(bool).")
    eye = np.eye(5, dtype=bool)
    check.compare(got, expected, case=case, exact=True, mistakes=[
        Mistake("the mask is inverted: True means 'may attend', so True belongs on and below the "
                "diagonal.", lambda: ~expected),
        Mistake("True above the diagonal lets a query see future keys: keep the lower triangle "
                "(np.tril), True on and below the diagonal.", lambda: ~expected | eye),
        Mistake("the diagonal is False: a token must be allowed to attend to itself.",
                lambda: expected & ~eye),
        Mistake("nothing is masked: every entry is True.", lambda: np.ones_like(expected)),
    ])
    two_sizes = accepts(fn, "seq_k", 1)
    if two_sizes:
        case = "seq_q = 3, seq_k = 5"
        got = check.call(3, 5, case=case)
        check.compare(got, masks.causal_mask(3, 5), case=case, exact=True, mistakes=[Mistake(
            "with seq_q < seq_k the queries are the *last* seq_q positions (as when decoding with "
            "a cache), so the mask is end-aligned: np.tril(..., k=seq_k - seq_q).",
            lambda: np.tri(3, 5, dtype=bool))])
    check.passed("matches mha.causal_mask" + (", square and end-aligned." if two_sizes else
                 " (square; give it a seq_k parameter to check end alignment)."), quiet)


@learner_check
def check_dot_variance(variance: object, *, quiet: bool = False) -> None:
    """Check Var(q · k) for q, k of 64 independent entries, mean 0 and standard deviation 2."""
    check = Checker("check_dot_variance", lambda: None, "answer")
    d, sigma = 64, 2.0
    expected = d * sigma**4
    expect_value(check, variance, expected, "Var(q · k) for d = 64, σ = 2", {
        d * sigma**2: "each product q_i k_i has variance E[q_i²] E[k_i²] = σ² · σ² = σ⁴, "
                      "not σ².",
        sigma**4: "that is one term's variance; the d = 64 independent terms add up.",
        math.sqrt(d) * sigma**2: "that is the standard deviation; the variance is its square.",
        float(d): "that holds for σ = 1; with σ = 2 each term's variance is σ⁴ = 16."})
    check.passed(f"d σ⁴ = {expected:.0f}; divide the scores by σ² √d to bring it back to 1.",
                 quiet)


@learner_check
def check_window_mask(fn: Callable[..., Any], *, quiet: bool = False) -> None:
    """Check ``window_mask(seq, width)``: token i may see itself and the ``width - 1`` tokens before.

    Examples
    --------
    >>> def window_mask(seq, width):
    ...     offset = np.arange(seq)[:, None] - np.arange(seq)[None, :]  # (seq_q, seq_k)
    ...     return (offset >= 0) & (offset < width)
    >>> check_window_mask(window_mask)
    ✔ check_window_mask passed: causal, width tokens per row (fewer at the start), bool.
    """
    check = Checker("check_window_mask", fn, "window mask")
    for seq, width in ((6, 3), (5, 1), (4, 9)):
        case = f"seq = {seq}, width = {width}"
        offset = np.arange(seq)[:, None] - np.arange(seq)[None, :]  # (seq_q, seq_k): i - j
        expected = (offset >= 0) & (offset < width)
        got = check.as_array(check.call(seq, width, case=case), case)
        if got.dtype != bool and got.shape == expected.shape and np.isin(got, (0, 1)).all():
            got = got != 0
        check.compare(got, expected, case=case, exact=True, mistakes=[
            Mistake("the mask is not causal: a token may also see the tokens after it. Keep "
                    "only i - j >= 0.", lambda o=offset, w=width: np.abs(o) < w),
            Mistake(f"each row keeps width + 1 tokens: with width = {width} token i sees itself "
                    "and the width - 1 before it, so i - j < width.",
                    lambda o=offset, w=width: (o >= 0) & (o <= w)),
            Mistake("the mask is inverted: True means 'may attend'.",
                    lambda e=expected: ~e),
        ])
    check.passed("causal, width tokens per row (fewer at the start), bool.", quiet)


@learner_check
def check_padding_mask(fn: Callable[..., Any], *, quiet: bool = False) -> None:
    """Check ``padding_mask(lengths, seq)``: True on each sequence's real tokens, shape (batch, 1, 1, seq).

    Examples
    --------
    >>> def padding_mask(lengths, seq):
    ...     real = np.arange(seq)[None, :] < np.asarray(lengths)[:, None]  # (batch, seq_k)
    ...     return real[:, None, None, :]  # (batch, 1, 1, seq_k)
    >>> check_padding_mask(padding_mask)
    ✔ check_padding_mask passed: (batch, 1, 1, seq_k), True on the real tokens, bool.
    """
    check = Checker("check_padding_mask", fn, "padding mask")
    for lengths, seq in (([4, 6], 6), ([1, 3, 2], 3), ([5], 7)):
        case = f"lengths = {lengths}, seq = {seq}"
        expected = masks.padding_mask(lengths, seq)  # (batch, 1, 1, seq_k)
        got = check.as_array(check.call(list(lengths), seq, case=case), case)
        if got.dtype != bool and np.isin(got, (0, 1)).all():
            got = got != 0
        check.compare(got, expected, case=case, exact=True, mistakes=[
            Mistake("the mask has shape (batch, seq_k): against scores (batch, n_heads, seq_q, seq_k) its "
                    "batch axis lines up with the queries. Add the two singleton axes: "
                    "mask[:, None, None, :].", lambda e=expected: e[:, 0, 0]),
            Mistake("the mask is inverted: True means 'may attend', so real tokens are True.",
                    lambda e=expected: ~e),
            Mistake("one padding position too many is allowed: position t is real when t < length, "
                    "not t <= length.", lambda s=seq, n=lengths: (
                        np.arange(s)[None, :] <= np.array(n)[:, None])[:, None, None, :]),
        ])
    check.passed("(batch, 1, 1, seq_k), True on the real tokens, bool.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
SCORE_SHIFT = Choice("check_score_shift", "You add a different number to each *column* of the scores: key j "
                     "gets +c_j from every query. What happens to the weights?", [
    Option("Nothing: softmax ignores numbers added to the scores.", hint="a constant cancels only when the "
           "whole *row* gets it: then no difference within the row changes. A number per key changes them."),
    Option("Every query moves weight towards the keys that got more.", explains="a row's weights depend "
           "only on the differences between its scores, and a number per key changes those differences."),
    Option("Only column j changes; the other keys keep their weights.",
           hint="each row still sums to 1: what key j gains comes out of the other keys of the same row."),
    Option("The weight of key j grows by c_j.", hint="softmax does not add: a weight is exp(score) over the "
           "row's sum, between 0 and 1. Adding c_j multiplies key j's exp by e^c_j before dividing."),
])

check_score_shift = check_function(SCORE_SHIFT, __name__,
                                   "Grade your answer to “Shift the scores”: a letter.")
