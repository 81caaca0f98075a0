"""The transformer block: multi-head attention and a feed-forward network, each wrapped in a residual
connection and a layer norm.

Two placements of the norm::

    pre-norm  (GPT-2 and most models since):  x = x + Attn(LN(x));   x = x + FFN(LN(x))
    post-norm (the 2017 paper):               x = LN(x + Attn(x));   x = LN(x + FFN(x))

Dropout, when enabled, zeroes random entries of each sub-layer's output before it joins the residual
stream, during training only. Randomness always comes from a generator the caller passes in.
"""

from __future__ import annotations

import numbers

import numpy as np

from mha._features import check_features
from mha._parameters import Module
from mha._validation import as_float_array, as_generator, check_positive_int
from mha.cost import parameter_count as attention_parameter_count
from mha.feed_forward import FeedForward
from mha.layers import MultiHeadAttention
from mha.normalization import LayerNorm

__all__ = [
    "dropout",
    "TransformerBlock",
    "block_parameter_count",
]


# ---------------------------------------------------------------------------------------- dropout
def _check_rate(rate) -> float:
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate < 1:
        raise ValueError(f"dropout rate must be a number in [0, 1), got {rate!r}")
    return float(rate)


def dropout(x, rate: float, rng: np.random.Generator | None = None, *, training: bool = True) -> np.ndarray:
    """Inverted dropout: zero each entry with probability ``rate``, scale survivors by ``1 / (1 - rate)``.

    The scaling keeps every entry's expectation equal to ``x``, so nothing changes at evaluation time:
    with ``training=False`` (or ``rate=0``) ``x`` itself is returned, untouched.

    Parameters
    ----------
    x : array_like
    rate : float in [0, 1)
    rng : numpy.random.Generator
        Required when training with ``rate > 0``. A Generator, not a seed: a seed would redraw the same
        mask at every call.
    training : bool, default True

    Returns
    -------
    ndarray, same shape and dtype as ``x``

    Examples
    --------
    >>> x = np.ones(10_000, dtype=np.float32)
    >>> y = dropout(x, 0.5, np.random.default_rng(0))
    >>> y.dtype, sorted(set(y.tolist())), round(float(y.mean()), 1)  # zeros and twos, mean still 1
    (dtype('float32'), [0.0, 2.0], 1.0)
    >>> dropout(x, 0.5, training=False) is x
    True
    """
    rate = _check_rate(rate)
    x = as_float_array(x, "x")
    if not training or rate == 0:
        return x
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "dropout while training needs rng=numpy.random.Generator (create it once with "
            f"np.random.default_rng(seed) and reuse it), got {type(rng).__name__}"
        )
    dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.float64
    keep = rng.random(x.shape, dtype=dtype) >= rate  # True with probability 1 - rate
    return np.where(keep, x * x.dtype.type(1.0 / (1.0 - rate)), x.dtype.type(0))


# ---------------------------------------------------------------------------------------- the block
class TransformerBlock(Module):
    """One transformer layer: self-attention and a feed-forward network, each with a residual connection.

    Parameters
    ----------
    d_model, n_heads : int
        As in :class:`mha.MultiHeadAttention`.
    d_ff : int, optional
        Hidden width of the feed-forward network; defaults to ``4 * d_model``.
    norm : {"pre", "post"}, default "pre"
        Where the layer norms sit (see the module docstring).
    dropout : float in [0, 1), default 0.0
        Applied to each sub-layer's output when called with ``training=True``.
    activation : {"gelu", "gelu_exact", "relu"}, default "gelu"
    eps : float, default 1e-5
        Of both layer norms.
    bias : bool, default True
        Biases in the attention and feed-forward projections.
    n_kv_heads : int, optional
        Grouped-query attention, as in :class:`mha.MultiHeadAttention`.
    rng : numpy.random.Generator or int, optional
        Source of the initial weights.
    dtype : np.float32 or np.float64

    Attributes
    ----------
    attention : MultiHeadAttention
    ffn : FeedForward
    norm1, norm2 : LayerNorm
        ``norm1`` belongs to the attention sub-layer, ``norm2`` to the feed-forward one.

    Examples
    --------
    >>> block = TransformerBlock(d_model=16, n_heads=4, rng=0)
    >>> block(np.ones((2, 5, 16)), causal=True).shape
    (2, 5, 16)
    >>> block.parameter_count() == block_parameter_count(16, 4, 64)
    True
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, *, norm: str = "pre",
                 dropout: float = 0.0, activation: str = "gelu", eps: float = 1e-5, bias: bool = True,
                 n_kv_heads: int | None = None, rng=None, dtype=np.float64):
        if norm not in ("pre", "post"):
            raise ValueError(f"norm must be 'pre' or 'post', got {norm!r}")
        d_model = check_positive_int(d_model, "d_model")
        d_ff = 4 * d_model if d_ff is None else check_positive_int(d_ff, "d_ff")
        rng = as_generator(rng)
        self.d_model, self.d_ff, self.norm, self.dropout = d_model, d_ff, norm, _check_rate(dropout)
        self.attention = MultiHeadAttention(d_model, n_heads, bias=bias, n_kv_heads=n_kv_heads, rng=rng,
                                            dtype=dtype)
        self.ffn = FeedForward(d_model, d_ff, activation=activation, bias=bias, rng=rng, dtype=dtype)
        self.norm1 = LayerNorm(d_model, eps=eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=eps, dtype=dtype)
        self.dtype = self.attention.dtype

    def __call__(self, x, *, mask=None, causal: bool = False, bias=None, head_mask=None,
                 training: bool = False, rng: np.random.Generator | None = None,
                 return_weights: bool = False):
        """Run the block on ``x``.

        Parameters
        ----------
        x : array_like, shape (batch, seq, d_model) or (seq, d_model)
        mask, causal, bias
            Passed to the attention layer (``bias``: e.g. a :class:`mha.positions.RelativePositionBias`).
        head_mask : array_like, shape (n_heads,), optional
            Passed to the attention layer: 0 switches a head's output off (ablation).
        training : bool, default False
            Apply dropout. Evaluation (the default) is deterministic.
        rng : numpy.random.Generator, optional
            Draws the dropout masks; required when ``training`` and ``dropout > 0``.
        return_weights : bool, default False
            Also return the attention weights, shape ``(batch, n_heads, seq, seq)``.

        Returns
        -------
        output : ndarray, same shape as ``x``
        weights : ndarray, only with ``return_weights=True``
        """
        if training and self.dropout > 0 and not isinstance(rng, np.random.Generator):
            raise TypeError("training with dropout > 0 needs rng=numpy.random.Generator to draw the masks, "
                            f"got {type(rng).__name__}")

        def drop(y):
            return dropout(y, self.dropout, rng, training=training)

        def attend(y):
            return self.attention(y, mask=mask, causal=causal, bias=bias, head_mask=head_mask,
                                  return_weights=True)

        x = check_features(x, "x", self.d_model)
        if self.norm == "pre":
            attended, weights = attend(self.norm1(x))
            x = x + drop(attended)  # the residual stream itself is never normalised
            x = x + drop(self.ffn(self.norm2(x)))
        else:
            attended, weights = attend(x)
            x = self.norm1(x + drop(attended))
            x = self.norm2(x + drop(self.ffn(x)))
        return (x, weights) if return_weights else x

    def submodules(self) -> dict[str, Module]:
        """The block's parts; its parameters are named ``"<part>.<array>"``, e.g. ``"attention.W_q"``."""
        return {"attention": self.attention, "ffn": self.ffn, "norm1": self.norm1, "norm2": self.norm2}

    def __repr__(self) -> str:
        return (f"TransformerBlock(d_model={self.d_model}, n_heads={self.attention.n_heads}, "
                f"d_ff={self.d_ff}, norm={self.norm!r}, dropout={self.dropout}, "
                f"activation={self.ffn.activation!r}, dtype={self.dtype.name})")


def block_parameter_count(d_model: int, n_heads: int, d_ff: int | None = None, *, bias: bool = True,
                          n_kv_heads: int | None = None) -> int:
    """Learned numbers in one :class:`TransformerBlock`, from the sizes alone.

    Attention (:func:`mha.cost.parameter_count`) + feed-forward ``2 d_model d_ff (+ d_ff + d_model)`` +
    two layer norms ``4 d_model``. With ``d_ff = 4 d_model`` and biases: ``12 d_model² + 13 d_model``.

    Examples
    --------
    >>> block_parameter_count(768, 12)  # one GPT-2 small layer
    7087872
    """
    d_model = check_positive_int(d_model, "d_model")
    d_ff = 4 * d_model if d_ff is None else check_positive_int(d_ff, "d_ff")
    attention = attention_parameter_count(d_model, n_heads, n_kv_heads=n_kv_heads, bias=bias)
    ffn = 2 * d_model * d_ff + (d_ff + d_model if bias else 0)
    return attention + ffn + 4 * d_model


