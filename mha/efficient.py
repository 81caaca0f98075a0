"""Attention that saves memory or work: online-softmax (flash-style) blocks, and KV caches for decoding.

:func:`chunked_attention` is the algorithm on blocks, written to be read; a large problem takes the annex's
door (:mod:`mha.fast`), which runs the same online softmax on cache-sized tiles over threads.
:class:`KVCache` keeps every decoded token's keys and values; :class:`RollingKVCache` keeps only those a
sliding window (and a few sink tokens) still needs, so its memory stops growing.
"""

from __future__ import annotations

import math

import numpy as np

import mha.fast as fast
from mha.attention import check_qkv
from mha.masks import causal_mask, sliding_window_mask
from mha.typing import ArrayLike, BoolArray, DTypeLike, FloatArray, IntArray
from mha.validation import (
    as_float_array,
    cast_finite,
    check_bool_mask,
    check_broadcastable,
    check_dtype_argument,
    check_finite,
    check_flag,
    check_positive_int,
    check_score_maxima,
)

__all__ = ["chunked_attention", "KVCache", "RollingKVCache"]


def chunked_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None = None, *,
                      causal: bool = False, block_size: int = 256) -> FloatArray:
    """Exact attention computed block by block, never holding the full score matrix.

    Queries and keys are cut into blocks of ``block_size``. For each query block, key blocks are visited in
    turn while a running maximum, a running softmax denominator and a running weighted sum of values are
    kept ("online softmax"): when a new block raises the maximum, the earlier sums are rescaled by
    ``exp(old_max - new_max)``. The result equals :func:`mha.scaled_dot_product_attention` up to rounding,
    and at most ``block_size × block_size`` scores exist per head at any time.

    Parameters
    ----------
    q : array_like, shape (..., seq_q, d_head)
    k : array_like, shape (..., seq_k, d_head)
    v : array_like, shape (..., seq_k, d_v)
    mask : bool array_like broadcastable to (..., seq_q, seq_k), optional
        True where a query may attend; never materialised in full (blocks are sliced from a broadcast view).
    causal : bool, default False
        Apply the end-aligned causal mask, generated per block; key blocks entirely in the future are skipped.
    block_size : int, default 256
        Tile edge, >= 1.

    Returns
    -------
    ndarray, shape (..., seq_q, d_v), dtype of the inputs
        Fully masked queries get zeros, as in the full computation.

    Raises
    ------
    ValueError
        Shapes that do not fit, NaN or infinities in ``q``, ``k`` or ``v``, a mask that does not broadcast
        to the scores, ``block_size`` below 1, or scores that overflow the dtype.
    TypeError
        An input that is not real numbers, a mask that is not boolean, a ``causal`` that is not a bool or a
        ``block_size`` that is not an integer.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = (rng.standard_normal((2, 10, 4)) for _ in range(3))
    >>> from mha.attention import scaled_dot_product_attention
    >>> np.allclose(chunked_attention(q, k, v, block_size=3), scaled_dot_product_attention(q, k, v))
    True
    """
    q, k, v = check_qkv(q, k, v)
    causal = check_flag(causal, "causal")
    block_size = check_positive_int(block_size, "block_size")
    seq_q, seq_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])  # (batch, n_heads) usually
    if mask is not None:
        mask = check_broadcastable(check_bool_mask(mask), lead + (seq_q, seq_k))
        mask = np.broadcast_to(mask, lead + (seq_q, seq_k))  # a view: blocks are sliced, never copied whole
    if fast.worth_it(math.prod(lead) * seq_q * seq_k):
        return fast.chunked_attention(q, k, v, mask, causal=causal, block_size=block_size)  # tiles, threads
    q = q * q.dtype.type(1.0 / math.sqrt(q.shape[-1]))  # the scale folded into the queries
    offset = seq_k - seq_q  # end alignment: query i sits at position i + offset
    out = np.empty(lead + (seq_q, d_v), dtype=q.dtype)  # (..., seq_q, d_v)
    for i0 in range(0, seq_q, block_size):
        i1 = min(i0 + block_size, seq_q)
        n_q = i1 - i0
        run_max = np.full(lead + (n_q, 1), -np.inf, dtype=q.dtype)  # (..., n_q, 1): largest score so far
        run_sum = np.zeros(lead + (n_q, 1), dtype=q.dtype)  # (..., n_q, 1): sum of exp(score - run_max)
        acc = np.zeros(lead + (n_q, d_v), dtype=q.dtype)  # (..., n_q, d_v): those exps times the values
        last_key = min(seq_k, i1 + offset) if causal else seq_k  # keys the block's last query may see
        for j0 in range(0, last_key, block_size):
            j1 = min(j0 + block_size, seq_k)
            with np.errstate(over="ignore", invalid="ignore"):  # check_score_maxima names an overflow
                scores = q[..., i0:i1, :] @ np.swapaxes(k[..., j0:j1, :], -1, -2)  # (..., n_q, n_k): block²
            if mask is not None:
                np.copyto(scores, -np.inf, where=~mask[..., i0:i1, j0:j1])
            if causal and j1 - 1 > i0 + offset:  # this block reaches into some query's future
                future = np.arange(j0, j1) > np.arange(i0, i1)[:, None] + offset  # (n_q, n_k)
                np.copyto(scores, -np.inf, where=future)
            block_max = scores.max(axis=-1, keepdims=True)  # (..., n_q, 1)
            check_score_maxima(block_max)  # +inf or NaN: q · k overflowed the dtype
            new_max = np.maximum(run_max, block_max)
            shift = np.where(np.isneginf(new_max), 0, new_max)  # a query that has seen no key yet: 0
            weights = np.exp(scores - shift)  # this block's unnormalised weights
            rescale = np.exp(run_max - shift)  # shrinks the earlier sums when the maximum grew (0 at first)
            run_sum = run_sum * rescale + weights.sum(axis=-1, keepdims=True)
            acc = acc * rescale + weights @ v[..., j0:j1, :]
            run_max = new_max
        run_sum[run_sum == 0] = 1  # queries that saw no key keep a zero output
        out[..., i0:i1, :] = acc / run_sum
    return out


class KVCache:
    """Keys and values of the tokens decoded so far, for one attention layer.

    Autoregressive decoding feeds one new token at a time; its query must attend to every earlier token's
    key and value. Recomputing them costs a full forward pass per token; keeping them costs memory:
    ``2 * batch * length * n_kv_heads * d_head`` numbers (see :func:`mha.cost.kv_cache_bytes`).
    Storage grows by doubling, so appending is amortised O(1).

    Parameters
    ----------
    batch, n_kv_heads, d_head : int
    dtype : np.float32 or np.float64, default np.float64
    capacity : int, default 16
        Initial number of positions reserved.

    Raises
    ------
    ValueError
        A size or ``capacity`` below 1.
    TypeError
        A size that is not an integer, or a ``dtype`` other than float32 or float64.

    Examples
    --------
    >>> cache = KVCache(batch=1, n_kv_heads=2, d_head=4)
    >>> cache.append(np.ones((1, 3, 8)), np.ones((1, 3, 8)))
    >>> cache.length, cache.keys.shape
    (3, (1, 2, 3, 4))
    """

    def __init__(self, batch: int, n_kv_heads: int, d_head: int, *, dtype: DTypeLike = np.float64,
                 capacity: int = 16) -> None:
        self.batch = check_positive_int(batch, "batch")
        self.n_kv_heads = check_positive_int(n_kv_heads, "n_kv_heads")
        self.d_head = check_positive_int(d_head, "d_head")
        self.dtype = check_dtype_argument(dtype)
        capacity = check_positive_int(capacity, "capacity")
        kv_dim = self.n_kv_heads * self.d_head
        # Flat layout (batch, position, n_kv_heads * d_head): the projection output is appended as is.
        self._k = np.empty((self.batch, capacity, kv_dim), dtype=self.dtype)
        self._v = np.empty((self.batch, capacity, kv_dim), dtype=self.dtype)
        self.length = 0

    def append(self, k_new: ArrayLike, v_new: ArrayLike) -> None:
        """Add the projected keys and values of new tokens.

        They are stored in the cache's dtype; values that are not finite there (NaN, or a float64 1e39 in
        a float32 cache) are refused, as they would poison every later query's attention.

        Parameters
        ----------
        k_new, v_new : array_like, shape (batch, n_new, n_kv_heads * d_head)

        Raises
        ------
        ValueError
            A shape other than that, ``k_new`` and ``v_new`` of different shapes, or values not finite in the
            cache's dtype.
        TypeError
            ``k_new`` or ``v_new`` is not real numbers.

        Examples
        --------
        >>> cache = KVCache(batch=1, n_kv_heads=1, d_head=2)
        >>> cache.append(np.ones((1, 3, 2)), np.zeros((1, 3, 2)))
        >>> cache.append(np.ones((1, 1, 2)), np.zeros((1, 1, 2)))
        >>> cache.length, cache.flat_values.shape
        (4, (1, 4, 2))
        """
        expected = (self.batch, self.n_kv_heads * self.d_head)
        checked = []
        for name, arr in (("k_new", k_new), ("v_new", v_new)):
            arr = as_float_array(arr, name)
            if arr.ndim != 3 or (arr.shape[0], arr.shape[2]) != expected:
                raise ValueError(
                    f"{name} must have shape (batch={self.batch}, n_new, {expected[1]}), got {arr.shape}"
                )
            check_finite(arr, f"{name} (as {self.dtype})")
            checked.append(cast_finite(arr, self.dtype, f"{name} (as {self.dtype})"))
        k_new, v_new = checked
        if k_new.shape != v_new.shape:
            raise ValueError(f"k_new {k_new.shape} and v_new {v_new.shape} must have the same shape")
        self._store(k_new, v_new)

    def _store(self, k_new: FloatArray, v_new: FloatArray) -> None:
        """:meth:`append` on arrays already checked (the layer's decode: its inputs were)."""
        end = self.length + k_new.shape[1]
        if end > self._k.shape[1]:
            self._grow(max(end, 2 * self._k.shape[1]))
        self._k[:, self.length:end] = k_new
        self._v[:, self.length:end] = v_new
        self.length = end

    def _grow(self, capacity: int) -> None:
        for name in ("_k", "_v"):
            old = getattr(self, name)
            new = np.empty((self.batch, capacity, old.shape[2]), dtype=self.dtype)
            new[:, :self.length] = old[:, :self.length]
            setattr(self, name, new)

    @property
    def flat_keys(self) -> FloatArray:
        """Cached keys, shape (batch, length, n_kv_heads * d_head) (a view)."""
        return self._k[:, :self.length]

    @property
    def flat_values(self) -> FloatArray:
        """Cached values, shape (batch, length, n_kv_heads * d_head) (a view)."""
        return self._v[:, :self.length]

    @property
    def keys(self) -> FloatArray:
        """Cached keys per head, shape (batch, n_kv_heads, length, d_head) (a view)."""
        per_head = self.flat_keys.reshape(self.batch, self.length, self.n_kv_heads, self.d_head)
        return per_head.transpose(0, 2, 1, 3)  # (batch, n_kv_heads, length, d_head)

    @property
    def values(self) -> FloatArray:
        """Cached values per head, shape (batch, n_kv_heads, length, d_head) (a view)."""
        per_head = self.flat_values.reshape(self.batch, self.length, self.n_kv_heads, self.d_head)
        return per_head.transpose(0, 2, 1, 3)  # (batch, n_kv_heads, length, d_head)

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached keys and values (the used part, not the reserve)."""
        return 2 * self.batch * self.length * self.n_kv_heads * self.d_head * self.dtype.itemsize

    def attention_mask(self, n_new: int) -> BoolArray:
        """Which cached keys each of the ``n_new`` newest tokens may attend to: every one up to itself.

        End-aligned: the new tokens are the last ``n_new`` cached ones.

        Parameters
        ----------
        n_new : int
            The tokens just appended.

        Returns
        -------
        ndarray of bool, shape (n_new, length)

        Raises
        ------
        ValueError
            ``n_new`` below 1, or an empty cache.
        TypeError
            ``n_new`` is not an integer.

        Examples
        --------
        >>> cache = KVCache(batch=1, n_kv_heads=1, d_head=2)
        >>> cache.append(np.ones((1, 3, 2)), np.ones((1, 3, 2)))
        >>> cache.attention_mask(2).astype(int)
        array([[1, 1, 0],
               [1, 1, 1]])
        """
        return causal_mask(n_new, self.length)

    def __repr__(self) -> str:
        return (f"KVCache(batch={self.batch}, n_kv_heads={self.n_kv_heads}, d_head={self.d_head}, "
                f"length={self.length}, dtype={self.dtype.name})")


class RollingKVCache(KVCache):
    """A KV cache for sliding-window attention: the last ``window`` tokens, and maybe ``sinks`` first ones.

    A query sees itself and the ``window - 1`` tokens before it (:func:`mha.sliding_window_mask`), so
    older keys can never be read again: before storing new tokens, the cache drops every key older than
    the ``window - 1`` most recent ones (Mistral's rolling buffer). With ``sinks > 0`` it also keeps the
    stream's first ``sinks`` tokens for good (StreamingLLM's *attention sinks*). Either way its size
    stops growing: ``sinks + window`` positions while decoding one token at a time, however long the stream.

    The held keys are in stream order, sinks first; :attr:`positions` says which token each one is, and
    :meth:`attention_mask` which of them each new token may see. Decoding with it through
    :meth:`mha.MultiHeadAttention.decode` gives the outputs of one pass with the sliding-window mask
    (without sinks, or while the stream is shorter than ``sinks + window``).

    Parameters
    ----------
    batch, n_kv_heads, d_head : int
    window : int
        Tokens each query sees, counting itself.
    sinks : int, default 0
        First tokens of the stream kept for good.
    dtype : np.float32 or np.float64, default np.float64

    Raises
    ------
    ValueError
        A size or ``window`` below 1, or ``sinks`` below 0.
    TypeError
        A size that is not an integer, or a ``dtype`` other than float32 or float64.

    Examples
    --------
    >>> cache = RollingKVCache(batch=1, n_kv_heads=1, d_head=2, window=3, sinks=1)
    >>> for t in range(6):
    ...     cache.append(np.full((1, 1, 2), t), np.full((1, 1, 2), t))
    >>> cache.positions.tolist(), cache.length  # the sink, then the newest token and the two before it
    ([0, 3, 4, 5], 4)
    """

    def __init__(self, batch: int, n_kv_heads: int, d_head: int, *, window: int, sinks: int = 0,
                 dtype: DTypeLike = np.float64) -> None:
        self.window = check_positive_int(window, "window")
        self.sinks = check_positive_int(sinks, "sinks", minimum=0)
        super().__init__(batch, n_kv_heads, d_head, dtype=dtype, capacity=self.sinks + self.window)
        self.seen = 0  # tokens appended so far: the position of the next one

    def _store(self, k_new: np.ndarray, v_new: np.ndarray) -> None:
        self._evict()
        super()._store(k_new, v_new)
        self.seen += k_new.shape[1]

    def _evict(self) -> None:
        """Keep the sinks and the ``window - 1`` newest tokens: all that a future query can see."""
        keep = self.window - 1
        n_sinks = min(self.sinks, self.length)
        if self.length - n_sinks <= keep:
            return
        newest = slice(self.length - keep, self.length)
        for stored in (self._k, self._v):  # slide the newest down to just after the sinks
            stored[:, n_sinks:n_sinks + keep] = stored[:, newest].copy()
        self.length = n_sinks + keep

    @property
    def positions(self) -> IntArray:
        """The stream position of every held token, shape ``(length,)``: the sinks, then the newest ones."""
        n_sinks = min(self.sinks, self.length)
        recent = np.arange(self.seen - (self.length - n_sinks), self.seen)
        return np.concatenate([np.arange(n_sinks), recent])

    def attention_mask(self, n_new: int) -> BoolArray:
        """Which held keys each of the ``n_new`` newest tokens may see: its window, and the sinks.

        Positions within the window are contiguous in the cache, so the band of
        :func:`mha.sliding_window_mask` over the held keys is the band over the stream.

        Parameters
        ----------
        n_new : int
            The tokens just appended.

        Returns
        -------
        ndarray of bool, shape (n_new, length)

        Raises
        ------
        ValueError
            ``n_new`` below 1, or an empty cache.
        TypeError
            ``n_new`` is not an integer.

        Examples
        --------
        >>> cache = RollingKVCache(batch=1, n_kv_heads=1, d_head=2, window=2, sinks=1)
        >>> for t in range(4):
        ...     cache.append(np.ones((1, 1, 2)), np.ones((1, 1, 2)))
        >>> cache.positions.tolist(), cache.attention_mask(1).astype(int).tolist()
        ([0, 2, 3], [[1, 1, 1]])
        """
        return sliding_window_mask(n_new, self.length, window=self.window, sinks=min(self.sinks, self.length))

    def __repr__(self) -> str:
        return (f"RollingKVCache(batch={self.batch}, n_kv_heads={self.n_kv_heads}, d_head={self.d_head}, "
                f"window={self.window}, sinks={self.sinks}, length={self.length}, seen={self.seen}, "
                f"dtype={self.dtype.name})")
