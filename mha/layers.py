"""The multi-head attention layer: projections, heads, attention, output projection.

``MultiHeadAttention`` is a thin class around pure functions: it holds the weight arrays and calls
:func:`mha.attention.attend`. Weights multiply on the right, as the lessons write them: ``q = x @ W_q + b_q``.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from mha._features import linear
from mha._kernels import split_batch
from mha._layer_inputs import check_head_mask, check_inputs, combine_masks
from mha._parameters import Module, Parameter, glorot_uniform
from mha._validation import (
    as_generator,
    check_dtype_argument,
    check_positive_int,
    check_score_bias,
)
from mha.attention import attend
from mha.efficient import KVCache
from mha.frameworks import read_keras_weights, read_torch_state_dict, to_keras_weights, to_torch_state_dict
from mha.masks import causal_mask

__all__ = ["MultiHeadAttention"]


class MultiHeadAttention(Module):
    """Multi-head attention with its own weights, NumPy only.

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
        attention, anything dividing ``n_heads`` is grouped-query attention: query head ``h`` reads key/value
        head ``h // (n_heads // n_kv_heads)``.
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

    W_q = Parameter()
    W_k = Parameter()
    W_v = Parameter()
    W_o = Parameter()
    b_q = Parameter()
    b_k = Parameter()
    b_v = Parameter()
    b_o = Parameter()

    def __init__(self, d_model, n_heads, *, kdim=None, vdim=None, bias=True, n_kv_heads=None, rng=None,
                 dtype=np.float64):
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

    # ------------------------------------------------------------------ parameters
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

        def glorot(fan_in, fan_out):
            return glorot_uniform(rng, fan_in, fan_out, self.dtype)

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
            self._b_qkv = b_q = b_k = b_v = b_o = None
        self._params = {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": glorot(d, d),
                        "b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o}

    def __deepcopy__(self, memo) -> MultiHeadAttention:
        # The projections may be views of one fused array; a plain deepcopy would copy each view on its
        # own and lose that sharing. Build a fresh layer of the same kind and copy the weights into it.
        twin = type(self)(self.d_model, self.n_heads, kdim=self.kdim, vdim=self.vdim, bias=self.bias,
                          n_kv_heads=self.n_kv_heads, rng=0, dtype=self.dtype)
        for name, arr in self.parameters().items():
            setattr(twin, name, arr)
        memo[id(self)] = twin
        return twin

    # ------------------------------------------------------------------ forward
    def __call__(self, query, key=None, value=None, *, mask=None, causal=False, bias=None, head_mask=None,
                 return_weights=False):
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
        """
        query, key, value, unbatched = check_inputs(self, query, key, value)
        batch, seq_q = query.shape[:2]
        seq_k = seq_q if key is None else key.shape[1]
        mask = combine_masks(self, mask, causal, batch, seq_q, seq_k)
        bias = check_score_bias(bias, (batch, self.n_heads, seq_q, seq_k), query.dtype)
        head_mask = check_head_mask(self, head_mask, query.dtype)
        mask4 = None if mask is None else mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
        bias4 = None if bias is None else bias.reshape((1,) * (4 - bias.ndim) + bias.shape)
        # Large inputs: whole examples spread over threads (see mha._kernels); the numbers do not change.
        operands = {"query": query, "key": key, "value": None if value is key else value,
                    "mask": mask4, "bias": bias4}  # value None: the same array as key
        result = split_batch(partial(self._forward, head_mask=head_mask, return_weights=return_weights),
                             batch, operands, (batch, seq_q, self.d_model),
                             (batch, self.n_heads, seq_q, seq_k), query.dtype, return_weights)
        if result is None:
            result = self._forward(query, key, value, mask, bias, head_mask, return_weights)
        out, weights = result
        if unbatched:
            out = out[0]
            weights = None if weights is None else weights[0]
        return (out, weights) if return_weights else out

    def project(self, query, key=None, value=None, *, fused=True):
        """Project inputs to queries, keys and values (before splitting into heads).

        With ``fused=True`` self-attention uses one matmul against ``[W_q | W_k | W_v]`` and a split, and
        cross-attention with ``key is value`` one matmul against ``[W_k | W_v]``; ``fused=False`` does three
        separate matmuls. Both give the same numbers.

        Returns
        -------
        q : ndarray, shape (batch, seq_q, d_model)
        k, v : ndarray, shape (batch, seq_k, n_kv_heads * d_head)
            Without a batch axis when the inputs had none.

        Examples
        --------
        >>> layer = MultiHeadAttention(8, 2, rng=0)
        >>> x = np.ones((4, 8))
        >>> [np.allclose(a, b) for a, b in zip(layer.project(x), layer.project(x, fused=False))]
        [True, True, True]
        """
        query, key, value, unbatched = check_inputs(self, query, key, value)
        projections = self._project(query, key, value, fused=fused)
        return tuple(p[0] for p in projections) if unbatched else projections

    def _project(self, query, key=None, value=None, *, fused=True):
        d, kv = self.d_model, self.kv_dim
        if fused and self.fused and key is None and value is None:
            qkv = linear(query, self._W_qkv, self._b_qkv)  # (batch, seq, d_model + 2 * kv_dim)
            return qkv[..., :d], qkv[..., d:d + kv], qkv[..., d + kv:]
        key = query if key is None else key
        value = key if value is None else value
        q = linear(query, self.W_q, self.b_q)
        if fused and self.fused and key is value:
            b_kv = self._b_qkv[d:] if self.bias else None
            kv_out = linear(key, self._W_qkv[:, d:], b_kv)  # (batch, seq_k, 2 * kv_dim)
            return q, kv_out[..., :kv], kv_out[..., kv:]
        return q, linear(key, self.W_k, self.b_k), linear(value, self.W_v, self.b_v)

    def _forward(self, query, key, value, mask, bias, head_mask, return_weights, scores_out=None):
        """Projections, attention and output projection on validated (batch, seq, dim) inputs."""
        q, k, v = self._project(query, key, value)
        return self._attend_heads(q, k, v, mask, return_weights, bias=bias, head_mask=head_mask,
                                  scores_out=scores_out)

    def _attend_heads(self, q, k, v, mask, return_weights, *, bias=None, head_mask=None, scores_out=None):
        """Heads attend in one batched matmul; grouped key/value heads broadcast, never copied."""
        batch, seq_q, _ = q.shape
        seq_k = k.shape[1]
        n_kv, group, d_head = self.n_kv_heads, self.n_heads // self.n_kv_heads, self.d_head
        q = q * q.dtype.type(1.0 / math.sqrt(d_head))  # fold the scale into q: seq_q * d_model multiplies
        q5 = q.reshape(batch, seq_q, n_kv, group, d_head).transpose(0, 2, 3, 1, 4)
        # q5: (batch, n_kv_heads, group, seq_q, d_head); query head h = kv_head * group + g
        k5 = k.reshape(batch, seq_k, n_kv, 1, d_head).transpose(0, 2, 3, 1, 4)
        v5 = v.reshape(batch, seq_k, n_kv, 1, d_head).transpose(0, 2, 3, 1, 4)
        # k5, v5: (batch, n_kv_heads, 1, seq_k, d_head), shared by the group's query heads
        concat = np.empty((batch, seq_q, self.d_model), dtype=q.dtype)  # (batch, seq_q, n_heads * d_head)
        heads_out = concat.reshape(batch, seq_q, n_kv, group, d_head).transpose(0, 2, 3, 1, 4)
        # heads_out: (batch, n_kv_heads, group, seq_q, d_head), a view: each head writes its own columns
        scores5 = None if scores_out is None else scores_out.reshape(batch, n_kv, group, seq_q, seq_k)
        _, w5 = attend(q5, k5, v5, self._to_5d(mask), self._to_5d(bias), return_weights=return_weights,
                       out=heads_out, scores_out=scores5, keep_scores=False)
        if head_mask is not None:
            heads_out *= head_mask.reshape(n_kv, group, 1, 1)  # scale each head's (seq_q, d_head) output
        out = linear(concat, self.W_o, self.b_o)  # (batch, seq_q, d_model)
        weights = None if w5 is None else w5.reshape(batch, self.n_heads, seq_q, seq_k)
        return out, weights

    def _to_5d(self, mask):
        """Reshape a (batch|1, n_heads|1, seq_q|1, seq_k|1) mask or bias to the grouped 5-D layout."""
        if mask is None:
            return None
        m4 = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)  # (batch|1, n_heads|1, seq_q|1, seq_k|1)
        if m4.shape[1] == 1:
            return m4[:, :, None]  # (batch|1, 1, 1, seq_q|1, seq_k|1)
        group = self.n_heads // self.n_kv_heads
        return m4.reshape(m4.shape[0], self.n_kv_heads, group, *m4.shape[2:])

    # ------------------------------------------------------------------ decoding
    def new_cache(self, batch: int = 1, *, capacity: int = 16) -> KVCache:
        """An empty :class:`~mha.efficient.KVCache` sized for this layer's key/value heads."""
        return KVCache(batch, self.n_kv_heads, self.d_head, dtype=self.dtype, capacity=capacity)

    def decode(self, x_new, cache: KVCache, *, return_weights=False):
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

        Examples
        --------
        >>> layer = MultiHeadAttention(8, 2, rng=0)
        >>> x = np.random.default_rng(1).standard_normal((5, 8))
        >>> cache = layer.new_cache()
        >>> steps = np.concatenate([layer.decode(x[t:t + 1], cache) for t in range(5)])
        >>> np.allclose(steps, layer(x, causal=True))
        True
        """
        if not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a KVCache (see layer.new_cache()), got {type(cache).__name__}")
        if (cache.n_kv_heads, cache.d_head) != (self.n_kv_heads, self.d_head):
            raise ValueError(
                f"cache holds {cache.n_kv_heads} heads of size {cache.d_head}, this layer needs "
                f"{self.n_kv_heads} of size {self.d_head}"
            )
        x_new, _, _, unbatched = check_inputs(self, x_new, None, None)
        if x_new.shape[0] != cache.batch:
            raise ValueError(f"x_new has batch {x_new.shape[0]} but the cache was made for {cache.batch}")
        q, k, v = self._project(x_new)
        cache._store(k, v)  # checked: they come from checked inputs
        mask = causal_mask(q.shape[1], cache.length)  # end-aligned: new tokens come last
        out, weights = self._attend_heads(q, cache.flat_keys, cache.flat_values, mask, return_weights)
        if unbatched:
            out = out[0]
            weights = None if weights is None else weights[0]
        return (out, weights) if return_weights else out

    # ------------------------------------------------------------------ PyTorch interchange
    @classmethod
    def from_torch_state_dict(cls, state_dict, n_heads: int) -> MultiHeadAttention:
        """Build a layer from ``torch.nn.MultiheadAttention.state_dict()`` (NumPy arrays; no torch import).

        Returns an instance of ``cls``, so a subclass gets a subclass back. ``n_heads`` is not stored in a
        state dict; it must divide ``d_model``. See :func:`mha.frameworks.read_torch_state_dict`.
        """
        config, weights = read_torch_state_dict(state_dict)
        layer = cls(n_heads=n_heads, rng=0, **config)
        for name, value in weights.items():
            setattr(layer, name, value)
        return layer

    def to_torch_state_dict(self) -> dict[str, np.ndarray]:
        """This layer's weights with the keys and layouts of ``nn.MultiheadAttention.state_dict()``.

        See :func:`mha.frameworks.to_torch_state_dict`.
        """
        return to_torch_state_dict(self)

    # ------------------------------------------------------------------ Keras interchange
    @classmethod
    def from_keras_weights(cls, weights) -> MultiHeadAttention:
        """Build a layer from ``keras.layers.MultiHeadAttention.get_weights()`` (no Keras import).

        ``n_heads``, ``n_kv_heads`` and the widths are read off the kernels, so the weights of
        ``keras.layers.GroupQueryAttention`` give a grouped-query layer. See
        :func:`mha.frameworks.read_keras_weights`.
        """
        config, arrays = read_keras_weights(weights)
        layer = cls(rng=0, **config)
        for name, value in arrays.items():
            setattr(layer, name, value)
        return layer

    def to_keras_weights(self) -> list[np.ndarray]:
        """This layer's weights as ``keras.layers.MultiHeadAttention.get_weights()`` lists them
        (``keras.layers.GroupQueryAttention``'s for a grouped-query layer).

        See :func:`mha.frameworks.to_keras_weights`.
        """
        return to_keras_weights(self)

    def __repr__(self) -> str:
        extra = ""
        if self.n_kv_heads != self.n_heads:
            extra += f", n_kv_heads={self.n_kv_heads}"
        if not self.fused:
            extra += f", kdim={self.kdim}, vdim={self.vdim}"
        return (f"MultiHeadAttention(d_model={self.d_model}, n_heads={self.n_heads}{extra}, "
                f"bias={self.bias}, dtype={self.dtype.name})")
