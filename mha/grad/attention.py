"""Backward passes of the softmax, of scaled dot-product attention and of the multi-head attention layer.

The chain rule for one head, with ``s = q kᵀ / √d_head``, ``w = softmax(s)`` and ``o = w v``::

    dv = wᵀ do          dw = do vᵀ          ds = w ⊙ (dw − rowsum(w ⊙ dw))
    dq = ds k / √d_head     dk = dsᵀ q / √d_head

Masked scores have weight 0, so the softmax backward sends them no gradient, and a fully masked query
(all-zero weights) sends none at all.
"""

from __future__ import annotations

import math

import numpy as np

from mha.attention import merge_heads, soft_cap, split_heads
from mha.grad.linear import linear_backward
from mha.grad.normalization import rms_norm_backward
from mha.layers import LayerCache
from mha.positions import apply_rotary
from mha.typing import ArrayLike, FloatArray
from mha.variants import ModernAttention

__all__ = ["softmax_backward", "attention_backward", "attention_step_backward", "multi_head_backward"]


def softmax_backward(weights: ArrayLike, d_weights: ArrayLike, axis: int = -1) -> FloatArray:
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

    Raises
    ------
    ValueError
        ``weights`` and ``d_weights`` differ in shape.

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
    d_scores: FloatArray = weights * (d_weights - inner)
    return d_scores


def attention_backward(d_out: FloatArray, q: FloatArray, k: FloatArray, v: FloatArray, weights: FloatArray, *,
                       scale: float | None = None, softcap: float | None = None
                       ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Gradients of :func:`mha.scaled_dot_product_attention` with respect to ``q``, ``k`` and ``v``.

    The forward pass is ``out, weights = scaled_dot_product_attention(q, k, v, mask, return_weights=True)``;
    the mask acts through the weights (a masked key has weight 0), so it is not needed here.

    Parameters
    ----------
    d_out : ndarray, shape (..., seq_q, d_v)
    q : ndarray, shape (..., seq_q, d_head)
    k : ndarray, shape (..., seq_k, d_head)
    v : ndarray, shape (..., seq_k, d_v)
    weights : ndarray, shape (..., seq_q, seq_k)
        The same leading dimensions for all five (no broadcasting: gradients would need summing).
    scale, softcap : float, optional
        As given to the forward pass (the scale defaults to ``1 / √d_head``). Soft-capping multiplies the
        scores' gradient by ``1 - tanh²``, recomputed from ``q`` and ``k``.

    Returns
    -------
    dq : ndarray, shape (..., seq_q, d_head)
    dk : ndarray, shape (..., seq_k, d_head)
    dv : ndarray, shape (..., seq_k, d_v)

    Raises
    ------
    ValueError
        Shapes that do not fit together (the message names them all).

    Examples
    --------
    >>> import mha
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = (rng.standard_normal((3, 4)) for _ in range(3))
    >>> out, w = mha.scaled_dot_product_attention(q, k, v, return_weights=True)
    >>> dq, dk, dv = attention_backward(np.ones_like(out), q, k, v, w)
    >>> np.allclose(dv.sum(axis=0), 3.0)  # each of the 3 queries hands out total weight 1
    True
    """
    leads = {a.shape[:-2] for a in (d_out, q, k, v, weights)}
    if len(leads) != 1 or weights.shape[-2:] != (q.shape[-2], k.shape[-2]) or d_out.shape[-2] != q.shape[-2]:
        raise ValueError(f"expected d_out (..., seq_q, d_v), q (..., seq_q, d_head), k (..., seq_k, d_head), "
                         f"v (..., seq_k, d_v), weights (..., seq_q, seq_k) with equal leading dimensions, "
                         f"got {d_out.shape}, {q.shape}, {k.shape}, {v.shape}, {weights.shape}")
    factor = weights.dtype.type(1.0 / math.sqrt(q.shape[-1]) if scale is None else scale)
    dv = np.swapaxes(weights, -1, -2) @ d_out  # (..., seq_k, d_v)
    d_weights = d_out @ np.swapaxes(v, -1, -2)  # (..., seq_q, seq_k)
    d_scores = softmax_backward(weights, d_weights) * factor  # (..., seq_q, seq_k), through s = q kᵀ · scale
    if softcap is not None:  # s = c · tanh(raw / c): d raw = d s · (1 - tanh²), and tanh = s / c
        capped = soft_cap((q * factor) @ np.swapaxes(k, -1, -2), softcap)  # (..., seq_q, seq_k)
        squashed = capped * weights.dtype.type(1.0 / softcap)
        d_scores *= 1 - squashed * squashed
    dq = d_scores @ k  # (..., seq_q, d_head)
    dk = np.swapaxes(d_scores, -1, -2) @ q  # (..., seq_k, d_head)
    return dq, dk, dv


def multi_head_backward(d_out: FloatArray, cache: LayerCache
                        ) -> tuple[dict[str, FloatArray], FloatArray, FloatArray | None, FloatArray | None]:
    """Gradients of :meth:`mha.MultiHeadAttention.forward` for every weight and every input.

    Parameters
    ----------
    d_out : ndarray, shape (batch, seq_q, d_model)
        Gradient of the loss with respect to the layer's output.
    cache : LayerCache
        From ``layer.forward(...)``.

    Returns
    -------
    grads : dict of str to ndarray
        One entry per array of ``layer.parameters()``, same names and shapes.
    d_query : ndarray, shape (batch, seq_q, d_model)
        For self-attention this is the full gradient with respect to the one input (the query, key and
        value paths summed).
    d_key, d_value : ndarray or None
        Shapes (batch, seq_k, kdim) and (batch, seq_k, vdim); None for self-attention.

    Raises
    ------
    ValueError
        ``cache`` keeps no attention weights (it came from the annex's tiles) or no inputs (from decoding).

    Examples
    --------
    >>> import mha
    >>> layer = mha.MultiHeadAttention(8, 2, rng=0)
    >>> x = np.random.default_rng(1).standard_normal((2, 5, 8))
    >>> out, cache = layer.forward(x)
    >>> grads, dx, _, _ = multi_head_backward(np.ones_like(out), cache)
    >>> sorted(grads) == sorted(layer.parameters()), dx.shape
    (True, (2, 5, 8))
    """
    if cache.weights is None:
        raise ValueError("this cache keeps no attention weights (it came from the annex's tiles): "
                         "run layer.forward(...) for a pass that can go backward")
    layer = cache.layer
    grads: dict[str, FloatArray | None] = {}
    grads["W_o"], grads["b_o"], d_concat = linear_backward(d_out, cache.concat, layer.W_o, layer.b_o)
    d_context = split_heads(d_concat, layer.n_heads)  # (batch, n_heads, seq_q, d_head)
    if cache.head_mask is not None:
        d_context = d_context * cache.head_mask[:, None, None]
    (dq, dk, dv), step_grads = attention_step_backward(d_context, cache)
    grads.update(step_grads)  # a ModernAttention's QK-norm gains
    if layer.n_kv_heads < layer.n_heads:  # a key/value head served `group` query heads: sum their gradients
        batch, _, seq_k, d_head = dk.shape
        dk = dk.reshape(batch, layer.n_kv_heads, -1, seq_k, d_head).sum(axis=2)
        dv = dv.reshape(batch, layer.n_kv_heads, -1, seq_k, d_head).sum(axis=2)
    if cache.inputs is None:
        raise ValueError("this cache keeps no inputs (it came from decoding): run layer.forward(...) for a "
                         "pass that can go backward")
    query, key, value = cache.inputs
    self_attention = key is None
    key = query if key is None else key
    value = key if value is None else value
    grads["W_q"], grads["b_q"], d_query = linear_backward(merge_heads(dq), query, layer.W_q, layer.b_q)
    grads["W_k"], grads["b_k"], d_key = linear_backward(merge_heads(dk), key, layer.W_k, layer.b_k)
    grads["W_v"], grads["b_v"], d_value = linear_backward(merge_heads(dv), value, layer.W_v, layer.b_v)
    found = {name: g for name, g in grads.items() if g is not None}  # no bias: no bias gradient
    if self_attention:
        return found, d_query + d_key + d_value, None, None
    return found, d_query, d_key, d_value


def attention_step_backward(d_context: FloatArray, cache: LayerCache,
                            ) -> tuple[tuple[FloatArray, FloatArray, FloatArray], dict[str, FloatArray]]:
    """Gradients of a layer's attention step for its per-head ``q``, ``k``, ``v``, and of the step's weights.

    The textbook step is :func:`attention_backward`. A :class:`mha.ModernAttention` prepares its queries
    and keys first (QK-norm, rotation, attention factor): its backward asks
    :meth:`~mha.ModernAttention.prepare` for them again with the norms' caches, goes back through attention
    (soft-capped or not), then undoes the rotation (a rotation's transpose turns the other way) and the
    norms.

    Parameters
    ----------
    d_context : ndarray, shape (batch, n_heads, seq_q, d_head)
        Gradient of the loss with respect to the heads' outputs.
    cache : LayerCache
        From ``layer.forward(...)``.

    Returns
    -------
    (dq, dk, dv) : tuple of ndarray
        The shapes of ``cache.q``, ``cache.k``, ``cache.v``.
    grads : dict of str to ndarray
        ``{"g_q": ..., "g_k": ...}`` for a layer with QK-norm, else empty.

    Raises
    ------
    ValueError
        ``cache`` keeps no attention weights (it came from the annex's tiles).

    Examples
    --------
    >>> import mha
    >>> layer = mha.ModernAttention(8, 2, qk_norm=True, rng=0)
    >>> _, cache = layer.forward(np.random.default_rng(0).standard_normal((1, 3, 8)))
    >>> (dq, dk, dv), grads = attention_step_backward(np.ones_like(cache.q), cache)
    >>> dq.shape, sorted(grads)
    ((1, 2, 3, 4), ['g_k', 'g_q'])
    """
    layer, weights = cache.layer, cache.weights
    if weights is None:
        raise ValueError("this cache keeps no attention weights (it came from the annex's tiles): "
                         "run layer.forward(...) for a pass that can go backward")
    if not isinstance(layer, ModernAttention):
        return attention_backward(d_context, cache.q, cache.k, cache.v, weights), {}
    q, k, prepared = layer.prepare(cache.q, cache.k, return_cache=True)  # the queries and keys scored
    dq, dk, dv = attention_backward(d_context, q, k, cache.v, weights, softcap=layer.softcap)
    if prepared.positions is not None:  # back through the rotation: the same angles, turned the other way
        (q_pos, k_pos), factor = prepared.positions, q.dtype.type(prepared.factor)
        assert layer.rope is not None  # a rotation was applied
        dq = apply_rotary(dq, -q_pos, frequencies=layer.rope.frequencies) * factor
        dk = apply_rotary(dk, -k_pos, frequencies=layer.rope.frequencies) * factor
    norms = prepared.norms
    if norms is None:
        return (dq, dk, dv), {}
    d_gain_q, dq = rms_norm_backward(dq, norms[0])
    d_gain_k, dk = rms_norm_backward(dk, norms[1])
    gains = {name: d_gain for name, d_gain in (("g_q", d_gain_q), ("g_k", d_gain_k)) if d_gain is not None}
    return (dq, dk, dv), gains
