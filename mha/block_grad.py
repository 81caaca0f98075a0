"""Backward passes for whole transformer blocks: layer norm, feed-forward, embeddings, encoder, decoder.

The same contract as :mod:`mha.grad`: every ``*_forward`` returns its output and a cache, every
``*_backward`` takes the gradient of a scalar loss with respect to that output and the cache, and returns
the gradients of the weights (a dict named like the module's ``parameters()``) and of the inputs. The
forward functions compute the same numbers as the package's layers called normally (the tests check both,
and every gradient against central finite differences).

Dropout is not applied here: these forward passes are the evaluation-mode ones (``training=False``).

The residual connection is what makes a deep stack trainable, and its backward pass is one addition: for
``y = x + f(x)``, ``dx = dy + f'(x)ᵀ dy``. The gradient reaches the bottom of the stack unchanged, whatever
the sub-layers do to their share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mha._features import token_matmul
from mha._validation import as_float_array
from mha.feed_forward import ACTIVATIONS, erf
from mha.grad import mha_backward, mha_forward

__all__ = [
    "layer_norm_forward",
    "layer_norm_backward",
    "activation_backward",
    "feed_forward_forward",
    "feed_forward_backward",
    "embedding_backward",
    "block_forward",
    "block_backward",
    "decoder_block_forward",
    "decoder_block_backward",
]


# ------------------------------------------------------------------------------------------ layer norm
@dataclass
class LayerNormCache:
    normalised: np.ndarray  # (..., d_model), (x - mean) / std
    inv_std: np.ndarray  # (..., 1)
    gamma: np.ndarray  # (d_model,)


def layer_norm_forward(norm, x):
    """A :class:`mha.LayerNorm` applied to ``x`` of shape ``(..., d_model)``, keeping what the backward needs.

    Examples
    --------
    >>> import mha
    >>> norm = mha.LayerNorm(4)
    >>> x = np.arange(8.0).reshape(2, 4) ** 2
    >>> y, cache = layer_norm_forward(norm, x)
    >>> np.allclose(y, norm(x))
    True
    """
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # (..., 1)
    inv_std = 1.0 / np.sqrt(var + x.dtype.type(norm.eps))
    normalised = centred * inv_std
    return normalised * norm.gamma + norm.beta, LayerNormCache(normalised, inv_std, norm.gamma)


def layer_norm_backward(d_out, cache: LayerNormCache):
    """Gradients of :func:`layer_norm_forward`: ``({"gamma": …, "beta": …}, dx)``.

    With ``n = (x − μ)/σ`` and ``dn = dy ⊙ γ``, the mean and the variance both depend on every feature,
    so ``dx = (dn − mean(dn) − n ⊙ mean(dn ⊙ n)) / σ`` (means over the features).
    """
    n = cache.normalised
    lead = tuple(range(d_out.ndim - 1))
    grads = {"gamma": np.sum(d_out * n, axis=lead), "beta": np.sum(d_out, axis=lead)}
    dn = d_out * cache.gamma
    dx = (dn - dn.mean(axis=-1, keepdims=True) - n * np.mean(dn * n, axis=-1, keepdims=True)) * cache.inv_std
    return grads, dx


# ------------------------------------------------------------------------------------------ feed-forward
def activation_backward(name: str, hidden, d_act):
    """Gradient through an activation of :data:`mha.feed_forward.ACTIVATIONS`, from its input ``hidden``.

    Examples
    --------
    >>> activation_backward("relu", np.array([-1.0, 2.0]), np.ones(2))
    array([0., 1.])
    """
    if name == "relu":
        return d_act * (hidden > 0)
    if name == "gelu":  # x/2 (1 + tanh u), u = c (x + a x³)
        c, a = math.sqrt(2.0 / math.pi), 0.044715
        t = np.tanh(c * (hidden + a * hidden * hidden * hidden))
        slope = 0.5 * (1.0 + t) + 0.5 * hidden * (1.0 - t * t) * c * (1.0 + 3 * a * hidden * hidden)
        return d_act * slope
    if name == "gelu_exact":  # x Φ(x): Φ(x) + x φ(x)
        cdf = 0.5 * (1.0 + erf(hidden * (1.0 / math.sqrt(2.0))))
        density = np.exp(-0.5 * hidden * hidden) * (1.0 / math.sqrt(2 * math.pi))
        return d_act * (cdf + hidden * density)
    raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {name!r}")


@dataclass
class FeedForwardCache:
    params: dict
    x: np.ndarray  # (..., d_model)
    hidden: np.ndarray  # (..., d_ff), before the activation
    activated: np.ndarray  # (..., d_ff)
    activation: str


def feed_forward_forward(ffn, x):
    """A :class:`mha.FeedForward` on ``x`` of shape ``(..., d_model)``, keeping what the backward needs.

    Examples
    --------
    >>> import mha
    >>> ffn = mha.FeedForward(4, 8, rng=0)
    >>> x = np.random.default_rng(1).standard_normal((2, 3, 4))
    >>> np.allclose(feed_forward_forward(ffn, x)[0], ffn(x))
    True
    """
    params = ffn.parameters()
    hidden = token_matmul(x, params["W_1"])  # (..., d_ff)
    if "b_1" in params:
        hidden += params["b_1"]
    activated = ACTIVATIONS[ffn.activation](hidden)
    out = token_matmul(activated, params["W_2"])  # (..., d_model)
    if "b_2" in params:
        out += params["b_2"]
    return out, FeedForwardCache(params, x, hidden, activated, ffn.activation)


def _weight_grad(x, d_y):
    """``xᵀ dy`` summed over every token: (..., fan_in), (..., fan_out) -> (fan_in, fan_out)."""
    return x.reshape(-1, x.shape[-1]).T @ d_y.reshape(-1, d_y.shape[-1])


def feed_forward_backward(d_out, cache: FeedForwardCache):
    """Gradients of :func:`feed_forward_forward`: ``(grads, dx)``, grads named like ``ffn.parameters()``."""
    params, lead = cache.params, tuple(range(d_out.ndim - 1))
    grads = {"W_2": _weight_grad(cache.activated, d_out)}
    d_act = token_matmul(d_out, params["W_2"].T)  # (..., d_ff)
    d_hidden = activation_backward(cache.activation, cache.hidden, d_act)
    grads["W_1"] = _weight_grad(cache.x, d_hidden)
    if "b_1" in params:
        grads["b_1"], grads["b_2"] = d_hidden.sum(axis=lead), d_out.sum(axis=lead)
    return grads, token_matmul(d_hidden, params["W_1"].T)


# ------------------------------------------------------------------------------------------ embedding
def embedding_backward(d_out, tokens, vocab_size: int):
    """Gradient of an embedding table from the gradient of its looked-up rows.

    ``table[tokens]`` copies rows, so each row's gradient is the sum of the gradients of every place it
    was copied to (a token used twice collects both).

    Parameters
    ----------
    d_out : ndarray, shape (..., d_model)
    tokens : int ndarray, shape (...)
    vocab_size : int

    Returns
    -------
    ndarray, shape (vocab_size, d_model)

    Examples
    --------
    >>> embedding_backward(np.ones((1, 3, 2)), np.array([[0, 2, 0]]), 3)
    array([[2., 2.],
           [0., 0.],
           [1., 1.]])
    """
    d_out, tokens = as_float_array(d_out, "d_out"), np.asarray(tokens)
    if tokens.dtype.kind not in "iu" or d_out.shape[:-1] != tokens.shape:
        raise ValueError(f"expected integer tokens of shape {d_out.shape[:-1]} (d_out's without d_model), "
                         f"got {tokens.dtype} {tokens.shape}")
    if tokens.size and not (0 <= tokens.min() and tokens.max() < vocab_size):  # -1 would wrap round
        raise ValueError(f"tokens must lie in [0, {vocab_size}), got values from {tokens.min()} to "
                         f"{tokens.max()}")
    d_flat = d_out.reshape(-1, d_out.shape[-1])  # (tokens, d_model)
    grad = np.zeros((vocab_size, d_out.shape[-1]), dtype=d_out.dtype)
    np.add.at(grad, tokens.reshape(-1), d_flat)
    return grad


# ------------------------------------------------------------------------------------------ blocks
@dataclass
class BlockCache:
    norm: str
    caches: dict  # sub-layer name -> its cache


def block_forward(block, x, *, mask=None, causal=False, head_mask=None):
    """A :class:`mha.TransformerBlock` (pre- or post-norm) on ``x`` (batch, seq, d_model), with a cache.

    Examples
    --------
    >>> import mha
    >>> block = mha.TransformerBlock(8, 2, rng=0)
    >>> x = np.random.default_rng(1).standard_normal((2, 5, 8))
    >>> np.allclose(block_forward(block, x, causal=True)[0], block(x, causal=True))
    True
    """
    caches = {}
    if block.norm == "pre":
        h, caches["norm1"] = layer_norm_forward(block.norm1, x)
        att, caches["attention"] = mha_forward(block.attention, h, mask=mask, causal=causal,
                                               head_mask=head_mask)
        x = x + att
        h, caches["norm2"] = layer_norm_forward(block.norm2, x)
        f, caches["ffn"] = feed_forward_forward(block.ffn, h)
        out = x + f
    else:
        att, caches["attention"] = mha_forward(block.attention, x, mask=mask, causal=causal,
                                               head_mask=head_mask)
        x, caches["norm1"] = layer_norm_forward(block.norm1, x + att)
        f, caches["ffn"] = feed_forward_forward(block.ffn, x)
        out, caches["norm2"] = layer_norm_forward(block.norm2, x + f)
    return out, BlockCache(block.norm, caches)


def _named(grads, prefix):
    return {f"{prefix}.{name}": g for name, g in grads.items()}


def block_backward(d_out, cache: BlockCache):
    """Gradients of :func:`block_forward`: ``(grads, dx)``, grads named like ``block.parameters()``."""
    c, grads = cache.caches, {}
    if cache.norm == "pre":
        g, d_h = feed_forward_backward(d_out, c["ffn"])
        grads.update(_named(g, "ffn"))
        g, d_norm = layer_norm_backward(d_h, c["norm2"])
        grads.update(_named(g, "norm2"))
        d_x = d_out + d_norm  # the residual path and the path through the sub-layer
        g, d_h, _, _ = mha_backward(d_x, c["attention"])
        grads.update(_named(g, "attention"))
        g, d_norm = layer_norm_backward(d_h, c["norm1"])
        grads.update(_named(g, "norm1"))
        return grads, d_x + d_norm
    g, d_sum = layer_norm_backward(d_out, c["norm2"])
    grads.update(_named(g, "norm2"))
    g, d_f = feed_forward_backward(d_sum, c["ffn"])
    grads.update(_named(g, "ffn"))
    g, d_sum = layer_norm_backward(d_sum + d_f, c["norm1"])
    grads.update(_named(g, "norm1"))
    g, d_att, _, _ = mha_backward(d_sum, c["attention"])
    grads.update(_named(g, "attention"))
    return grads, d_sum + d_att


def decoder_block_forward(block, x, memory, *, memory_mask=None, mask=None, causal=True):
    """A pre-norm decoder block: causal self-attention, cross-attention to ``memory``, feed-forward.

    ``x = x + SelfAttn(LN₁ x);  x = x + CrossAttn(LN₂ x, memory);  x = x + FFN(LN₃ x)``.

    Parameters
    ----------
    block : object
        With attributes ``self_attention``, ``cross_attention`` (:class:`mha.MultiHeadAttention`),
        ``ffn`` (:class:`mha.FeedForward`) and ``norm1``, ``norm2``, ``norm3`` (:class:`mha.LayerNorm`),
        e.g. ``mha.lab.seq2seq.DecoderBlock``.
    x : ndarray, shape (batch, seq_q, d_model)
    memory : ndarray, shape (batch, seq_k, d_model)
        The encoder's output.
    memory_mask : bool ndarray broadcastable to (batch, n_heads, seq_q, seq_k), optional
        True where a target position may read a source position (False on source padding).
    mask : bool ndarray broadcastable to (batch, n_heads, seq_q, seq_q), optional
        For the self-attention, on top of ``causal``.
    causal : bool, default True

    Returns
    -------
    output : ndarray, shape (batch, seq_q, d_model)
    cache : BlockCache
    """
    caches = {}
    h, caches["norm1"] = layer_norm_forward(block.norm1, x)
    att, caches["self_attention"] = mha_forward(block.self_attention, h, mask=mask, causal=causal)
    x = x + att
    h, caches["norm2"] = layer_norm_forward(block.norm2, x)
    att, caches["cross_attention"] = mha_forward(block.cross_attention, h, memory, mask=memory_mask)
    x = x + att
    h, caches["norm3"] = layer_norm_forward(block.norm3, x)
    f, caches["ffn"] = feed_forward_forward(block.ffn, h)
    return x + f, BlockCache("decoder", caches)


def decoder_block_backward(d_out, cache: BlockCache):
    """Gradients of :func:`decoder_block_forward`: ``(grads, dx, d_memory)``.

    The memory feeds the keys and values of the cross-attention only, so ``d_memory`` is the sum of its
    key and value gradients; the encoder's backward pass starts from it.
    """
    c, grads = cache.caches, {}
    g, d_h = feed_forward_backward(d_out, c["ffn"])
    grads.update(_named(g, "ffn"))
    g, d_norm = layer_norm_backward(d_h, c["norm3"])
    grads.update(_named(g, "norm3"))
    d_x = d_out + d_norm
    g, d_h, d_key, d_value = mha_backward(d_x, c["cross_attention"])
    grads.update(_named(g, "cross_attention"))
    g, d_norm = layer_norm_backward(d_h, c["norm2"])
    grads.update(_named(g, "norm2"))
    d_x = d_x + d_norm
    g, d_h, _, _ = mha_backward(d_x, c["self_attention"])
    grads.update(_named(g, "self_attention"))
    g, d_norm = layer_norm_backward(d_h, c["norm1"])
    grads.update(_named(g, "norm1"))
    return grads, d_x + d_norm, d_key + d_value
