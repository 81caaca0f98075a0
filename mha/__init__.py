"""Multi-head attention in NumPy: the package behind the course.

The core library is flat, in the order the chapters teach it:

``attention``      softmax, scaled dot-product attention, split/merge heads
``masks``          causal and padding masks (True = may attend)
``layers``         :class:`MultiHeadAttention`, the layer with its four projections
``cost``           parameters, FLOPs and bytes, and their formatting
``positions``      sinusoidal, learned-bias, rotary and ALiBi positions
``efficient``      chunked (online-softmax) attention, the KV cache and the rolling (sliding-window) cache
``rope_scaling``   rotary tables for longer contexts: interpolation, NTK-aware scaling, YaRN
``variants``       :class:`ModernAttention`: RoPE inside the layer, QK-norm, logit soft-capping
``latent_attention``  multi-head latent attention (DeepSeek-V2), explicit and absorbed
``linear_attention``  attention without the softmax: parallel and recurrent forms
``model_configs``  the attention of five published models, and what their caches cost
``normalization``  layer norm and RMS norm
``feed_forward``   the position-wise feed-forward network and its activations
``block``          the transformer block and the decoder block
``grad``           backward passes, by concept, consuming the forward passes' caches
``frameworks``     weights to and from PyTorch's and Keras's layouts (no framework import)

What every layer is built on: ``module`` (:class:`~mha.module.Module`, :class:`~mha.module.Parameter`,
:func:`~mha.module.linear`), ``validation`` (the input checks) and ``extras`` (optional dependencies).
Speed lives in one annex, :mod:`mha.fast`, behind one door in the code above.

Around it, imported only when used: :mod:`mha.lab` (what the chapters run), :mod:`mha.plotting`
(arrays in, figure out), :mod:`mha.explorers` (widgets), :mod:`mha.checks` (learner checks) and
:mod:`mha.pretrained` (a real model). ``import mha`` loads NumPy and nothing else.

>>> import numpy as np, mha
>>> layer = mha.MultiHeadAttention(d_model=512, n_heads=8, rng=0)
>>> layer(np.zeros((2, 3, 512))).shape
(2, 3, 512)
"""

import importlib
from types import ModuleType

from mha import (
    attention,
    block,
    cost,
    efficient,
    extras,
    fast,
    feed_forward,
    frameworks,
    grad,
    latent_attention,
    layers,
    linear_attention,
    masks,
    model_configs,
    module,
    normalization,
    positions,
    rope_scaling,
    typing,
    validation,
    variants,
)
from mha.attention import merge_heads, scaled_dot_product_attention, soft_cap, softmax, split_heads
from mha.block import DecoderBlock, TransformerBlock, dropout
from mha.efficient import KVCache, RollingKVCache, chunked_attention
from mha.feed_forward import FeedForward
from mha.latent_attention import LatentAttention
from mha.layers import MultiHeadAttention
from mha.masks import causal_mask, padding_mask, sliding_window_mask, torch_masks_to_mask
from mha.normalization import LayerNorm, layer_norm, rms_norm
from mha.positions import RelativePositionBias, alibi_bias, apply_rotary, sinusoidal_encoding
from mha.variants import ModernAttention

#: The one place the version is written (pyproject.toml reads it; CHANGELOG.md says what changed).
__version__ = "0.2.0"

# Loaded on first use (PEP 562), so that `import mha` needs NumPy only.
_SUBPACKAGES = ("lab", "plotting", "explorers", "checks", "pretrained")

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "split_heads",
    "merge_heads",
    "soft_cap",
    "causal_mask",
    "padding_mask",
    "sliding_window_mask",
    "torch_masks_to_mask",
    "MultiHeadAttention",
    "chunked_attention",
    "KVCache",
    "RollingKVCache",
    "ModernAttention",
    "LatentAttention",
    "sinusoidal_encoding",
    "RelativePositionBias",
    "apply_rotary",
    "alibi_bias",
    "layer_norm",
    "LayerNorm",
    "rms_norm",
    "FeedForward",
    "dropout",
    "TransformerBlock",
    "DecoderBlock",
    "attention",
    "masks",
    "layers",
    "cost",
    "positions",
    "efficient",
    "rope_scaling",
    "variants",
    "latent_attention",
    "linear_attention",
    "model_configs",
    "normalization",
    "feed_forward",
    "block",
    "grad",
    "frameworks",
    "module",
    "validation",
    "extras",
    "typing",
    "fast",
    *_SUBPACKAGES,
]


def __getattr__(name: str) -> ModuleType:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"mha.{name}")
    raise AttributeError(f"module 'mha' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBPACKAGES))
