"""Multi-head attention in NumPy: the package behind the course.

Every chapter, widget, exercise and grader of the course imports this package. The core is a handful of
pure functions (``softmax``, ``scaled_dot_product_attention``, the masks, ``split_heads``/``merge_heads``,
``chunked_attention``) and one layer class around them (``MultiHeadAttention``). ``mha.cost`` counts
parameters, FLOPs and bytes.

>>> import numpy as np, mha
>>> layer = mha.MultiHeadAttention(d_model=512, n_heads=8, rng=0)
>>> layer(np.zeros((2, 3, 512))).shape
(2, 3, 512)
"""

from mha import block, checks, cost, feed_forward, normalization, positions
from mha.attention import merge_heads, scaled_dot_product_attention, softmax, split_heads
from mha.block import TransformerBlock, dropout
from mha.efficient import KVCache, chunked_attention
from mha.feed_forward import FeedForward
from mha.layers import MultiHeadAttention
from mha.masks import causal_mask, padding_mask, torch_masks_to_mask
from mha.normalization import LayerNorm, layer_norm
from mha.positions import RelativePositionBias, alibi_bias, apply_rotary, sinusoidal_encoding
from mha.torch_format import from_keras_weights, to_keras_weights

__version__ = "0.1.0"

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "split_heads",
    "merge_heads",
    "causal_mask",
    "padding_mask",
    "torch_masks_to_mask",
    "to_keras_weights",
    "from_keras_weights",
    "MultiHeadAttention",
    "chunked_attention",
    "KVCache",
    "cost",
    "checks",
    "positions",
    "sinusoidal_encoding",
    "RelativePositionBias",
    "apply_rotary",
    "alibi_bias",
    "normalization",
    "layer_norm",
    "LayerNorm",
    "feed_forward",
    "FeedForward",
    "block",
    "dropout",
    "TransformerBlock",
]
