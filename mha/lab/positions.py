"""Position schemes at work on small inputs: the attention a relative bias or ALiBi produces.

What the positions chapter and its explorers plot, computed from the core :mod:`mha.positions`.
"""

from __future__ import annotations

import itertools

import numpy as np

from mha.attention import scaled_dot_product_attention
from mha.lab.examples import toy_embeddings
from mha.layers import MultiHeadAttention
from mha.masks import causal_mask
from mha.positions import RelativePositionBias, alibi_bias

__all__ = ["BIAS_HEADS", "relative_bias_weights", "alibi_weights"]

#: The four heads of the relative-bias widget: (title, preferred offset, strength multiplier).
BIAS_HEADS = (
    ("prefers −1 (previous)", -1, 1.0),
    ("prefers 0 (itself)", 0, 1.0),
    ("prefers +1 (next)", 1, 1.0),
    ("local window", 0, 0.25),
)
_D_MODEL = 32
_WORDS = "the quick brown fox jumps over the lazy dog".split()


def relative_bias_weights(strength: float, seq_len: int) -> tuple[np.ndarray, list[str]]:
    """Attention weights of a 4-head layer whose heads get the :data:`BIAS_HEADS` biases.

    Returns
    -------
    weights : ndarray, shape (4, seq_len, seq_len)
    tokens : list of str
        The words, cycling through the fox sentence.

    Examples
    --------
    >>> weights, tokens = relative_bias_weights(8.0, 5)
    >>> weights.shape, tokens[:3]
    ((4, 5, 5), ['the', 'quick', 'brown'])
    >>> weights[0].argmax(axis=1)  # head 0 prefers the previous token (the first token has none)
    array([0, 0, 1, 2, 3])
    """
    tokens = list(itertools.islice(itertools.cycle(_WORDS), seq_len))
    x = toy_embeddings(tokens, _D_MODEL, seed=0)  # (seq_len, d_model)
    layer = MultiHeadAttention(_D_MODEL, len(BIAS_HEADS), rng=0)
    position_bias = RelativePositionBias(len(BIAS_HEADS), max_distance=8)
    for head, (_, offset, multiplier) in enumerate(BIAS_HEADS):
        position_bias.prefer_offset(head, offset, strength * multiplier)
    _, weights = layer(x, bias=position_bias(seq_len), return_weights=True)  # (4, seq_len, seq_len)
    return weights, tokens


def alibi_weights(n_heads: int, seq_len: int) -> np.ndarray:
    """Causal attention weights of ALiBi's bias alone (all content scores zero), one matrix per head.

    Returns
    -------
    ndarray, shape (n_heads, seq_len, seq_len)

    Examples
    --------
    >>> w = alibi_weights(2, 4)
    >>> w.shape, bool(np.allclose(w.sum(axis=-1), 1))
    ((2, 4, 4), True)
    """
    zeros = np.zeros((n_heads, seq_len, 1))  # (n_heads, seq, d_head = 1): every content score is 0
    _, weights = scaled_dot_product_attention(zeros, zeros, zeros, causal_mask(seq_len),
                                                  bias=alibi_bias(n_heads, seq_len), return_weights=True)
    return weights
