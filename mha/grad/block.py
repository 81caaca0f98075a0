"""Backward passes of the activations, the feed-forward network and whole blocks.

The residual connection is what makes a deep stack trainable, and its backward pass is one addition: for
``y = x + f(x)``, ``dx = dy + f'(x)ᵀ dy``. The gradient reaches the bottom of the stack unchanged, whatever
the sub-layers do to their share.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mha.block import BlockCache
from mha.feed_forward import ACTIVATIONS, FeedForwardCache, erf
from mha.grad.attention import multi_head_backward
from mha.grad.linear import linear_backward
from mha.grad.normalization import layer_norm_backward
from mha.typing import FloatArray

#: Gradients by parameter name, as ``layer.parameters()`` names the arrays.
Grads = dict[str, FloatArray]

__all__ = ["activation_backward", "feed_forward_backward", "block_backward", "decoder_block_backward"]


def activation_backward(name: str, hidden: FloatArray, d_act: FloatArray) -> FloatArray:
    """Gradient through an activation of :data:`mha.feed_forward.ACTIVATIONS`, from its input ``hidden``.

    Parameters
    ----------
    name : {"relu", "gelu", "gelu_exact"}
        The activation, as :class:`mha.FeedForward` names it.
    hidden : ndarray
        The activation's input.
    d_act : ndarray, same shape
        Gradient of the loss with respect to the activation's output.

    Returns
    -------
    ndarray, same shape as ``hidden``

    Raises
    ------
    ValueError
        ``name`` is not one of the activations.

    Examples
    --------
    >>> activation_backward("relu", np.array([-1.0, 2.0]), np.ones(2))
    array([0., 1.])
    """
    if name == "relu":
        d_relu: FloatArray = d_act * (hidden > 0)
        return d_relu
    if name == "gelu":  # x/2 (1 + tanh u), u = c (x + a x³)
        c, a = math.sqrt(2.0 / math.pi), 0.044715
        with np.errstate(over="ignore", invalid="ignore"):  # far out: x³ = inf, and 1 - t² is exactly 0
            t = np.tanh(c * (hidden + a * hidden * hidden * hidden))
            tail = 0.5 * hidden * (1.0 - t * t) * c * (1.0 + 3 * a * hidden * hidden)
        tail = np.where(np.isfinite(tail), tail, 0)  # inf · 0 there: the slope is 0.5 (1 + t), 0 or 1
        return d_act * (0.5 * (1.0 + t) + tail)
    if name == "gelu_exact":  # x Φ(x): Φ(x) + x φ(x), with the forward's own erf for Φ
        cdf = 0.5 * (1.0 + erf(hidden * (1.0 / math.sqrt(2.0))))
        with np.errstate(over="ignore"):
            density = np.exp(-0.5 * hidden * hidden) * (1.0 / math.sqrt(2 * math.pi))
        return d_act * (cdf + hidden * density)
    raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {name!r}")


def feed_forward_backward(d_out: FloatArray, cache: FeedForwardCache) -> tuple[Grads, FloatArray]:
    """Gradients of ``FeedForward.forward``: ``(grads, dx)``, grads named like ``ffn.parameters()``.

    Parameters
    ----------
    d_out : ndarray, shape (..., d_model)
        Gradient of the loss with respect to the network's output.
    cache : FeedForwardCache
        From ``ffn.forward(x)``.

    Returns
    -------
    grads : dict of str to ndarray
        ``W_1``, ``W_2`` and, with biases, ``b_1``, ``b_2``.
    dx : ndarray, shape (..., d_model)

    Raises
    ------
    ValueError
        The cache names an activation that has no backward pass here.

    Examples
    --------
    >>> import mha
    >>> ffn = mha.FeedForward(4, 8, rng=0)
    >>> out, cache = ffn.forward(np.ones((2, 3, 4)))
    >>> grads, dx = feed_forward_backward(np.ones_like(out), cache)
    >>> sorted(grads) == sorted(ffn.parameters()), dx.shape
    (True, (2, 3, 4))
    """
    ffn = cache.ffn
    grads: dict[str, FloatArray | None] = {}
    grads["W_2"], grads["b_2"], d_act = linear_backward(d_out, cache.activated, ffn.W_2, ffn.b_2)
    d_hidden = activation_backward(ffn.activation, cache.hidden, d_act)
    grads["W_1"], grads["b_1"], dx = linear_backward(d_hidden, cache.x, ffn.W_1, ffn.b_1)
    return {name: g for name, g in grads.items() if g is not None}, dx


def _named(grads: Grads, prefix: str) -> Grads:
    return {f"{prefix}.{name}": g for name, g in grads.items()}


def block_backward(d_out: FloatArray, cache: BlockCache) -> tuple[Grads, FloatArray]:
    """Gradients of ``TransformerBlock.forward``: ``(grads, dx)``, grads named like ``block.parameters()``.

    Parameters
    ----------
    d_out : ndarray, shape (batch, seq, d_model)
        Gradient of the loss with respect to the block's output.
    cache : BlockCache
        From ``block.forward(x, ...)``, pre-norm or post-norm.

    Returns
    -------
    grads : dict of str to ndarray
        ``"attention.W_q"``, ``"ffn.W_1"``, ``"norm1.gamma"`` ...
    dx : ndarray, shape (batch, seq, d_model)

    Raises
    ------
    ValueError
        ``cache`` is a :class:`mha.DecoderBlock`'s, or keeps no attention weights (from the annex's tiles).

    Examples
    --------
    >>> import mha
    >>> block = mha.TransformerBlock(8, 2, rng=0)
    >>> out, cache = block.forward(np.random.default_rng(1).standard_normal((2, 5, 8)), causal=True)
    >>> grads, dx = block_backward(np.ones_like(out), cache)
    >>> sorted(grads) == sorted(block.parameters()), dx.shape
    (True, (2, 5, 8))
    """
    if cache.norm == "decoder":
        raise ValueError("this is a DecoderBlock's cache: use decoder_block_backward")
    c: dict[str, Any] = cache.parts
    grads: Grads = {}
    drop_attention, drop_ffn = cache.dropout

    # dropout multiplied the sub-layer's output by `scale`: so does its gradient
    def undrop(d: FloatArray, scale: FloatArray | None) -> FloatArray:
        return d if scale is None else d * scale

    if cache.norm == "pre":
        g, d_y = feed_forward_backward(undrop(d_out, drop_ffn), c["ffn"])
        grads.update(_named(g, "ffn"))
        g, d_norm = layer_norm_backward(d_y, c["norm2"])
        grads.update(_named(g, "norm2"))
        d_x = d_out + d_norm  # the residual path and the path through the sub-layer
        g, d_y, _, _ = multi_head_backward(undrop(d_x, drop_attention), c["attention"])
        grads.update(_named(g, "attention"))
        g, d_norm = layer_norm_backward(d_y, c["norm1"])
        grads.update(_named(g, "norm1"))
        return grads, d_x + d_norm
    g, d_sum = layer_norm_backward(d_out, c["norm2"])
    grads.update(_named(g, "norm2"))
    g, d_f = feed_forward_backward(undrop(d_sum, drop_ffn), c["ffn"])
    grads.update(_named(g, "ffn"))
    g, d_sum = layer_norm_backward(d_sum + d_f, c["norm1"])
    grads.update(_named(g, "norm1"))
    g, d_att, _, _ = multi_head_backward(undrop(d_sum, drop_attention), c["attention"])
    grads.update(_named(g, "attention"))
    return grads, d_sum + d_att


def decoder_block_backward(d_out: FloatArray, cache: BlockCache
                           ) -> tuple[Grads, FloatArray, FloatArray]:
    """Gradients of ``DecoderBlock.forward``: ``(grads, dx, d_memory)``.

    The memory feeds the keys and values of the cross-attention only, so ``d_memory`` is the sum of its
    key and value gradients; the encoder's backward pass starts from it.

    Parameters
    ----------
    d_out : ndarray, shape (batch, seq_q, d_model)
        Gradient of the loss with respect to the block's output.
    cache : BlockCache
        From ``decoder_block.forward(x, memory, ...)``.

    Returns
    -------
    grads : dict of str to ndarray
        Named like ``block.parameters()``: ``"self_attention.W_q"``, ``"norm3.beta"`` ...
    dx : ndarray, shape (batch, seq_q, d_model)
    d_memory : ndarray, shape (batch, seq_k, d_model)

    Raises
    ------
    ValueError
        ``cache`` is a :class:`mha.TransformerBlock`'s.

    Examples
    --------
    >>> import mha
    >>> block, rng = mha.DecoderBlock(8, 2, rng=0), np.random.default_rng(0)
    >>> out, cache = block.forward(rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8)))
    >>> grads, dx, d_memory = decoder_block_backward(np.ones_like(out), cache)
    >>> sorted(grads) == sorted(block.parameters()), dx.shape, d_memory.shape
    (True, (2, 3, 8), (2, 5, 8))
    """
    if cache.norm != "decoder":
        raise ValueError(f"this is a {cache.norm}-norm TransformerBlock's cache: use block_backward")
    c: dict[str, Any]
    grads: Grads
    c, grads = cache.parts, {}
    g, d_y = feed_forward_backward(d_out, c["ffn"])
    grads.update(_named(g, "ffn"))
    g, d_norm = layer_norm_backward(d_y, c["norm3"])
    grads.update(_named(g, "norm3"))
    d_x = d_out + d_norm
    g, d_y, d_key, d_value = multi_head_backward(d_x, c["cross_attention"])
    assert d_key is not None and d_value is not None  # cross-attention: keys and values from the memory
    grads.update(_named(g, "cross_attention"))
    g, d_norm = layer_norm_backward(d_y, c["norm2"])
    grads.update(_named(g, "norm2"))
    d_x = d_x + d_norm
    g, d_y, _, _ = multi_head_backward(d_x, c["self_attention"])
    grads.update(_named(g, "self_attention"))
    g, d_norm = layer_norm_backward(d_y, c["norm1"])
    grads.update(_named(g, "norm1"))
    return grads, d_x + d_norm, d_key + d_value
