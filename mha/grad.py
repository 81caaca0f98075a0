"""Backward passes for attention, so that a model built from :mod:`mha` can learn with plain NumPy.

Every ``*_forward`` function returns its output and a *cache*: the intermediate arrays its backward pass
needs. Every ``*_backward`` function takes the gradient of a scalar loss with respect to that output
(``d_out``, same shape) and the cache, and returns the gradients with respect to the inputs and weights.
The forward functions compute the same numbers as :func:`mha.scaled_dot_product_attention` and
:class:`mha.MultiHeadAttention` (the tests check both, and check every gradient against central finite
differences).

The chain rule for one head, with ``s = q kᵀ / √d_head``, ``w = softmax(s)`` and ``o = w v``::

    dv = wᵀ do          dw = do vᵀ          ds = w ⊙ (dw − rowsum(w ⊙ dw))
    dq = ds k / √d_head     dk = dsᵀ q / √d_head

Masked scores have weight 0, so the softmax backward sends them no gradient, and a fully masked query
(all-zero weights) sends none at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mha._features import linear
from mha._layer_inputs import check_head_mask, combine_masks
from mha._validation import as_float_array, check_bool_mask, check_broadcastable, check_finite
from mha.attention import attend, merge_heads, split_heads

__all__ = [
    "softmax_backward",
    "attention_forward",
    "attention_backward",
    "mha_forward",
    "mha_backward",
    "cross_entropy",
]


def softmax_backward(weights, d_weights, axis: int = -1) -> np.ndarray:
    """Gradient with respect to the softmax's input, from its output and the output's gradient.

    For ``w = softmax(s)`` the Jacobian is ``diag(w) − w wᵀ`` per slice, so
    ``ds = w ⊙ (dw − Σ w ⊙ dw)`` without ever forming the Jacobian.

    Parameters
    ----------
    weights : ndarray, any shape
        The softmax output ``w``.
    d_weights : ndarray, same shape
        Gradient of the loss with respect to ``w``.
    axis : int, default -1
        The axis the softmax normalised over.

    Returns
    -------
    ndarray, same shape as ``weights``

    Examples
    --------
    >>> w = np.array([0.5, 0.5])
    >>> softmax_backward(w, np.array([1.0, 0.0]))  # raising s[0] moves weight from 1 to 0
    array([ 0.25, -0.25])
    >>> softmax_backward(w, np.ones(2))  # adding a constant to every weight changes nothing
    array([0., 0.])
    """
    weights = np.asarray(weights)
    d_weights = np.asarray(d_weights)
    if weights.shape != d_weights.shape:
        raise ValueError(f"weights {weights.shape} and d_weights {d_weights.shape} must have the same shape")
    inner = np.sum(weights * d_weights, axis=axis, keepdims=True)  # (..., 1, ...) per softmax slice
    return weights * (d_weights - inner)


@dataclass
class AttentionCache:
    """What :func:`attention_backward` needs from :func:`attention_forward`."""

    q_scaled: np.ndarray  # (..., seq_q, d_head), q / sqrt(d_head)
    k: np.ndarray  # (..., seq_k, d_head)
    v: np.ndarray  # (..., seq_k, d_v)
    weights: np.ndarray  # (..., seq_q, seq_k)
    scale: float  # 1 / sqrt(d_head)


def attention_forward(q, k, v, mask=None):
    """Scaled dot-product attention that remembers what its backward pass needs.

    Parameters
    ----------
    q : ndarray, shape (..., seq_q, d_head)
    k : ndarray, shape (..., seq_k, d_head)
    v : ndarray, shape (..., seq_k, d_v)
        ``q``, ``k`` and ``v`` share their leading dimensions (no broadcasting: gradients would need
        summing over broadcast axes).
    mask : bool ndarray broadcastable to (..., seq_q, seq_k), optional
        True where a query may attend to a key.

    Returns
    -------
    output : ndarray, shape (..., seq_q, d_v)
    cache : AttentionCache

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    >>> out, cache = attention_forward(q, k, v)
    >>> out.shape, cache.weights.shape
    ((2, 3, 4), (2, 3, 3))
    """
    q, k, v = (as_float_array(a, name) for a, name in ((q, "q"), (k, "k"), (v, "v")))
    if min(q.ndim, k.ndim, v.ndim) < 2 or 0 in (q.shape[-1], k.shape[-2], v.shape[-1]) \
            or not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]) or q.shape[-1] != k.shape[-1] \
            or k.shape[-2] != v.shape[-2]:
        raise ValueError(
            "expected q (..., seq_q, d_head), k (..., seq_k, d_head), v (..., seq_k, d_v) with equal leading "
            f"dimensions and seq_k, d_head, d_v >= 1, got q {q.shape}, k {k.shape}, v {v.shape}"
        )
    for array, name in ((q, "q"), (k, "k"), (v, "v")):
        check_finite(array, name)
    if mask is not None:
        mask = check_broadcastable(check_bool_mask(mask), q.shape[:-1] + (k.shape[-2],))
    dtype = np.result_type(q, k, v)
    scale = 1.0 / math.sqrt(q.shape[-1])
    q_scaled = q.astype(dtype) * dtype.type(scale)  # a copy: the cache must not alias the caller's q
    k, v = k.astype(dtype, copy=False), v.astype(dtype, copy=False)
    out, weights = attend(q_scaled, k, v, mask, return_weights=True)
    return out, AttentionCache(q_scaled, k, v, weights, scale)


def attention_backward(d_out, cache: AttentionCache):
    """Gradients of :func:`attention_forward` with respect to ``q``, ``k`` and ``v``.

    Parameters
    ----------
    d_out : ndarray, shape (..., seq_q, d_v)
    cache : AttentionCache

    Returns
    -------
    dq : ndarray, shape (..., seq_q, d_head)
    dk : ndarray, shape (..., seq_k, d_head)
    dv : ndarray, shape (..., seq_k, d_v)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = (rng.standard_normal((3, 4)) for _ in range(3))
    >>> out, cache = attention_forward(q, k, v)
    >>> dq, dk, dv = attention_backward(np.ones_like(out), cache)
    >>> np.allclose(dv.sum(axis=0), 3.0)  # each of the 3 queries hands out total weight 1
    True
    """
    w = cache.weights
    dv = np.swapaxes(w, -1, -2) @ d_out  # (..., seq_k, d_v)
    d_weights = d_out @ np.swapaxes(cache.v, -1, -2)  # (..., seq_q, seq_k)
    d_scores = softmax_backward(w, d_weights)  # (..., seq_q, seq_k)
    scale = w.dtype.type(cache.scale)
    dq = (d_scores @ cache.k) * scale  # (..., seq_q, d_head)
    dk = np.swapaxes(d_scores, -1, -2) @ cache.q_scaled  # (..., seq_k, d_head); q_scaled carries the scale
    return dq, dk, dv


@dataclass
class MHACache:
    """What :func:`mha_backward` needs from :func:`mha_forward`."""

    params: dict  # the layer's weight arrays (references, not copies)
    query: np.ndarray  # (batch, seq_q, d_model)
    key: np.ndarray  # (batch, seq_k, kdim)
    value: np.ndarray  # (batch, seq_k, vdim)
    self_attention: bool
    n_heads: int
    n_kv_heads: int
    attention: AttentionCache
    head_mask: np.ndarray | None  # (n_heads,)
    concat: np.ndarray  # (batch, seq_q, d_model), head outputs side by side (after head_mask)


def mha_forward(layer, query, key=None, value=None, *, mask=None, causal=False, head_mask=None):
    """The forward pass of a :class:`~mha.MultiHeadAttention` layer, keeping what the backward pass needs.

    Computes the same output as ``layer(query, key, value, mask=mask, causal=causal, head_mask=head_mask)``
    for batched inputs. Grouped key/value heads (``n_kv_heads < n_heads``) are repeated for the group's
    query heads; the backward pass sums their gradients back.

    Parameters
    ----------
    layer : MultiHeadAttention
    query : ndarray, shape (batch, seq_q, d_model)
    key : ndarray, shape (batch, seq_k, kdim), optional
        Omit for self-attention.
    value : ndarray, shape (batch, seq_k, vdim), optional
        Defaults to ``key``.
    mask : bool ndarray broadcastable to (batch, n_heads, seq_q, seq_k), optional
    causal : bool, default False
    head_mask : ndarray, shape (n_heads,), optional
        Multiplies each head's output (0 switches a head off).

    Returns
    -------
    output : ndarray, shape (batch, seq_q, d_model)
    cache : MHACache

    Examples
    --------
    >>> import mha
    >>> layer = mha.MultiHeadAttention(8, 2, rng=0)
    >>> x = np.random.default_rng(1).standard_normal((2, 5, 8))
    >>> out, cache = mha_forward(layer, x, causal=True)
    >>> np.allclose(out, layer(x, causal=True))
    True
    """
    self_attention = key is None
    if self_attention and value is not None:
        raise ValueError("value was given without key; pass key too (or neither for self-attention)")
    key = query if key is None else key
    value = key if value is None else value
    for name, arr, width in (("query", query, layer.d_model), ("key", key, layer.kdim),
                             ("value", value, layer.vdim)):
        if np.ndim(arr) != 3 or arr.shape[-1] != width:
            raise ValueError(f"{name} must have shape (batch, seq, {width}), got {np.shape(arr)}")
    if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
        raise ValueError(f"query {query.shape}, key {key.shape} and value {value.shape} must share batch, "
                         "and key and value must share seq_k")
    params = layer.parameters()
    n_heads, n_kv = layer.n_heads, layer.n_kv_heads
    batch, seq_q, seq_k = query.shape[0], query.shape[1], key.shape[1]
    q = linear(query, params["W_q"], params.get("b_q"))  # (batch, seq_q, d_model)
    k = linear(key, params["W_k"], params.get("b_k"))  # (batch, seq_k, n_kv * d_head)
    v = linear(value, params["W_v"], params.get("b_v"))  # (batch, seq_k, n_kv * d_head)
    group = n_heads // n_kv
    k_heads = np.repeat(split_heads(k, n_kv), group, axis=1)  # (batch, n_heads, seq_k, d_head)
    v_heads = np.repeat(split_heads(v, n_kv), group, axis=1)  # (batch, n_heads, seq_k, d_head)
    mask = combine_masks(layer, mask, causal, batch, seq_q, seq_k)
    context, att_cache = attention_forward(split_heads(q, n_heads), k_heads, v_heads, mask)
    head_mask = check_head_mask(layer, head_mask, context.dtype)
    if head_mask is not None:
        context = context * head_mask[:, None, None]  # (batch, n_heads, seq_q, d_head)
    concat = merge_heads(context)  # (batch, seq_q, d_model)
    out = linear(concat, params["W_o"], params.get("b_o"))
    cache = MHACache(params, query, key, value, self_attention, n_heads, n_kv, att_cache, head_mask, concat)
    return out, cache


def _linear_backward(d_y, x, grads, w_name, b_name, params):
    """Accumulate dW = xᵀ dy (summed over batch and seq) and db; return dx = dy Wᵀ."""
    grads[w_name] = x.reshape(-1, x.shape[-1]).T @ d_y.reshape(-1, d_y.shape[-1])  # (fan_in, fan_out)
    if params.get(b_name) is not None:
        grads[b_name] = d_y.sum(axis=(0, 1))
    return d_y @ params[w_name].T


def mha_backward(d_out, cache: MHACache):
    """Gradients of :func:`mha_forward` with respect to every weight and every input.

    Parameters
    ----------
    d_out : ndarray, shape (batch, seq_q, d_model)
        Gradient of the loss with respect to the layer's output.
    cache : MHACache

    Returns
    -------
    grads : dict of str to ndarray
        One entry per array of ``layer.parameters()``, same names and shapes.
    d_query : ndarray, shape (batch, seq_q, d_model)
        For self-attention this is the full gradient with respect to the one input (the query, key and
        value paths summed).
    d_key, d_value : ndarray or None
        Shapes (batch, seq_k, kdim) and (batch, seq_k, vdim); None for self-attention.

    Examples
    --------
    >>> import mha
    >>> layer = mha.MultiHeadAttention(8, 2, rng=0)
    >>> x = np.random.default_rng(1).standard_normal((2, 5, 8))
    >>> out, cache = mha_forward(layer, x)
    >>> grads, dx, _, _ = mha_backward(np.ones_like(out), cache)
    >>> sorted(grads) == sorted(layer.parameters()), dx.shape
    (True, (2, 5, 8))
    """
    params, grads = cache.params, {}
    d_concat = _linear_backward(d_out, cache.concat, grads, "W_o", "b_o", params)
    d_context = split_heads(d_concat, cache.n_heads)  # (batch, n_heads, seq_q, d_head)
    if cache.head_mask is not None:
        d_context = d_context * cache.head_mask[:, None, None]  # (batch, n_heads, seq_q, d_head)
    dq_heads, dk_heads, dv_heads = attention_backward(d_context, cache.attention)
    batch, _, seq_k, d_head = dk_heads.shape
    group = cache.n_heads // cache.n_kv_heads
    # A key/value head served `group` query heads: its gradient is the sum of theirs.
    dk_heads = dk_heads.reshape(batch, cache.n_kv_heads, group, seq_k, d_head).sum(axis=2)
    dv_heads = dv_heads.reshape(batch, cache.n_kv_heads, group, seq_k, d_head).sum(axis=2)
    d_query = _linear_backward(merge_heads(dq_heads), cache.query, grads, "W_q", "b_q", params)
    d_key = _linear_backward(merge_heads(dk_heads), cache.key, grads, "W_k", "b_k", params)
    d_value = _linear_backward(merge_heads(dv_heads), cache.value, grads, "W_v", "b_v", params)
    if cache.self_attention:
        return grads, d_query + d_key + d_value, None, None
    return grads, d_query, d_key, d_value


def cross_entropy(logits, targets, loss_mask=None):
    """Mean cross-entropy of the predicted next tokens, and its gradient with respect to the logits.

    Parameters
    ----------
    logits : ndarray, shape (..., vocab_size)
    targets : int ndarray, shape (...)
        The correct class at every position.
    loss_mask : bool ndarray, shape (...), optional
        Which positions count; the loss is the mean over them (default: all).

    Returns
    -------
    loss : float
        In nats; ``log(vocab_size)`` for a uniform guess.
    d_logits : ndarray, same shape and dtype as ``logits``

    Examples
    --------
    >>> loss, d = cross_entropy(np.zeros((2, 4)), np.array([0, 3]))
    >>> round(loss, 4) == round(float(np.log(4)), 4), d[0]
    (True, array([-0.375,  0.125,  0.125,  0.125]))
    """
    logits = as_float_array(logits, "logits")
    targets = np.asarray(targets)
    if targets.dtype.kind not in "iu" or targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets must be integers of shape {logits.shape[:-1]}, got {targets.dtype} "
                         f"{targets.shape}")
    if targets.size and (targets.min() < 0 or targets.max() >= logits.shape[-1]):
        raise ValueError(f"targets must lie in [0, {logits.shape[-1]}), "
                         f"got [{targets.min()}, {targets.max()}]")
    if loss_mask is None:
        loss_mask = np.ones(targets.shape, dtype=bool)
    loss_mask = check_bool_mask(loss_mask, "loss_mask")
    if loss_mask.shape != targets.shape:
        raise ValueError(f"loss_mask must have shape {targets.shape}, got {loss_mask.shape}")
    count = int(loss_mask.sum())
    if count == 0:
        raise ValueError("loss_mask selects no position: the mean loss would be 0/0")
    shifted = logits - logits.max(axis=-1, keepdims=True)  # stable log-softmax
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (..., vocab_size)
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]  # (...)
    loss = -float(picked[loss_mask].sum()) / count
    d_logits = np.exp(log_probs)  # softmax probabilities
    np.put_along_axis(d_logits, targets[..., None], np.take_along_axis(d_logits, targets[..., None], -1) - 1,
                      axis=-1)
    d_logits *= (loss_mask / count).astype(d_logits.dtype)[..., None]
    return loss, d_logits
