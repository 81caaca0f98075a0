"""Backward passes, so that models built from :mod:`mha` can learn with plain NumPy.

The forward passes are the package's own: ``layer.forward(x)`` returns a layer's output and a *cache*
of what its backward pass needs (``LayerNorm.forward``, ``FeedForward.forward``,
``MultiHeadAttention.forward``, ``TransformerBlock.forward``, ``DecoderBlock.forward``), and
:func:`mha.scaled_dot_product_attention` with ``return_weights=True`` gives attention's. Each
``*_backward`` here takes the gradient of a scalar loss with respect to that output (``d_out``, same
shape) and the cache, and returns the gradients of the weights (a dict named like the layer's
``parameters()``) and of the inputs. The tests check every one against central finite differences.

By concept:

- ``linear``: :func:`linear_backward`, the affine map every projection is;
- ``attention``: :func:`softmax_backward`, :func:`attention_backward`, :func:`multi_head_backward` (and
  :func:`attention_step_backward`: a :class:`mha.ModernAttention`'s step);
- ``normalization``: :func:`layer_norm_backward`, :func:`rms_norm_backward`;
- ``block``: activations, the feed-forward network, whole blocks;
- ``loss``: :func:`cross_entropy`, the :func:`log_softmax` it is made of, and :func:`embedding_backward`.
"""

from mha.grad.attention import (
    attention_backward,
    attention_step_backward,
    multi_head_backward,
    softmax_backward,
)
from mha.grad.block import (
    activation_backward,
    block_backward,
    decoder_block_backward,
    feed_forward_backward,
)
from mha.grad.linear import linear_backward
from mha.grad.loss import cross_entropy, embedding_backward, log_softmax
from mha.grad.normalization import layer_norm_backward, rms_norm_backward

__all__ = [
    "linear_backward",
    "softmax_backward",
    "attention_backward",
    "multi_head_backward",
    "attention_step_backward",
    "rms_norm_backward",
    "layer_norm_backward",
    "activation_backward",
    "feed_forward_backward",
    "block_backward",
    "decoder_block_backward",
    "embedding_backward",
    "cross_entropy",
    "log_softmax",
]
