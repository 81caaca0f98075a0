"""The multi-head attention layer: projections, heads, attention, output projection.

``MultiHeadAttention`` is a thin class around pure functions: it holds the weight arrays, projects with
:func:`mha.module.linear`, cuts heads with :func:`mha.split_heads` and attends with
:func:`mha.scaled_dot_product_attention`. Weights multiply on the right: ``q = x @ W_q + b_q``.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, overload

import numpy as np

import mha.fast as fast
from mha.attention import attention_forward
from mha.efficient import KVCache
from mha.frameworks import FrameworkWeights
from mha.masks import causal_mask
from mha.module import Module, Parameter, glorot_uniform, linear
from mha.typing import ArrayLike, Attend, BoolArray, DTypeLike, FloatArray, Seed
from mha.validation import (
    as_generator,
    check_attention_mask,
    check_dtype_argument,
    check_flag,
    check_head_mask,
    check_layer_inputs,
    check_positive_int,
    check_score_bias,
)

__all__ = ["MultiHeadAttention", "LayerInputs", "LayerCache"]

#: A forward pass's (query, key, value); key and value are None for self-attention.
Inputs = tuple[FloatArray, "FloatArray | None", "FloatArray | None"]


class LayerInputs(NamedTuple):
    """A call's checked arguments, batched, in the order the layer's forward pass takes them.

    Parameters
    ----------
    query : ndarray, shape (batch, seq_q, d_model)
    key, value : ndarray, shape (batch, seq_k, kdim) and (batch, seq_k, vdim), or None
        None for self-attention.
    mask : bool ndarray broadcastable to (batch, n_heads, seq_q, seq_k), or None
    bias : ndarray broadcastable to (batch, n_heads, seq_q, seq_k), or None
    head_mask : ndarray, shape (n_heads,), or None

    Examples
    --------
    >>> inputs = LayerInputs(np.ones((2, 3, 8)), None, None, None, None, None)
    >>> inputs.query.shape, inputs.key is None
    ((2, 3, 8), True)
    """

    query: FloatArray
    key: FloatArray | None
    value: FloatArray | None
    mask: BoolArray | None
    bias: FloatArray | None
    head_mask: FloatArray | None


class LayerCache(NamedTuple):
    """What a forward pass keeps for its backward pass (:func:`mha.grad.multi_head_backward`).

    Parameters
    ----------
    layer : MultiHeadAttention
    inputs : tuple of (query, key, value), or None
        As given to the forward pass (key and value None for self-attention); None from decoding.
    q : ndarray, shape (batch, n_heads, seq_q, d_head)
        Before the ``1/√d_head`` scale.
    k, v : ndarray, shape (batch, n_heads, seq_k, d_head)
        Key/value heads repeated for the query heads they serve.
    weights : ndarray, shape (batch, n_heads, seq_q, seq_k), or None
        None from the annex's tiles.
    head_mask : ndarray, shape (n_heads,), or None
    concat : ndarray, shape (batch, seq_q, d_model)
        The heads' outputs side by side, head mask applied.

    Examples
    --------
    >>> _, cache = MultiHeadAttention(8, 2, rng=0).forward(np.ones((1, 3, 8)))
    >>> cache.q.shape, cache.weights.shape, cache.concat.shape
    ((1, 2, 3, 4), (1, 2, 3, 3), (1, 3, 8))
    """

    layer: MultiHeadAttention
    inputs: Inputs | None
    q: FloatArray
    k: FloatArray
    v: FloatArray
    weights: FloatArray | None
    head_mask: FloatArray | None
    concat: FloatArray


class MultiHeadAttention(Module, FrameworkWeights):
    """Multi-head attention with its own weights, NumPy only.

    Its weights go to and come from PyTorch's and Keras's layers with the methods of
    :class:`~mha.frameworks.FrameworkWeights` (``from_torch_state_dict``, ``to_keras_weights`` ...).

    Parameters
    ----------
    d_model : int
        Width of the queries and of the output; split into ``n_heads`` heads of
        ``d_head = d_model // n_heads``.
    n_heads : int
        Number of query heads; must divide ``d_model``.
    kdim, vdim : int, optional
        Widths of the key and value inputs (cross-attention from another model); default ``d_model``.
    bias : bool, default True
        Learn biases ``b_q, b_k, b_v, b_o`` (zeros at first). With False they are None.
    n_kv_heads : int, optional
        Number of key/value heads. ``n_heads`` (default) is plain multi-head attention, 1 is multi-query
        attention, anything dividing ``n_heads`` is grouped-query attention: query head ``i`` reads key/value
        head ``i // (n_heads // n_kv_heads)``.
    rng : numpy.random.Generator or int, optional
        Source of the initial weights (Glorot-uniform). Pass a Generator or seed for reproducible weights.
    dtype : np.float32 or np.float64, default np.float64

    Attributes
    ----------
    W_q : ndarray, shape (d_model, d_model)
    W_k : ndarray, shape (kdim, n_kv_heads * d_head)
    W_v : ndarray, shape (vdim, n_kv_heads * d_head)
    W_o : ndarray, shape (d_model, d_model)
    b_q, b_k, b_v, b_o : ndarray or None
        Shapes ``(d_model,)``, ``(n_kv_heads * d_head,)``, ``(n_kv_heads * d_head,)``, ``(d_model,)``.

    Raises
    ------
    ValueError
        A width below 1, ``n_heads`` not dividing ``d_model``, or ``n_kv_heads`` not dividing ``n_heads``.
    TypeError
        A width that is not an integer, a ``dtype`` other than float32 or float64, or an ``rng`` that is
        neither a Generator nor an integer seed.

    Examples
    --------
    >>> layer = MultiHeadAttention(d_model=16, n_heads=4, rng=0)
    >>> x = np.ones((2, 5, 16))
    >>> out, weights = layer(x, return_weights=True)
    >>> out.shape, weights.shape
    ((2, 5, 16), (2, 4, 5, 5))
    >>> layer(np.ones((3, 16)), np.ones((7, 16))).shape  # unbatched cross-attention
    (3, 16)
    """

    W_q: Parameter[FloatArray] = Parameter()
    W_k: Parameter[FloatArray] = Parameter()
    W_v: Parameter[FloatArray] = Parameter()
    W_o: Parameter[FloatArray] = Parameter()
    b_q: Parameter[FloatArray | None] = Parameter()
    b_k: Parameter[FloatArray | None] = Parameter()
    b_v: Parameter[FloatArray | None] = Parameter()
    b_o: Parameter[FloatArray | None] = Parameter()

    def __init__(self, d_model: int, n_heads: int, *, kdim: int | None = None, vdim: int | None = None,
                 bias: bool = True, n_kv_heads: int | None = None, rng: Seed = None,
                 dtype: DTypeLike = np.float64) -> None:
        d_model = check_positive_int(d_model, "d_model")
        n_heads = check_positive_int(n_heads, "n_heads")
        if d_model % n_heads:
            raise ValueError(
                f"d_model={d_model} is not divisible by n_heads={n_heads} "
                f"(d_head would be {d_model / n_heads:.4g})"
            )
        n_kv_heads = n_heads if n_kv_heads is None else check_positive_int(n_kv_heads, "n_kv_heads")
        if n_heads % n_kv_heads:
            raise ValueError(
                f"n_heads={n_heads} is not a multiple of n_kv_heads={n_kv_heads}: each key/value head must "
                "serve the same number of query heads"
            )
        self.d_model, self.n_heads, self.n_kv_heads = d_model, n_heads, n_kv_heads
        self.d_head = d_model // n_heads
        self.kdim = d_model if kdim is None else check_positive_int(kdim, "kdim")
        self.vdim = d_model if vdim is None else check_positive_int(vdim, "vdim")
        self.dtype = check_dtype_argument(dtype)
        self.bias = bool(bias)
        self._init_parameters(as_generator(rng))

    @property
    def kv_dim(self) -> int:
        """Width of the projected keys and values: ``n_kv_heads * d_head``."""
        return self.n_kv_heads * self.d_head

    @property
    def fused(self) -> bool:
        """True when q, k and v projections share one ``(d_model, d_model + 2 * kv_dim)`` matrix."""
        return self.kdim == self.d_model and self.vdim == self.d_model

    def _init_parameters(self, rng: np.random.Generator) -> None:
        d, kv = self.d_model, self.kv_dim

        def glorot(fan_in: int, fan_out: int) -> FloatArray:
            return glorot_uniform(rng, fan_in, fan_out, self.dtype)

        self._W_qkv: FloatArray | None
        self._b_qkv: FloatArray | None
        if self.fused:
            # One contiguous [W_q | W_k | W_v]: self-attention projects q, k and v in a single matmul.
            self._W_qkv = np.concatenate([glorot(d, d), glorot(d, kv), glorot(d, kv)], axis=1)
            W_q, W_k, W_v = self._W_qkv[:, :d], self._W_qkv[:, d:d + kv], self._W_qkv[:, d + kv:]
        else:
            self._W_qkv = None
            W_q, W_k, W_v = glorot(d, d), glorot(self.kdim, kv), glorot(self.vdim, kv)
        if self.bias:
            self._b_qkv = np.zeros(d + 2 * kv, dtype=self.dtype)
            b_q, b_k, b_v = self._b_qkv[:d], self._b_qkv[d:d + kv], self._b_qkv[d + kv:]
            b_o = np.zeros(d, dtype=self.dtype)
        else:
            self._b_qkv = b_q = b_k = b_v = b_o = None  # type: ignore[assignment]
        self._params = {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": glorot(d, d),
                        "b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o}

    def __deepcopy__(self, memo: dict[int, Any]) -> MultiHeadAttention:
        # The projections may be views of one fused array; a plain deepcopy would copy each view on its
        # own and lose that sharing. Build a fresh layer of the same kind and copy the weights into it.
        twin = type(self)(self.d_model, self.n_heads, kdim=self.kdim, vdim=self.vdim, bias=self.bias,
                          n_kv_heads=self.n_kv_heads, rng=0, dtype=self.dtype)
        for name, arr in self.parameters().items():
            setattr(twin, name, arr)
        memo[id(self)] = twin
        return twin

    @overload
    def __call__(self, query: ArrayLike, key: ArrayLike | None = None, value: ArrayLike | None = None, *,
                 mask: ArrayLike | None = None, causal: bool = False, bias: ArrayLike | None = None,
                 head_mask: ArrayLike | None = None, return_weights: Literal[False] = ...) -> FloatArray: ...
    @overload
    def __call__(self, query: ArrayLike, key: ArrayLike | None = None, value: ArrayLike | None = None, *,
                 mask: ArrayLike | None = None, causal: bool = False, bias: ArrayLike | None = None,
                 head_mask: ArrayLike | None = None, return_weights: Literal[True]
                 ) -> tuple[FloatArray, FloatArray]: ...
    @overload
    def __call__(self, query: ArrayLike, key: ArrayLike | None = None, value: ArrayLike | None = None, *,
                 mask: ArrayLike | None = None, causal: bool = False, bias: ArrayLike | None = None,
                 head_mask: ArrayLike | None = None, return_weights: bool
                 ) -> FloatArray | tuple[FloatArray, FloatArray]: ...
    def __call__(self, query: ArrayLike, key: ArrayLike | None = None, value: ArrayLike | None = None, *,
                 mask: ArrayLike | None = None, causal: bool = False, bias: ArrayLike | None = None,
                 head_mask: ArrayLike | None = None, return_weights: bool = False
                 ) -> FloatArray | tuple[FloatArray, FloatArray]:
        """Attend from ``query`` to ``key``/``value`` (to ``query`` itself when both are omitted).

        Parameters
        ----------
        query : array_like, shape (batch, seq_q, d_model) or (seq_q, d_model)
        key : array_like, shape (batch, seq_k, kdim) or (seq_k, kdim), optional
            Omit for self-attention.
        value : array_like, shape (batch, seq_k, vdim) or (seq_k, vdim), optional
            Defaults to ``key`` when only ``key`` is given (the usual encoder-output case).
        mask : bool array_like broadcastable to (batch, n_heads, seq_q, seq_k), optional
            True where a query may attend to a key. Fully masked queries get a zero attention output
            (so the layer returns ``b_o`` for them), never NaN.
        causal : bool, default False
            Also apply :func:`mha.causal_mask` (end-aligned).
        bias : array_like broadcastable to (batch, n_heads, seq_q, seq_k), optional
            Added to every head's scaled scores before the softmax (e.g. a relative-position bias).
        head_mask : array_like, shape (n_heads,), optional
            Multiplies each head's output before concatenation: 0 switches a head off (ablation).
        return_weights : bool, default False

        Returns
        -------
        output : ndarray, shape (batch, seq_q, d_model) or (seq_q, d_model)
        weights : ndarray, shape (batch, n_heads, seq_q, seq_k) or (n_heads, seq_q, seq_k)
            Per-head attention weights, only with ``return_weights=True``.

        Raises
        ------
        ValueError
            An input of the wrong shape (the message gives the shape expected), NaN or infinities in an
            input, inputs batched and unbatched at once, a mask, bias or head mask that does not fit the
            scores ``(batch, n_heads, seq_q, seq_k)``.
        TypeError
            An input that is not real numbers, a mask that is not boolean (``mask.astype(bool)``), a
            ``causal`` that is not True or False.

        Examples
        --------
        >>> layer = MultiHeadAttention(8, 2, rng=0)
        >>> x = np.random.default_rng(1).standard_normal((2, 5, 8))
        >>> out, weights = layer(x, causal=True, return_weights=True)
        >>> out.shape, weights.shape, bool(weights[0, 0, 0, 1:].any())  # the first token sees itself only
        ((2, 5, 8), (2, 2, 5, 5), False)
        """
        inputs, unbatched = self._checked(query, key, value, mask, causal, bias, head_mask)
        batch, seq_q = inputs.query.shape[:2]
        seq_k = seq_q if inputs.key is None else inputs.key.shape[1]
        large = fast.worth_it(batch * self.n_heads * seq_q * seq_k)
        if large and not return_weights:
            # Large, and no weights wanted: the annex runs this layer's own _forward on whole examples,
            # one thread each, with its attention step in cache-sized tiles (mha.fast): the same numbers.
            out, weights = fast.per_example(self._forward, inputs), None
        else:  # with weights, a large problem's attention step runs the same steps tile by tile
            out, cache = self._forward(*inputs, attend=fast.weighted_heads if large else None)
            weights = cache.weights
        if unbatched:
            out = out[0]
            weights = None if weights is None else weights[0]
        if not return_weights:
            return out
        assert weights is not None  # asked for: the textbook path above keeps them
        return out, weights

    def forward(self, query: ArrayLike, key: ArrayLike | None = None, value: ArrayLike | None = None, *,
                mask: ArrayLike | None = None, causal: bool = False, bias: ArrayLike | None = None,
                head_mask: ArrayLike | None = None
                ) -> tuple[FloatArray, LayerCache]:
        """The layer's output and all its backward pass needs (:func:`mha.grad.multi_head_backward`).

        Always the textbook computation (never the annex's tiles).

        Parameters
        ----------
        query, key, value, mask, causal, bias, head_mask
            As for :meth:`__call__`, with batched inputs: ``query`` of shape (batch, seq_q, d_model).

        Returns
        -------
        output : ndarray, shape (batch, seq_q, d_model)
        cache : LayerCache
            Its ``weights`` are the per-head attention weights, ``(batch, n_heads, seq_q, seq_k)``.

        Raises
        ------
        ValueError
            As :meth:`__call__`, and for unbatched inputs.
        TypeError
            As :meth:`__call__`.

        Examples
        --------
        >>> layer = MultiHeadAttention(8, 2, rng=0)
        >>> x = np.random.default_rng(1).standard_normal((2, 5, 8))
        >>> out, cache = layer.forward(x, causal=True)
        >>> np.allclose(out, layer(x, causal=True)), cache.weights.shape
        (True, (2, 2, 5, 5))
        """
        inputs, unbatched = self._checked(query, key, value, mask, causal, bias, head_mask)
        if unbatched:
            raise ValueError(f"forward needs batched inputs (batch, seq, dim), got query of shape "
                             f"{np.shape(query)}: add a batch axis with x[None]")
        return self._forward(*inputs)

    def _forward(self, query: FloatArray, key: FloatArray | None = None, value: FloatArray | None = None,
                 mask: BoolArray | None = None, bias: FloatArray | None = None,
                 head_mask: FloatArray | None = None, attend: Attend | None = None
                 ) -> tuple[FloatArray, LayerCache]:
        """Projections, heads, attention and output projection, on checked (batch, seq, dim) inputs.

        ``attend(q, k, v, mask, bias) -> (context, weights)`` is the attention step; by default the
        textbook :func:`mha.scaled_dot_product_attention` (the annex passes its tiled one).
        """
        q, k, v = self._project(query, key, value)  # (batch, seq_q, d_model), (batch, seq_k, kv_dim) twice
        return self._attend(q, k, v, mask, bias, head_mask, attend, inputs=(query, key, value))

    def _attend(self, q: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None,
                bias: FloatArray | None, head_mask: FloatArray | None, attend: Attend | None = None, *,
                inputs: Inputs | None = None) -> tuple[FloatArray, LayerCache]:
        """Heads attend, each to its own slice; their outputs meet again in the output projection."""
        (batch, seq_q, _), seq_k, d_head = q.shape, k.shape[1], self.d_head
        q = q.reshape(batch, seq_q, self.n_heads, d_head).swapaxes(1, 2)  # (batch, n_heads, seq_q, d_head)
        k = k.reshape(batch, seq_k, -1, d_head).swapaxes(1, 2)  # (batch, n_kv_heads, seq_k, d_head)
        v = v.reshape(batch, seq_k, -1, d_head).swapaxes(1, 2)  # (batch, n_kv_heads, seq_k, d_head)
        if self.n_kv_heads < self.n_heads:  # grouped-query: query head h reads key/value head h // group
            group = self.n_heads // self.n_kv_heads
            k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)  # (batch, n_heads, seq_k, d_head)
        weights: FloatArray | None
        if attend is None:
            context, weights = attention_forward(q, k, v, mask, bias)
        else:
            context, weights = attend(q, k, v, mask, bias)
        # context: (batch, n_heads, seq_q, d_head)
        if head_mask is not None:
            context = context * head_mask[:, None, None]  # scale (or switch off) each head's output
        concat = context.swapaxes(1, 2).reshape(batch, seq_q, self.d_model)  # (batch, seq_q, d_model)
        out = linear(concat, self.W_o, self.b_o)  # (batch, seq_q, d_model)
        return out, LayerCache(self, inputs, q, k, v, weights, head_mask, concat)

    def _checked(self, query: ArrayLike, key: ArrayLike | None, value: ArrayLike | None,
                 mask: ArrayLike | None, causal: bool, bias: ArrayLike | None, head_mask: ArrayLike | None
                 ) -> tuple[LayerInputs, bool]:
        """Validate a call's arguments once; return them as :class:`LayerInputs` and whether unbatched."""
        query, key, value, unbatched = check_layer_inputs(self, query, key, value)
        seq_k = query.shape[1] if key is None else key.shape[1]
        mask, bias, head_mask = self._checked_options(query, seq_k, mask, causal, bias, head_mask)
        return LayerInputs(query, key, value, mask, bias, head_mask), unbatched

    def _checked_options(self, query: FloatArray, seq_k: int, mask: ArrayLike | None, causal: bool,
                         bias: ArrayLike | None, head_mask: ArrayLike | None
                         ) -> tuple[BoolArray | None, FloatArray | None, FloatArray | None]:
        """A call's mask (``causal`` merged in), bias and head mask, checked against the checked ``query``.

        Also what a block checks once for the layer inside it (:class:`mha.TransformerBlock`).
        """
        batch, seq_q = query.shape[:2]
        scores_shape = (batch, self.n_heads, seq_q, seq_k)
        if mask is not None:
            mask = check_attention_mask(mask, scores_shape)
        if check_flag(causal, "causal"):
            mask = causal_mask(seq_q, seq_k) if mask is None else mask & causal_mask(seq_q, seq_k)
        if bias is not None:
            bias = check_score_bias(bias, scores_shape, query.dtype)
        if head_mask is not None:
            head_mask = check_head_mask(head_mask, self.n_heads, query.dtype)
        return mask, bias, head_mask

    def project(self, query: ArrayLike, key: ArrayLike | None = None, value: ArrayLike | None = None
                ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Project inputs to queries, keys and values (before splitting into heads).

        Self-attention uses one matmul against ``[W_q | W_k | W_v]`` (one contiguous array, of which
        ``W_q``, ``W_k`` and ``W_v`` are views) and a split; cross-attention with ``key is value`` one
        matmul against ``[W_k | W_v]``. Same numbers as three separate products, fewer passes over x.

        Parameters
        ----------
        query, key, value : array_like
            As for :meth:`__call__`.

        Returns
        -------
        q : ndarray, shape (batch, seq_q, d_model)
        k, v : ndarray, shape (batch, seq_k, n_kv_heads * d_head)
            Without a batch axis when the inputs had none.

        Raises
        ------
        ValueError
            An input of the wrong shape, with NaN or infinities, or batched and unbatched at once.
        TypeError
            An input that is not real numbers.

        Examples
        --------
        >>> layer = MultiHeadAttention(8, 2, rng=0)
        >>> x = np.ones((4, 8))
        >>> q, k, v = layer.project(x)
        >>> np.allclose(q, x @ layer.W_q + layer.b_q), np.allclose(v, x @ layer.W_v + layer.b_v)
        (True, True)
        """
        query, key, value, unbatched = check_layer_inputs(self, query, key, value)
        q, k, v = self._project(query, key, value)
        return (q[0], k[0], v[0]) if unbatched else (q, k, v)

    def _project(self, query: FloatArray, key: FloatArray | None, value: FloatArray | None
                 ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """:meth:`project` on checked, batched inputs (key and value None for self-attention)."""
        d, kv = self.d_model, self.n_kv_heads * self.d_head
        if key is None and self._W_qkv is not None:  # self-attention: one product, then a split
            qkv = linear(query, self._W_qkv, self._b_qkv)  # (batch, seq, d_model + 2 * kv_dim)
            return qkv[..., :d], qkv[..., d:d + kv], qkv[..., d + kv:]
        if key is not None and value is key and self._W_qkv is not None:  # [W_k | W_v] in one product
            q = linear(query, self.W_q, self.b_q)  # (batch, seq_q, d_model)
            kv_out = linear(key, self._W_qkv[:, d:], None if self._b_qkv is None else self._b_qkv[d:])
            return q, kv_out[..., :kv], kv_out[..., kv:]  # (batch, seq_k, kv_dim) each
        assert key is not None and value is not None  # check_layer_inputs asked for both (not fused)
        return linear(query, self.W_q, self.b_q), linear(key, self.W_k, self.b_k), \
            linear(value, self.W_v, self.b_v)

    def new_cache(self, batch: int = 1, *, capacity: int = 16) -> KVCache:
        """An empty :class:`~mha.efficient.KVCache` sized for this layer's key/value heads, in its dtype.

        Parameters
        ----------
        batch : int, default 1
            Sequences decoded side by side.
        capacity : int, default 16
            Tokens it holds before it first grows (it doubles when full).

        Returns
        -------
        KVCache

        Raises
        ------
        ValueError
            ``batch`` or ``capacity`` below 1.
        TypeError
            Either not an integer.

        Examples
        --------
        >>> cache = MultiHeadAttention(8, 2, rng=0, dtype=np.float32).new_cache(3)
        >>> cache.batch, cache.n_kv_heads, cache.d_head, cache.dtype, cache.length
        (3, 2, 4, dtype('float32'), 0)
        """
        return KVCache(batch, self.n_kv_heads, self.d_head, dtype=self.dtype, capacity=capacity)

    @overload
    def decode(self, x_new: ArrayLike, cache: KVCache, *,
               return_weights: Literal[False] = ...) -> FloatArray: ...
    @overload
    def decode(self, x_new: ArrayLike, cache: KVCache, *,
               return_weights: Literal[True]) -> tuple[FloatArray, FloatArray]: ...
    def decode(self, x_new: ArrayLike, cache: KVCache, *,
               return_weights: bool = False) -> FloatArray | tuple[FloatArray, FloatArray]:
        """Causal self-attention for new tokens, reusing the keys and values of earlier ones.

        Projects only ``x_new``, appends its keys and values to ``cache``, then lets each new token attend
        to every cached token up to itself. Feeding a sequence token by token gives the same outputs as one
        causal pass over the whole sequence.

        Parameters
        ----------
        x_new : array_like, shape (batch, n_new, d_model) or (n_new, d_model)
        cache : KVCache
            From :meth:`new_cache`; updated in place.
        return_weights : bool, default False

        Returns
        -------
        output : ndarray, shape (batch, n_new, d_model) or (n_new, d_model)
        weights : ndarray, shape (batch, n_heads, n_new, cache.length), only with ``return_weights=True``

        Raises
        ------
        ValueError
            ``x_new`` of the wrong shape or with NaN or infinities, or a cache made for another batch or
            other heads.
        TypeError
            ``cache`` is not a KVCache, or holds another dtype than the layer computes in.

        Examples
        --------
        >>> layer = MultiHeadAttention(8, 2, rng=0)
        >>> x = np.random.default_rng(1).standard_normal((5, 8))
        >>> cache = layer.new_cache()
        >>> steps = np.concatenate([layer.decode(x[t:t + 1], cache) for t in range(5)])
        >>> np.allclose(steps, layer(x, causal=True))
        True
        """
        x_new, unbatched = self._checked_step(x_new, cache)
        out, weights = self._decode(x_new, cache)
        if unbatched:
            out, weights = out[0], weights[0]
        return (out, weights) if return_weights else out

    def _checked_step(self, x_new: ArrayLike, cache: KVCache) -> tuple[FloatArray, bool]:
        """:meth:`decode`'s checks: ``x_new`` batched and promoted, and whether it came unbatched."""
        self._check_cache(cache)
        x_new, _, _, unbatched = check_layer_inputs(self, x_new, None, None)
        self._check_cache_fits(cache, x_new)
        return x_new, unbatched

    def _check_cache(self, cache: object) -> None:
        """Refuse anything but a KV cache with this layer's key/value heads."""
        if not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a KVCache (see layer.new_cache()), got {type(cache).__name__}")
        if (cache.n_kv_heads, cache.d_head) != (self.n_kv_heads, self.d_head):
            raise ValueError(
                f"cache holds {cache.n_kv_heads} heads of size {cache.d_head}, this layer needs "
                f"{self.n_kv_heads} of size {self.d_head}"
            )

    def _check_cache_fits(self, cache: KVCache, x_new: FloatArray) -> None:
        """Refuse a cache made for another batch, or holding another dtype than the step computes in."""
        if x_new.shape[0] != cache.batch:
            raise ValueError(f"x_new has batch {x_new.shape[0]} but the cache was made for {cache.batch}")
        if cache.dtype != x_new.dtype:  # keys and values would be rounded, or the output change dtype
            raise TypeError(
                f"the cache stores {cache.dtype} keys and values but this layer computes in {x_new.dtype}: "
                f"make the cache with layer.new_cache(...) or with dtype=np.{x_new.dtype} (a float64 cache "
                "would make a float32 layer's output float64, a float32 one would round a float64 layer's "
                "keys)"
            )

    def _decode(self, x_new: FloatArray, cache: KVCache) -> tuple[FloatArray, FloatArray]:
        """:meth:`decode` on checked input: the output and the weights, batched."""
        q, k, v = self._project(x_new, None, None)
        cache._store(k, v)  # the layer's own projections of checked input, in the cache's dtype
        mask = cache.attention_mask(q.shape[1])  # end-aligned causal (or the window of a rolling cache)
        out, layer_cache = self._attend(q, cache.flat_keys, cache.flat_values, mask, None, None)
        weights = layer_cache.weights
        assert weights is not None  # the textbook attention step keeps them
        return out, weights

    def __repr__(self) -> str:
        extra = ""
        if self.n_kv_heads != self.n_heads:
            extra += f", n_kv_heads={self.n_kv_heads}"
        if not self.fused:
            extra += f", kdim={self.kdim}, vdim={self.vdim}"
        return (f"MultiHeadAttention(d_model={self.d_model}, n_heads={self.n_heads}{extra}, "
                f"bias={self.bias}, dtype={self.dtype.name})")

