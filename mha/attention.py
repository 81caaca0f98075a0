"""Scaled dot-product attention, the softmax under it, and moving between one wide head and many.

Shapes use the course's vocabulary: ``batch, seq_q, seq_k, d_model, n_heads, d_head``. Per-head arrays are
``(batch, n_heads, seq, d_head)``; scores and weights are ``(batch, n_heads, seq_q, seq_k)``.

Each function checks its input, then computes on whole arrays, one step of the formula per line. A large
problem that asks for no weights takes the annex's door (:mod:`mha.fast`): the same numbers, computed in
cache-sized tiles over threads.
"""

from __future__ import annotations

import math
from typing import Any, Literal, overload

import numpy as np

import mha.fast as fast
from mha.typing import ArrayLike, BoolArray, FloatArray
from mha.validation import (
    as_float_array,
    check_bool_mask,
    check_broadcastable,
    check_finite,
    check_ndim,
    check_positive_int,
    check_positive_real,
    check_score_bias,
    result_float_dtype,
)

__all__ = ["softmax", "scaled_dot_product_attention", "attention_forward", "soft_cap", "split_heads",
           "merge_heads"]


def softmax(x: ArrayLike, axis: int = -1, *, out: FloatArray | None = None) -> FloatArray:
    """Turn scores into weights that are positive and sum to one along ``axis``.

    ``softmax(x)_i = exp(x_i - m) / Σ_j exp(x_j - m)`` with ``m`` the largest score of the slice: the
    shift changes no weight, and keeps ``exp`` from overflowing, so scores of ``±1e4`` neither overflow
    nor produce NaN. Entries of ``-inf`` get weight zero (that is how masks enter); a slice that is
    entirely ``-inf`` has no valid entry and gets all-zero weights instead of NaN.

    Parameters
    ----------
    x : array_like of float, any shape
        Scores. NaN and ``+inf`` are refused: they have no meaningful weight.
    axis : int, default -1
        The axis that sums to one.
    out : ndarray, optional
        Where to write the weights, e.g. ``x`` itself when the scores are not needed afterwards: a large
        softmax then allocates no second array of its size.

    Returns
    -------
    ndarray, same shape and float dtype as ``x`` (float32 stays float32); ``out`` when given

    Raises
    ------
    ValueError
        ``x`` holds NaN or ``+inf``, is a scalar, ``axis`` is out of range, or ``out`` does not match ``x``.
    TypeError
        ``x`` is not an array of real numbers.

    Examples
    --------
    >>> softmax(np.array([1.0, 2.0, 3.0])).round(3)
    array([0.09 , 0.245, 0.665])
    >>> softmax(np.array([1e4, 0.0, -1e4]))  # the naive formula would give nan
    array([1., 0., 0.])
    """
    x = as_float_array(x, "x")
    if x.ndim == 0:
        raise ValueError("softmax needs at least one axis to normalise over, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an int in [{-x.ndim}, {x.ndim}) for x of shape {x.shape}, "
                         f"got {axis!r}")
    if out is not None and (not isinstance(out, np.ndarray) or out.shape != x.shape or out.dtype != x.dtype):
        raise ValueError(f"out must be an array of x's shape {x.shape} and dtype {x.dtype}, got "
                         f"{getattr(out, 'dtype', type(out).__name__)} {np.shape(out)}")
    if x.size == 0:
        return x.copy() if out is None else out
    row_max = x.max(axis=axis, keepdims=True)  # (..., 1, ...); NaN anywhere in a slice makes its max NaN
    _check_row_maxima(row_max, x)
    row_max[np.isneginf(row_max)] = 0  # a slice of only -inf: exp(-inf - 0) = 0, where -inf - -inf is NaN
    with np.errstate(over="ignore"):  # x - row_max below the dtype's range: -inf, weight 0, as it should
        weights: FloatArray = np.subtract(x, row_max, out=out)  # x - row_max (into `out` when given)
    np.exp(weights, out=weights)  # in (0, 1], the largest entry of each slice exactly 1
    total = weights.sum(axis=axis, keepdims=True)
    total[total == 0] = 1  # only all -inf slices sum to 0: their weights stay 0 instead of 0 / 0
    weights /= total
    return weights


def _check_row_maxima(row_max: FloatArray, x: FloatArray) -> None:
    """Refuse NaN and ``+inf``: a slice holding either has it (or NaN) as its maximum."""
    if not (row_max < np.inf).all():  # False for +inf and NaN; -inf (a fully masked row) is fine
        check_finite(x, "softmax input", allow_neg_inf=True)  # names how many of each


@overload
def scaled_dot_product_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None = ...,
                                 *, bias: ArrayLike | None = ..., scale: float | None = ...,
                                 softcap: float | None = ..., return_weights: Literal[False] = ...
                                 ) -> FloatArray: ...
@overload
def scaled_dot_product_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None = ...,
                                 *, bias: ArrayLike | None = ..., scale: float | None = ...,
                                 softcap: float | None = ..., return_weights: Literal[True]
                                 ) -> tuple[FloatArray, FloatArray]: ...
@overload
def scaled_dot_product_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None = ...,
                                 *, bias: ArrayLike | None = ..., scale: float | None = ...,
                                 softcap: float | None = ..., return_weights: bool
                                 ) -> FloatArray | tuple[FloatArray, FloatArray]: ...
def scaled_dot_product_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None = None,
                                 *, bias: ArrayLike | None = None, scale: float | None = None,
                                 softcap: float | None = None, return_weights: bool = False
                                 ) -> FloatArray | tuple[FloatArray, FloatArray]:
    """Attend from each query to every key and mix the values: ``softmax(q kᵀ / √d_head + bias) v``.

    Parameters
    ----------
    q : array_like, shape (..., seq_q, d_head)
    k : array_like, shape (..., seq_k, d_head)
    v : array_like, shape (..., seq_k, d_v)
        Leading dimensions (batch, heads, ...) broadcast against each other.
    mask : bool array_like broadcastable to (..., seq_q, seq_k), optional
        True where a query may attend to a key. A query whose keys are all masked gets all-zero weights and
        an all-zero output (never NaN, and never the uniform average a ``-1e9`` mask would give).
    bias : array_like broadcastable to (..., seq_q, seq_k), optional
        Added to the scaled scores before the softmax (e.g. a relative-position bias); ``-inf`` allowed.
    scale : float, optional
        What ``q kᵀ`` is multiplied by; ``1 / √d_head`` by default. Multi-head latent attention's absorbed
        form needs another (:mod:`mha.latent_attention`).
    softcap : float, optional
        Logit soft-capping (Gemma 2): the scaled scores become ``softcap · tanh(scores / softcap)``, close
        to themselves when small and never beyond ``±softcap`` (see :func:`soft_cap`).
    return_weights : bool, default False
        Also return the attention weights.

    Returns
    -------
    output : ndarray, shape (..., seq_q, d_v)
    weights : ndarray, shape (..., seq_q, seq_k)
        Only with ``return_weights=True``. Each row sums to 1 (or 0 for a fully masked query).

    The result dtype follows NumPy's promotion of the inputs; float32 inputs give float32 results.

    Raises
    ------
    ValueError
        Shapes that do not fit (the message names them), NaN or infinities in ``q``, ``k`` or ``v``, a mask
        or bias that does not broadcast to the scores, a ``scale`` or ``softcap`` that is not a finite
        number > 0, or scores that overflow the dtype.
    TypeError
        An input that is not real numbers, or a mask that is not boolean.

    Examples
    --------
    >>> q = np.ones((2, 3, 4)); kv = np.ones((2, 5, 4))
    >>> scaled_dot_product_attention(q, kv, kv).shape
    (2, 3, 4)
    >>> out, w = scaled_dot_product_attention(q, kv, kv, return_weights=True)
    >>> w.shape, float(w[0, 0].sum())
    ((2, 3, 5), 1.0)
    """
    q, k, v = check_qkv(q, k, v)
    scores_shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (q.shape[-2], k.shape[-2])
    if mask is not None:
        mask = check_broadcastable(check_bool_mask(mask), scores_shape)
    bias = check_score_bias(bias, scores_shape, q.dtype)
    scale = _check_scale(scale, q.shape[-1])
    softcap = None if softcap is None else check_positive_real(softcap, "softcap")
    plain = softcap is None and scale == 1.0 / math.sqrt(q.shape[-1])
    if not return_weights and plain and fast.worth_it(math.prod(scores_shape)):
        return fast.attention(q, k, v, mask, bias)  # large, no weights wanted: the same numbers in tiles
    output, weights = attention_forward(q, k, v, mask, bias, scale=scale, softcap=softcap)
    return (output, weights) if return_weights else output


def attention_forward(q: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None = None,
                      bias: FloatArray | None = None, *, scale: float | None = None,
                      softcap: float | None = None) -> tuple[FloatArray, FloatArray]:
    """The formula of :func:`scaled_dot_product_attention`, on arrays its caller has checked.

    The layers check their inputs once, at the call a learner makes, and then call this: no check of
    arrays the package made itself, no door to the annex. :func:`mha.grad.attention_backward` is its
    backward pass (it takes the ``weights`` returned here).

    Parameters
    ----------
    q : ndarray, shape (..., seq_q, d_head)
    k : ndarray, shape (..., seq_k, d_head)
    v : ndarray, shape (..., seq_k, d_v)
        One float dtype, finite, leading dimensions broadcasting against each other.
    mask : bool ndarray broadcastable to (..., seq_q, seq_k), optional
        True where a query may attend to a key.
    bias : ndarray broadcastable to (..., seq_q, seq_k), optional
        In the dtype of ``q``; ``-inf`` allowed.
    scale : float, optional
        Default ``1 / √d_head``.
    softcap : float, optional
        ``> 0``: the scaled scores become ``softcap · tanh(scores / softcap)`` (:func:`soft_cap`).

    Returns
    -------
    output : ndarray, shape (..., seq_q, d_v)
    weights : ndarray, shape (..., seq_q, seq_k)

    Raises
    ------
    ValueError
        When finite queries and keys overflow the dtype in ``q kᵀ`` (float32 values of about 1e20).

    Examples
    --------
    >>> q = np.ones((2, 3, 4)); kv = np.ones((2, 5, 4))
    >>> out, weights = attention_forward(q, kv, kv)
    >>> out.shape, weights.shape
    ((2, 3, 4), (2, 3, 5))
    """
    # Scaling q instead of the scores gives the same products for seq_k / d_head times fewer multiplications.
    q = q * q.dtype.type(1.0 / math.sqrt(q.shape[-1]) if scale is None else scale)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named below, as the package's error
        scores: FloatArray = q @ np.swapaxes(k, -1, -2)  # (..., seq_q, seq_k)
    if softcap is not None:
        scores = soft_cap(scores, softcap)  # within ±softcap, before any bias or mask
    if bias is not None:
        scores += bias
    if mask is not None:
        np.copyto(scores, -np.inf, where=~mask)  # a masked key gets exp(-inf) = 0 weight
    try:
        weights = softmax(scores, out=scores)  # (..., seq_q, seq_k): rows sum to 1 (0 if fully masked)
    except ValueError:
        raise _overflow_error(scores.dtype) from None
    output = weights @ v  # (..., seq_q, d_v)
    return output, weights


def soft_cap(scores: ArrayLike, cap: float) -> FloatArray:
    """Squash scores smoothly into ``(-cap, cap)``: ``cap · tanh(scores / cap)``, Gemma 2's soft-capping.

    Near zero ``tanh(x) ≈ x``, so small scores pass almost unchanged; large ones saturate at ``±cap``
    instead of growing without bound, and so does the largest weight's lead over the others.

    Parameters
    ----------
    scores : array_like of float, any shape
    cap : float
        > 0. Gemma 2 uses 50 on attention scores and 30 on the final logits.

    Returns
    -------
    ndarray, same shape and float dtype as ``scores``

    Raises
    ------
    ValueError
        ``cap`` is not a finite number > 0.
    TypeError
        ``scores`` is not an array of real numbers.

    Examples
    --------
    >>> soft_cap(np.array([1.0, 50.0, 1000.0]), 50.0).round(2)
    array([ 1.  , 38.08, 50.  ])
    """
    scores = as_float_array(scores, "scores")
    cap = check_positive_real(cap, "cap")
    return scores.dtype.type(cap) * np.tanh(scores * scores.dtype.type(1.0 / cap))


def _check_scale(scale: float | None, d_head: int) -> float:
    """The score scale: ``1 / √d_head`` by default, else a finite number > 0."""
    return 1.0 / math.sqrt(d_head) if scale is None else check_positive_real(scale, "scale")


def _overflow_error(dtype: np.dtype[Any]) -> ValueError:
    """Finite queries and keys whose products are not: float32 values of about 1e20, say."""
    wider = ", or compute in float64" if np.dtype(dtype) != np.float64 else ""
    return ValueError(
        f"attention scores overflowed {dtype}: some q · k is inf or NaN, beyond the largest {dtype} "
        f"({np.finfo(dtype).max:.2e}). Scale the queries and keys down (or the inputs and weights that make "
        f"them){wider}."
    )


def check_qkv(q: ArrayLike, k: ArrayLike, v: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Validate queries, keys and values for attention; return them as arrays of one float dtype.

    Examples
    --------
    >>> q, k, v = check_qkv(np.ones((3, 4), np.float32), np.ones((5, 4), np.float32), np.ones((5, 2)))
    >>> q.dtype, v.dtype
    (dtype('float64'), dtype('float64'))
    >>> check_qkv(np.ones((3, 4)), np.ones((5, 8)), np.ones((5, 2)))
    Traceback (most recent call last):
    ...
    ValueError: q and k must share their last dimension d_head: q has shape (3, 4), k has shape (5, 8)
    """
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    v = as_float_array(v, "v")
    check_ndim(q, "q", min_ndim=2, shape_hint="(..., seq_q, d_head)")
    check_ndim(k, "k", min_ndim=2, shape_hint="(..., seq_k, d_head)")
    check_ndim(v, "v", min_ndim=2, shape_hint="(..., seq_k, d_v)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share their last dimension d_head: q has shape {q.shape}, k has shape {k.shape}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys seq_k: k has shape {k.shape}, v has {v.shape}"
        )
    if q.shape[-1] == 0 or k.shape[-2] == 0:
        raise ValueError(f"d_head and seq_k must be positive, got q {q.shape} and k {k.shape}")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading (batch/head) dimensions do not broadcast: q {q.shape}, k {k.shape}, v {v.shape}"
        ) from None
    for name, arr in (("q", q), ("k", k), ("v", v)):
        check_finite(arr, name)
    dtype = result_float_dtype(q, k, v)
    return q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False)


def split_heads(x: ArrayLike, n_heads: int) -> FloatArray:
    """Cut the feature axis into heads and move heads in front of the sequence axis.

    Parameters
    ----------
    x : array_like, shape (..., seq, n_heads * d_head)
        Usually ``(batch, seq, d_model)``.
    n_heads : int
        Must divide the last dimension.

    Returns
    -------
    ndarray, shape (..., n_heads, seq, d_head)
        A view of ``x`` when possible (no copy).

    Raises
    ------
    ValueError
        ``x`` has fewer than 2 dimensions, or ``n_heads`` is not a positive divisor of its last one.
    TypeError
        ``x`` is not an array of real numbers, or ``n_heads`` not an integer.

    Examples
    --------
    >>> x = np.arange(2 * 3 * 8.0).reshape(2, 3, 8)
    >>> split_heads(x, 4).shape
    (2, 4, 3, 2)
    >>> split_heads(x, 4)[0, 1, 0]  # head 1 of token 0 holds features 2 and 3
    array([2., 3.])
    """
    x = as_float_array(x, "x")
    n_heads = check_positive_int(n_heads, "n_heads")
    check_ndim(x, "x", min_ndim=2, shape_hint="(..., seq, n_heads * d_head)")
    features = x.shape[-1]
    if features % n_heads:
        raise ValueError(
            f"the feature size {features} is not divisible by n_heads={n_heads} "
            f"(d_head would be {features / n_heads:.4g})"
        )
    d_head = features // n_heads
    split = x.reshape(*x.shape[:-1], n_heads, d_head)  # (..., seq, n_heads, d_head)
    return np.swapaxes(split, -3, -2)  # (..., n_heads, seq, d_head)


def merge_heads(x: ArrayLike) -> FloatArray:
    """Inverse of :func:`split_heads`: put heads back side by side on the feature axis.

    Parameters
    ----------
    x : array_like, shape (..., n_heads, seq, d_head)

    Returns
    -------
    ndarray, shape (..., seq, n_heads * d_head)
        Head ``i`` occupies features ``i * d_head`` to ``(i + 1) * d_head``.

    Raises
    ------
    ValueError
        ``x`` has fewer than 3 dimensions.
    TypeError
        ``x`` is not an array of real numbers.

    Examples
    --------
    >>> x = np.arange(2 * 3 * 8.0).reshape(2, 3, 8)
    >>> np.array_equal(merge_heads(split_heads(x, 4)), x)
    True
    """
    x = as_float_array(x, "x")
    check_ndim(x, "x", min_ndim=3, shape_hint="(..., n_heads, seq, d_head)")
    n_heads, seq, d_head = x.shape[-3:]
    heads_last = np.swapaxes(x, -3, -2)  # (..., seq, n_heads, d_head)
    return heads_last.reshape(*x.shape[:-3], seq, n_heads * d_head)  # (..., seq, n_heads * d_head)
