"""The transformer block: multi-head attention and a feed-forward network, each wrapped in a residual
connection and a layer norm; and the decoder block of an encoder-decoder, which adds cross-attention.

Two placements of the norm::

    pre-norm  (GPT-2 and most models since):  x = x + Attn(LN(x));   x = x + FFN(LN(x))
    post-norm (the 2017 paper, BERT):         x = LN(x + Attn(x));   x = LN(x + FFN(x))

Dropout, when enabled, zeroes random entries of each sub-layer's output before it joins the residual
stream, during training only. Randomness always comes from a generator the caller passes in.

Every block has ``forward``, which returns its output and the caches of its parts (what
:func:`mha.grad.block_backward` needs); calling the block returns the output alone.
"""

from __future__ import annotations

import numbers
from typing import Any, Literal, NamedTuple, overload

import numpy as np

from mha.cost import parameter_count as attention_parameter_count
from mha.efficient import KVCache
from mha.feed_forward import FeedForward
from mha.layers import MultiHeadAttention
from mha.module import Module
from mha.normalization import LayerNorm
from mha.typing import ArrayLike, BoolArray, DTypeLike, FloatArray, Seed
from mha.validation import as_float_array, as_generator, check_features, check_positive_int, promote

__all__ = ["dropout", "TransformerBlock", "DecoderBlock", "BlockCache", "block_parameter_count"]


# ---------------------------------------------------------------------------------------- dropout
def _check_rate(rate: object) -> float:
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= float(rate) < 1:
        raise ValueError(f"dropout rate must be a number in [0, 1), got {rate!r}")
    return float(rate)


def dropout(x: ArrayLike, rate: float, rng: np.random.Generator | None = None, *,
            training: bool = True) -> FloatArray:
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

    Raises
    ------
    ValueError
        ``rate`` is not a number in [0, 1).
    TypeError
        ``x`` is not real numbers, or training with ``rate > 0`` without a Generator ``rng``.

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
    return x * _dropout_scale(x, rate, rng)


def _dropout_scale(x: FloatArray, rate: float, rng: object) -> FloatArray:
    """What inverted dropout multiplies ``x`` by: 0 with probability ``rate``, else ``1 / (1 - rate)``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "dropout while training needs rng=numpy.random.Generator (create it once with "
            f"np.random.default_rng(seed) and reuse it), got {type(rng).__name__}"
        )
    dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.float64
    keep = rng.random(x.shape, dtype=dtype) >= rate  # True with probability 1 - rate
    return np.where(keep, x.dtype.type(1.0 / (1.0 - rate)), x.dtype.type(0))


def _checked_stream(x: ArrayLike, d_model: int, dtype: np.dtype[Any], name: str = "x") -> FloatArray:
    """A block's input checked once at its door: finite, ``(batch, seq, d_model)``, promoted to ``dtype``."""
    x = check_features(x, name, d_model)
    if x.ndim == 2:
        raise ValueError(f"forward needs batched inputs (batch, seq, dim), got query of shape {x.shape}: "
                         f"add a batch axis with {name}[None]")
    if x.ndim != 3 or x.shape[1] == 0:
        raise ValueError(f"query must have shape (batch, seq, {d_model}) or (seq, {d_model}) with seq >= 1, "
                         f"got {x.shape}")
    return promote(x, dtype)


class BlockCache(NamedTuple):
    """What :func:`mha.grad.block_backward` needs from a block's forward pass.

    Parameters
    ----------
    norm : {"pre", "post", "decoder"}
    parts : dict of str to cache
        Each sub-layer's forward cache by its name: ``"attention"``, ``"ffn"``, ``"norm1"`` ...
    dropout : tuple of (ndarray or None)
        What each sub-layer's output was multiplied by (dropout); None when not training.

    Examples
    --------
    >>> _, cache = TransformerBlock(8, 2, rng=0).forward(np.ones((1, 3, 8)))
    >>> cache.norm, sorted(cache.parts), cache.dropout
    ('pre', ['attention', 'ffn', 'norm1', 'norm2'], (None, None))
    """

    norm: str  # "pre", "post" or "decoder"
    # sub-layer name ("attention", "ffn", "norm1", ...) -> the cache of its forward pass
    parts: dict[str, Any]
    # what each sub-layer's output was multiplied by (dropout), or None when not training
    dropout: tuple[FloatArray | None, ...]


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

    Raises
    ------
    ValueError
        A width below 1, ``n_heads`` not dividing ``d_model``, a ``norm``, ``activation`` or dropout rate
        not listed above.
    TypeError
        A width that is not an integer, a ``dtype`` other than float32 or float64, or a bad ``rng``.

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
                 n_kv_heads: int | None = None, rng: Seed = None, dtype: DTypeLike = np.float64) -> None:
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

    @overload
    def __call__(self, x: ArrayLike, *, mask: ArrayLike | None = None, causal: bool = False,
                 bias: ArrayLike | None = None, head_mask: ArrayLike | None = None, training: bool = False,
                 rng: np.random.Generator | None = None,
                 return_weights: Literal[False] = ...) -> FloatArray: ...
    @overload
    def __call__(self, x: ArrayLike, *, mask: ArrayLike | None = None, causal: bool = False,
                 bias: ArrayLike | None = None, head_mask: ArrayLike | None = None, training: bool = False,
                 rng: np.random.Generator | None = None,
                 return_weights: Literal[True]) -> tuple[FloatArray, FloatArray]: ...
    @overload
    def __call__(self, x: ArrayLike, *, mask: ArrayLike | None = None, causal: bool = False,
                 bias: ArrayLike | None = None, head_mask: ArrayLike | None = None, training: bool = False,
                 rng: np.random.Generator | None = None,
                 return_weights: bool) -> FloatArray | tuple[FloatArray, FloatArray]: ...
    def __call__(self, x: ArrayLike, *, mask: ArrayLike | None = None, causal: bool = False,
                 bias: ArrayLike | None = None, head_mask: ArrayLike | None = None, training: bool = False,
                 rng: np.random.Generator | None = None,
                 return_weights: bool = False) -> FloatArray | tuple[FloatArray, FloatArray]:
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

        Raises
        ------
        ValueError
            ``x`` not ``(batch, seq, d_model)`` or ``(seq, d_model)``, or holding NaN or infinities; a mask,
            bias or head mask that does not fit the scores.
        TypeError
            ``training=True`` with dropout and no ``rng`` Generator; a mask that is not boolean.

        Examples
        --------
        >>> block = TransformerBlock(8, 2, rng=0)
        >>> x = np.random.default_rng(1).standard_normal((5, 8))
        >>> out, weights = block(x, causal=True, return_weights=True)
        >>> out.shape, weights.shape
        ((5, 8), (2, 5, 5))
        """
        x = as_float_array(x, "x")
        unbatched = x.ndim == 2  # forward checks the rest
        out, cache = self.forward(x[None] if unbatched else x, mask=mask, causal=causal, bias=bias,
                                  head_mask=head_mask, training=training, rng=rng)
        weights = cache.parts["attention"].weights
        if unbatched:
            out, weights = out[0], weights[0]
        return (out, weights) if return_weights else out

    def forward(self, x: ArrayLike, *, mask: ArrayLike | None = None, causal: bool = False,
                bias: ArrayLike | None = None, head_mask: ArrayLike | None = None, training: bool = False,
                rng: np.random.Generator | None = None
                ) -> tuple[FloatArray, BlockCache]:
        """The block's output on batched ``x`` (batch, seq, d_model), and its parts' caches.

        Parameters
        ----------
        x : array_like, shape (batch, seq, d_model)
        mask, causal, bias, head_mask, training, rng
            As in :meth:`__call__`.

        Returns
        -------
        output : ndarray, shape (batch, seq, d_model)
        cache : BlockCache
            For :func:`mha.grad.block_backward`.

        Raises
        ------
        ValueError
            As :meth:`__call__`, and for unbatched ``x``.
        TypeError
            As :meth:`__call__`.

        Examples
        --------
        >>> block = TransformerBlock(8, 2, rng=0)
        >>> x = np.random.default_rng(1).standard_normal((2, 5, 8))
        >>> out, cache = block.forward(x, causal=True)
        >>> np.allclose(out, block(x, causal=True)), sorted(cache.parts)
        (True, ['attention', 'ffn', 'norm1', 'norm2'])
        """
        if training and self.dropout > 0 and not isinstance(rng, np.random.Generator):
            raise TypeError("training with dropout > 0 needs rng=numpy.random.Generator to draw the masks, "
                            f"got {type(rng).__name__}")
        x = _checked_stream(x, self.d_model, self.dtype)  # once, here: the parts below trust it
        mask, bias, head_mask = self.attention._checked_options(x, x.shape[1], mask, causal, bias, head_mask)
        parts: dict[str, Any] = {}
        scales: list[FloatArray | None] = []

        def drop(y: FloatArray) -> FloatArray:  # dropout on a sub-layer's output, remembering its scale
            scale = _dropout_scale(y, self.dropout, rng) if training and self.dropout > 0 else None
            scales.append(scale)
            return y if scale is None else y * scale

        def attend(y: FloatArray) -> FloatArray:
            out, parts["attention"] = self.attention._forward(y, mask=mask, bias=bias, head_mask=head_mask)
            return drop(out)

        if self.norm == "pre":
            y, parts["norm1"] = self.norm1._forward(x)
            x = x + attend(y)  # the residual stream itself is never normalised
            y, parts["norm2"] = self.norm2._forward(x)
            f, parts["ffn"] = self.ffn._forward(y)
            out: FloatArray = x + drop(f)
        else:
            x, parts["norm1"] = self.norm1._forward(x + attend(x))
            f, parts["ffn"] = self.ffn._forward(x)
            out, parts["norm2"] = self.norm2._forward(x + drop(f))
        return out, BlockCache(self.norm, parts, tuple(scales))

    def decode(self, x_new: ArrayLike, cache: KVCache) -> FloatArray:
        """The block on new tokens, their attention reading the keys and values of earlier ones in ``cache``.

        Causal self-attention, one token (or a few) at a time: feeding a sequence token by token gives the
        outputs of one causal :meth:`forward` over it. Evaluation only (no dropout).

        Parameters
        ----------
        x_new : array_like, shape (batch, n_new, d_model)
        cache : KVCache
            From ``block.attention.new_cache(batch)``; updated in place.

        Returns
        -------
        ndarray, shape (batch, n_new, d_model)

        Raises
        ------
        ValueError
            If ``x_new`` is not ``(batch, n_new, d_model)`` with finite entries, or ``cache`` holds other
            heads or another batch.
        TypeError
            If ``cache`` is not a :class:`~mha.efficient.KVCache`, or stores another dtype than the block
            computes in.

        Examples
        --------
        >>> block = TransformerBlock(8, 2, rng=0)
        >>> x = np.random.default_rng(1).standard_normal((1, 5, 8))
        >>> cache = block.attention.new_cache()
        >>> steps = np.concatenate([block.decode(x[:, t:t + 1], cache) for t in range(5)], axis=1)
        >>> np.allclose(steps, block(x, causal=True))
        True
        """
        self.attention._check_cache(cache)
        x = _checked_stream(x_new, self.d_model, self.dtype, name="x_new")
        self.attention._check_cache_fits(cache, x)
        if self.norm == "pre":
            x = x + self.attention._decode(self.norm1._forward(x)[0], cache)[0]
            return x + self.ffn._forward(self.norm2._forward(x)[0])[0]
        x = self.norm1._forward(x + self.attention._decode(x, cache)[0])[0]
        return self.norm2._forward(x + self.ffn._forward(x)[0])[0]

    def submodules(self) -> dict[str, Module]:
        """The block's parts; its parameters are named ``"<part>.<array>"``, e.g. ``"attention.W_q"``.

        Returns
        -------
        dict of str to Module

        Examples
        --------
        >>> list(TransformerBlock(8, 2, rng=0).submodules())
        ['attention', 'ffn', 'norm1', 'norm2']
        """
        return {"attention": self.attention, "ffn": self.ffn, "norm1": self.norm1, "norm2": self.norm2}

    def __repr__(self) -> str:
        return (f"TransformerBlock(d_model={self.d_model}, n_heads={self.attention.n_heads}, "
                f"d_ff={self.d_ff}, norm={self.norm!r}, dropout={self.dropout}, "
                f"activation={self.ffn.activation!r}, dtype={self.dtype.name})")


class DecoderBlock(Module):
    """Pre-norm decoder block: causal self-attention, cross-attention to the encoder, feed-forward.

    ``x = x + SelfAttn(LN₁ x);  x = x + CrossAttn(LN₂ x, memory);  x = x + FFN(LN₃ x)``

    Parameters
    ----------
    d_model, n_heads : int
    d_ff : int, optional
        Feed-forward width, ``4 * d_model`` by default.
    activation : {"relu", "gelu", "gelu_exact"}, default "relu"
    rng : numpy.random.Generator or int, optional
    dtype : np.float32 or np.float64

    Raises
    ------
    ValueError
        A width below 1, ``n_heads`` not dividing ``d_model``, or an unknown ``activation``.
    TypeError
        A width that is not an integer, a ``dtype`` other than float32 or float64, or a bad ``rng``.

    Examples
    --------
    >>> block = DecoderBlock(8, 2, rng=0)
    >>> out, cross = block(np.ones((2, 3, 8)), np.ones((2, 5, 8)), return_weights=True)
    >>> out.shape, cross.shape
    ((2, 3, 8), (2, 2, 3, 5))
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, *, activation: str = "relu",
                 rng: Seed = None, dtype: DTypeLike = np.float64) -> None:
        rng = as_generator(rng)
        d_model = check_positive_int(d_model, "d_model")
        d_ff = 4 * d_model if d_ff is None else check_positive_int(d_ff, "d_ff")
        self.d_model = d_model
        self.self_attention = MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
        self.cross_attention = MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
        self.ffn = FeedForward(d_model, d_ff, activation=activation, rng=rng, dtype=dtype)
        self.norm1, self.norm2, self.norm3 = (LayerNorm(d_model, dtype=dtype) for _ in range(3))

    def submodules(self) -> dict[str, Module]:
        """The parts, which name the parameters: ``self_attention.W_q``, ``norm3.gamma`` ...

        Returns
        -------
        dict of str to Module

        Examples
        --------
        >>> "cross_attention.W_k" in DecoderBlock(8, 2, rng=0).parameters()
        True
        """
        return {"self_attention": self.self_attention, "cross_attention": self.cross_attention,
                "ffn": self.ffn, "norm1": self.norm1, "norm2": self.norm2, "norm3": self.norm3}

    @overload
    def __call__(self, x: ArrayLike, memory: ArrayLike, *, memory_mask: ArrayLike | None = None,
                 return_weights: Literal[False] = ...) -> FloatArray: ...
    @overload
    def __call__(self, x: ArrayLike, memory: ArrayLike, *, memory_mask: ArrayLike | None = None,
                 return_weights: Literal[True]) -> tuple[FloatArray, FloatArray]: ...
    @overload
    def __call__(self, x: ArrayLike, memory: ArrayLike, *, memory_mask: ArrayLike | None = None,
                 return_weights: bool) -> FloatArray | tuple[FloatArray, FloatArray]: ...
    def __call__(self, x: ArrayLike, memory: ArrayLike, *, memory_mask: ArrayLike | None = None,
                 return_weights: bool = False) -> FloatArray | tuple[FloatArray, FloatArray]:
        """The block on target tokens ``x`` (batch, seq_q, d_model), reading the encoder's ``memory``.

        Parameters
        ----------
        x : array_like, shape (batch, seq_q, d_model)
        memory : array_like, shape (batch, seq_k, d_model)
            The encoder's output.
        memory_mask : bool array_like broadcastable to (batch, n_heads, seq_q, seq_k), optional
            True where a target position may read a source position (False on padding).
        return_weights : bool, default False

        Returns
        -------
        output : ndarray, shape (batch, seq_q, d_model)
        cross : ndarray, shape (batch, n_heads, seq_q, seq_k)
            The cross-attention weights, only with ``return_weights=True``.

        Raises
        ------
        ValueError
            ``x`` or ``memory`` of the wrong shape or batch, or holding NaN or infinities; a mask that does
            not fit the scores.

        Examples
        --------
        >>> block = DecoderBlock(8, 2, rng=0)
        >>> rng = np.random.default_rng(1)
        >>> out, cross = block(rng.standard_normal((1, 3, 8)), rng.standard_normal((1, 4, 8)),
        ...                    memory_mask=np.array([True, True, True, False]), return_weights=True)
        >>> out.shape, float(cross[..., 3].max())  # no weight on the masked source position
        ((1, 3, 8), 0.0)
        """
        out, cache = self.forward(x, memory, memory_mask=memory_mask)
        return (out, cache.parts["cross_attention"].weights) if return_weights else out

    def forward(self, x: ArrayLike, memory: ArrayLike, *, memory_mask: ArrayLike | None = None,
                mask: ArrayLike | None = None, causal: bool = True) -> tuple[FloatArray, BlockCache]:
        """The output and the parts' caches (:func:`mha.grad.decoder_block_backward`).

        Parameters
        ----------
        x : array_like, shape (batch, seq_q, d_model)
        memory : array_like, shape (batch, seq_k, d_model)
        memory_mask : bool array_like broadcastable to (batch, n_heads, seq_q, seq_k), optional
        mask : bool array_like broadcastable to (batch, n_heads, seq_q, seq_q), optional
            Added to the causal mask of the self-attention (e.g. target padding).
        causal : bool, default True

        Returns
        -------
        output : ndarray, shape (batch, seq_q, d_model)
        cache : BlockCache

        Raises
        ------
        ValueError
            As :meth:`__call__`.
        TypeError
            A mask that is not boolean, an input that is not real numbers.

        Examples
        --------
        >>> block, x, memory = DecoderBlock(8, 2, rng=0), np.ones((2, 3, 8)), np.ones((2, 5, 8))
        >>> out, cache = block.forward(x, memory)
        >>> np.allclose(out, block(x, memory)), cache.norm
        (True, 'decoder')
        """
        x, memory, mask, memory_mask = self._checked(x, memory, memory_mask, mask, causal)
        parts: dict[str, Any]
        parts = {}
        y, parts["norm1"] = self.norm1._forward(x)
        attended, parts["self_attention"] = self.self_attention._forward(y, mask=mask)
        x = x + attended
        y, parts["norm2"] = self.norm2._forward(x)
        attended, parts["cross_attention"] = self.cross_attention._forward(y, memory, memory,
                                                                          mask=memory_mask)
        x = x + attended
        y, parts["norm3"] = self.norm3._forward(x)
        f, parts["ffn"] = self.ffn._forward(y)
        return x + f, BlockCache("decoder", parts, (None, None, None))

    def decode(self, x_new: ArrayLike, memory: ArrayLike, cache: KVCache, *,
               memory_mask: ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
        """One step for new target tokens; the keys and values of earlier ones come from ``cache``.

        Parameters
        ----------
        x_new : array_like, shape (batch, n_new, d_model)
        memory : array_like, shape (batch, seq_k, d_model)
        cache : KVCache
            From ``block.self_attention.new_cache(batch)``; updated in place.
        memory_mask : bool array_like broadcastable to (batch, n_heads, n_new, seq_k), optional

        Returns
        -------
        output : ndarray, shape (batch, n_new, d_model)
        cross : ndarray, shape (batch, n_heads, n_new, seq_k)

        Raises
        ------
        ValueError
            As :meth:`forward`, or a ``cache`` of other heads or another batch.
        TypeError
            As :meth:`forward`, or ``cache`` is not a :class:`~mha.efficient.KVCache` of the block's dtype.

        Examples
        --------
        >>> block, x = DecoderBlock(8, 2, rng=0), np.random.default_rng(0).standard_normal((1, 3, 8))
        >>> memory, cache = np.ones((1, 4, 8)), block.self_attention.new_cache()
        >>> steps = [block.decode(x[:, t:t + 1], memory, cache)[0] for t in range(3)]
        >>> np.allclose(np.concatenate(steps, axis=1), block(x, memory))
        True
        """
        self.self_attention._check_cache(cache)
        x, memory, _, memory_mask = self._checked(x_new, memory, memory_mask, None, False, name="x_new")
        self.self_attention._check_cache_fits(cache, x)
        x = x + self.self_attention._decode(self.norm1._forward(x)[0], cache)[0]
        attended, cross = self.cross_attention._forward(self.norm2._forward(x)[0], memory, memory,
                                                        mask=memory_mask)
        x = x + attended
        assert cross.weights is not None  # the textbook attention step keeps them
        return x + self.ffn._forward(self.norm3._forward(x)[0])[0], cross.weights

    def _checked(self, x: ArrayLike, memory: ArrayLike, memory_mask: ArrayLike | None,
                 mask: ArrayLike | None, causal: bool, name: str = "x"
                 ) -> tuple[FloatArray, FloatArray, BoolArray | None, BoolArray | None]:
        """The block's arguments checked once: the target stream and the memory in one dtype, and masks."""
        x = _checked_stream(x, self.d_model, self.self_attention.dtype, name=name)
        mask, _, _ = self.self_attention._checked_options(x, x.shape[1], mask, causal, None, None)
        cross, _ = self.cross_attention._checked(x, memory, None, memory_mask, False, None, None)
        assert cross.key is not None  # given: cross-attention
        return cross.query, cross.key, mask, cross.mask


def block_parameter_count(d_model: int, n_heads: int, d_ff: int | None = None, *, bias: bool = True,
                          n_kv_heads: int | None = None) -> int:
    """Learned numbers in one :class:`TransformerBlock`, from the sizes alone.

    Attention (:func:`mha.cost.parameter_count`) + feed-forward ``2 d_model d_ff (+ d_ff + d_model)`` +
    two layer norms ``4 d_model``. With ``d_ff = 4 d_model`` and biases: ``12 d_model² + 13 d_model``.

    Parameters
    ----------
    d_model, n_heads : int
    d_ff : int, optional
        ``4 * d_model`` by default.
    bias : bool, default True
    n_kv_heads : int, optional

    Returns
    -------
    int

    Raises
    ------
    ValueError
        A size below 1, or head counts that do not divide (as :func:`mha.cost.parameter_count` says).
    TypeError
        A size that is not an integer.

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


