"""Scaled dot-product attention, the softmax under it, and moving between one wide head and many.

Shapes use the course's vocabulary: ``batch, seq_q, seq_k, d_model, n_heads, d_head``. Per-head arrays are
``(batch, n_heads, seq, d_head)``; scores and weights are ``(batch, n_heads, seq_q, seq_k)``.

The public functions validate their input once; ``attend`` is the trusted fast path that the layers call.
"""

from __future__ import annotations

import math

import numpy as np

from mha._kernels import attend_tiles, filled_vector, use_tiles
from mha._validation import (
    as_float_array,
    check_bool_mask,
    check_broadcastable,
    check_finite,
    check_ndim,
    check_positive_int,
    check_score_bias,
    check_score_maxima,
    result_float_dtype,
)

__all__ = ["softmax", "scaled_dot_product_attention", "split_heads", "merge_heads", "attend"]


def softmax(x, axis: int = -1) -> np.ndarray:
    """Turn scores into weights that are positive and sum to one along ``axis``.

    The largest score of each slice is subtracted before exponentiating, so scores of ``±1e4`` neither
    overflow nor produce NaN. Entries of ``-inf`` get weight zero (that is how masks enter); a slice that is
    entirely ``-inf`` has no valid entry and gets all-zero weights instead of NaN.

    Parameters
    ----------
    x : array_like of float, any shape
        Scores. NaN and ``+inf`` are rejected: they have no meaningful weight.
    axis : int, default -1
        The axis that sums to one.

    Returns
    -------
    ndarray, same shape and float dtype as ``x`` (float32 stays float32)

    Examples
    --------
    >>> softmax(np.array([1.0, 2.0, 3.0])).round(3)
    array([0.09 , 0.245, 0.665])
    >>> softmax(np.array([1e4, 0.0, -1e4]))  # the naive formula would give nan
    array([1., 0., 0.])
    """
    x = as_float_array(x, "x")
    check_finite(x, "softmax input", allow_neg_inf=True)
    if x.ndim == 0:
        raise ValueError("softmax needs at least one axis to normalise over, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an int in [{-x.ndim}, {x.ndim}) for x of shape {x.shape}, "
                         f"got {axis!r}")
    rows_last = np.array(np.moveaxis(x, axis, -1), copy=True, order="C")  # (..., n), n = x.shape[axis]
    shifted_exp_inplace(rows_last, normalize=True)
    return np.moveaxis(rows_last, -1, axis)


def _shifted_exp_rows(rows: np.ndarray, sums: np.ndarray, normalize: bool) -> None:
    """exp(row - max(row)) in place for a 2-D block of rows, writing each row's sum into ``sums``."""
    row_max = rows.max(axis=1, keepdims=True)  # (n_rows, 1)
    check_score_maxima(row_max)
    row_max[np.isneginf(row_max)] = 0  # an all -inf row (fully masked) keeps exp(-inf) = 0, not NaN
    rows -= row_max
    np.exp(rows, out=rows)
    np.sum(rows, axis=1, keepdims=True, out=sums)
    sums[sums == 0] = 1  # only all -inf rows sum to 0: they stay all zeros
    if normalize:
        rows /= sums


def _unshifted_range(dtype: np.dtype, n_cols: int) -> tuple[float, float]:
    """Scores whose raw ``exp`` is safe in a softmax over ``n_cols`` columns: ``(low, high)``.

    Above ``high`` a sum of ``n_cols`` exponentials could overflow; below ``low`` they would leave the
    normal floating-point range and lose precision. Between (-85 to about 80 in float32, with a margin
    of e² at both ends) every ``exp`` and every row sum is an ordinary float to full relative precision.
    The tiled paths test row maxima against the narrower ±:data:`mha._kernels.EXP_HEADROOM` instead:
    chunked attention keeps one shift across key blocks, and later blocks need room above it.
    """
    info = np.finfo(dtype)
    return math.log(info.tiny) + 2.0, math.log(info.max) - math.log(max(n_cols, 1)) - 2.0


def _unshifted_exp_rows(rows: np.ndarray, sums: np.ndarray, normalize: bool) -> bool:
    """:func:`_shifted_exp_rows` without the shift when every score allows it; False (rows untouched) if not.

    Softmax does not depend on the shift, which only keeps ``exp`` in range. When every score lies in
    :func:`_unshifted_range` (so no ``-inf`` either: no row is masked out), the raw scores are
    exponentiated: two whole-array reductions instead of a row-by-row maximum, a subtraction and two
    fixes. That matters for the many short rows of small problems (a 16-token sentence has 16-wide rows).
    """
    low, high = _unshifted_range(rows.dtype, rows.shape[1])
    if not (low <= rows.min() and rows.max() <= high):  # also not for NaN
        return False
    np.exp(rows, out=rows)
    # Every term is a normal float: no zero sum. A product with ones sums short rows (16 keys) in a third
    # of np.add.reduce's time: BLAS takes the rows at once, NumPy's loop starts again on each.
    np.matmul(rows, filled_vector(rows.shape[1], 1.0, rows.dtype), out=sums[:, 0])  # sums[:, 0]: (n_rows,)
    if normalize:
        rows /= sums
    return True


def shifted_exp_inplace(scores: np.ndarray, *, normalize: bool) -> np.ndarray:
    """Stable softmax numerator along the last axis of a C-contiguous array, in place.

    Overwrites ``scores`` with ``exp(scores - c)`` (divided by the row sum when ``normalize``) and returns
    the row sums, shape ``(..., 1)``. ``c`` is each row's maximum, or 0 when every score's raw ``exp`` is
    safe: the normalised weights are the same. Rows that are entirely ``-inf`` become zeros with sum 1.
    """
    if not scores.flags.c_contiguous:
        raise ValueError("shifted_exp_inplace needs a C-contiguous array (it works on a 2-D view of it)")
    if scores.size == 0:  # no rows, or rows of no keys: nothing to normalise
        return np.ones(scores.shape[:-1] + (1,), dtype=scores.dtype)
    rows = scores.reshape(-1, scores.shape[-1])  # (n_rows, seq_k), a view of the contiguous scores
    sums = np.empty((rows.shape[0], 1), dtype=scores.dtype)
    if not _unshifted_exp_rows(rows, sums, normalize):  # the same weights, faster when allowed
        _shifted_exp_rows(rows, sums, normalize)
    return sums.reshape(scores.shape[:-1] + (1,))


def attend(q_scaled, k, v, mask=None, bias=None, *, return_weights=False, scores_out=None, out=None,
           keep_scores=True):
    """Trusted fast path of attention: no validation, ``q_scaled`` already multiplied by ``1/sqrt(d_head)``.

    Shapes are those of :func:`scaled_dot_product_attention`; leading dimensions broadcast like ``np.matmul``
    (grouped-query attention passes ``k`` and ``v`` with a size-1 group axis). ``mask`` must already be a
    boolean array broadcastable to the scores, and all arrays share one dtype. ``scores_out``, a C-contiguous
    array of the scores' shape, receives the scores (and, with ``return_weights``, the weights); ``out``,
    an array or view of the output's shape, receives the output. Returns ``(output, weights_or_None)``.
    ``keep_scores=False`` lets a large problem that returns no weights keep only a cache-sized tile of
    scores per thread instead of the full score tensor the cost model counts (the layer's fast path).

    Small problems run :func:`plain_attention` below on whole arrays. Large ones run the same steps tile by
    tile, each tile's scores kept in cache and the tiles spread over threads (:mod:`mha._kernels`); tests
    prove both give the same numbers.
    """
    lead = np.broadcast_shapes(q_scaled.shape[:-2], k.shape[:-2], v.shape[:-2])
    if use_tiles(lead, q_scaled.shape[-2], k.shape[-2]):
        return attend_tiles(q_scaled, k, v, mask, bias, return_weights=return_weights, scores_out=scores_out,
                            out=out, keep_scores=keep_scores)
    return plain_attention(q_scaled, k, v, mask, bias, return_weights, out=out, weights_out=scores_out)


def plain_attention(q_scaled, k, v, mask, bias, return_weights, out=None, weights_out=None):
    """The algorithm on whole arrays; ``out``/``weights_out`` receive the results when given."""
    scores = np.matmul(q_scaled, np.swapaxes(k, -1, -2), out=weights_out)  # (..., seq_q, seq_k)
    if bias is not None:
        scores += bias
    if mask is not None:
        np.copyto(scores, -np.inf, where=np.logical_not(mask))
    row_sum = shifted_exp_inplace(scores, normalize=return_weights)  # (..., seq_q, 1)
    if return_weights:
        return np.matmul(scores, v, out=out), scores
    # Normalise the (seq_q, d_v) output instead of the (seq_q, seq_k) weights: same numbers, fewer operations.
    context = np.matmul(scores, v, out=out)  # (..., seq_q, d_v)
    context /= row_sum
    return context, None


def scaled_dot_product_attention(q, k, v, mask=None, *, bias=None, return_weights=False):
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
    return_weights : bool, default False
        Also return the attention weights.

    Returns
    -------
    output : ndarray, shape (..., seq_q, d_v)
    weights : ndarray, shape (..., seq_q, seq_k)
        Only with ``return_weights=True``. Each row sums to 1 (or 0 for a fully masked query).

    The result dtype follows NumPy's promotion of the inputs; float32 inputs give float32 results.

    Examples
    --------
    >>> q = np.ones((2, 3, 4)); kv = np.ones((2, 5, 4))
    >>> scaled_dot_product_attention(q, kv, kv).shape
    (2, 3, 4)
    >>> out, w = scaled_dot_product_attention(q, kv, kv, return_weights=True)
    >>> w.shape, float(w[0, 0].sum())
    ((2, 3, 5), 1.0)
    """
    q, k, v = _check_qkv(q, k, v)
    dtype = result_float_dtype(q, k, v)
    scale = dtype.type(1.0 / math.sqrt(q.shape[-1]))
    scores_shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (q.shape[-2], k.shape[-2])
    if mask is not None:
        mask = check_broadcastable(check_bool_mask(mask), scores_shape)
    bias = check_score_bias(bias, scores_shape, dtype)
    q_scaled = q.astype(dtype, copy=False) * scale  # scaling q is cheaper than scaling the scores
    out, weights = attend(q_scaled, k.astype(dtype, copy=False), v.astype(dtype, copy=False),
                          mask, bias, return_weights=return_weights)
    return (out, weights) if return_weights else out


def _check_qkv(q, k, v):
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
    return q, k, v


def split_heads(x, n_heads: int) -> np.ndarray:
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


def merge_heads(x) -> np.ndarray:
    """Inverse of :func:`split_heads`: put heads back side by side on the feature axis.

    Parameters
    ----------
    x : array_like, shape (..., n_heads, seq, d_head)

    Returns
    -------
    ndarray, shape (..., seq, n_heads * d_head)
        Head ``h`` occupies features ``h * d_head`` to ``(h + 1) * d_head``.

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
