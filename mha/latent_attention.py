"""Multi-head latent attention (DeepSeek-V2): every head's keys and values rebuilt from one small latent.

A KV cache holds ``2 · n_kv_heads · d_head`` numbers per token and layer. Multi-head latent attention (MLA)
caches one vector ``c`` of ``kv_rank`` numbers instead, from which each head's keys and values are
*up-projected*, plus one small key ``k_rope`` of ``d_rope`` numbers that carries the rotary position
for all heads::

    c = x W_dkv                         k_i = c W_uk,i        v_i = c W_uv,i      (cached: c)
    k_rope = rotate(x W_kr)             (cached, shared by the heads)
    q_i = [ c_q W_uq,i , rotate(c_q W_qr,i) ]     with c_q = x W_dq
    score_i = q_i · [k_i, k_rope] / √(d_nope + d_rope)       (head i)

Why a separate rotated part? A rotation sits between ``W_uq`` and ``W_uk`` in ``q · k``, so the two could
not be merged; without rotation in the compressed part they can. Then ``(c_q W_uq,i) · (c W_uk,i) =
(c_q W_uq,i W_uk,iᵀ) · c``: the *absorbed* form scores each query directly against the cached latents, and
``Σ w c W_uv,i = (Σ w c) W_uv,i`` mixes latents before up-projecting. :meth:`LatentAttention.__call__`
computes either form (``absorbed=``); the tests hold them equal to 1e-10.
"""

from __future__ import annotations

import math

import numpy as np

from mha.attention import merge_heads, scaled_dot_product_attention, split_heads
from mha.masks import causal_mask
from mha.module import Module, Parameter, glorot_uniform, linear
from mha.positions import apply_rotary, rope_frequencies
from mha.typing import ArrayLike, DTypeLike, FloatArray, Seed
from mha.validation import (
    as_generator,
    check_dtype_argument,
    check_features,
    check_flag,
    check_positive_int,
)

__all__ = ["LatentAttention"]


class LatentAttention(Module):
    """Multi-head latent attention: a low-rank joint key/value latent and a decoupled rotary key.

    Parameters
    ----------
    d_model, n_heads : int
    kv_rank : int
        Width of the cached latent ``c`` (DeepSeek-V2: 512).
    d_nope : int
        Per-head width of the compressed (position-free) part of queries and keys (DeepSeek-V2: 128).
    d_rope : int
        Width of the rotary part, even (DeepSeek-V2: 64).
    d_v : int, optional
        Per-head value width; ``d_nope`` by default.
    q_rank : int, optional
        Width of the query latent ``c_q``; None projects queries from ``x`` directly (no ``W_dq``).
    base : float, default 10000.0
        RoPE base of the rotary part.
    rng : numpy.random.Generator or int, optional
    dtype : np.float32 or np.float64, default np.float64

    Raises
    ------
    ValueError
        A width below 1, an odd ``d_rope``, or a ``base`` that is not a finite number > 1.
    TypeError
        A width that is not an integer, a ``dtype`` other than float32 or float64, or a bad ``rng``.

    Attributes
    ----------
    W_dq : (d_model, q_rank) or None;  W_uq : (q_rank or d_model, n_heads · d_nope);
    W_qr : (q_rank or d_model, n_heads · d_rope);  W_dkv : (d_model, kv_rank);
    W_uk : (kv_rank, n_heads · d_nope);  W_uv : (kv_rank, n_heads · d_v);  W_kr : (d_model, d_rope);
    W_o : (n_heads · d_v, d_model)

    Examples
    --------
    >>> layer = LatentAttention(32, 4, kv_rank=8, d_nope=8, d_rope=4, q_rank=16, rng=0)
    >>> x = np.random.default_rng(1).standard_normal((2, 5, 32))
    >>> layer(x).shape, layer.cache_width  # 8 latent + 4 rotary numbers cached per token
    ((2, 5, 32), 12)
    >>> np.allclose(layer(x, absorbed=True), layer(x))
    True
    """

    W_dq: Parameter[FloatArray | None] = Parameter()
    W_uq: Parameter[FloatArray] = Parameter()
    W_qr: Parameter[FloatArray] = Parameter()
    W_dkv: Parameter[FloatArray] = Parameter()
    W_uk: Parameter[FloatArray] = Parameter()
    W_uv: Parameter[FloatArray] = Parameter()
    W_kr: Parameter[FloatArray] = Parameter()
    W_o: Parameter[FloatArray] = Parameter()

    def __init__(self, d_model: int, n_heads: int, *, kv_rank: int, d_nope: int, d_rope: int,
                 d_v: int | None = None, q_rank: int | None = None, base: float = 10000.0, rng: Seed = None,
                 dtype: DTypeLike = np.float64) -> None:
        self.d_model = check_positive_int(d_model, "d_model")
        self.n_heads = check_positive_int(n_heads, "n_heads")
        self.kv_rank = check_positive_int(kv_rank, "kv_rank")
        self.d_nope = check_positive_int(d_nope, "d_nope")
        self.d_rope = check_positive_int(d_rope, "d_rope")
        if self.d_rope % 2:
            raise ValueError(f"d_rope must be even (rotary features come in pairs), got {d_rope}")
        self.d_v = self.d_nope if d_v is None else check_positive_int(d_v, "d_v")
        self.q_rank = None if q_rank is None else check_positive_int(q_rank, "q_rank")
        self.frequencies = rope_frequencies(self.d_rope, base=base)  # checks base: a finite number > 1
        self.base, self.dtype = float(base), check_dtype_argument(dtype)
        rng = as_generator(rng)
        q_in, n = self.q_rank or self.d_model, self.n_heads

        def glorot(fan_in: int, fan_out: int) -> FloatArray:
            return glorot_uniform(rng, fan_in, fan_out, self.dtype)

        self._params = {
            "W_dq": None if self.q_rank is None else glorot(self.d_model, self.q_rank),
            "W_uq": glorot(q_in, n * self.d_nope), "W_qr": glorot(q_in, n * self.d_rope),
            "W_dkv": glorot(self.d_model, self.kv_rank), "W_uk": glorot(self.kv_rank, n * self.d_nope),
            "W_uv": glorot(self.kv_rank, n * self.d_v), "W_kr": glorot(self.d_model, self.d_rope),
            "W_o": glorot(n * self.d_v, self.d_model),
        }

    @property
    def cache_width(self) -> int:
        """Numbers cached per token: the latent and the shared rotary key, ``kv_rank + d_rope``."""
        return self.kv_rank + self.d_rope

    # ------------------------------------------------------------------ the parts
    def latent(self, x: ArrayLike, positions: ArrayLike | None = None,
               ) -> tuple[FloatArray, FloatArray]:
        """What a decoder caches for tokens ``x``: the latent ``c`` and the rotated shared key ``k_rope``.

        Parameters
        ----------
        x : array_like, shape (batch, seq, d_model)
        positions : array_like, broadcastable to (batch, 1, seq), optional
            Position of each token for the rotation; ``0 .. seq - 1`` by default.

        Returns
        -------
        c : ndarray, shape (batch, seq, kv_rank)
        k_rope : ndarray, shape (batch, 1, seq, d_rope)
            One rotary key for all heads (the axis of 1 broadcasts over them).

        Raises
        ------
        ValueError
            ``x`` without a last axis of ``d_model``, NaN or infinities, or ``positions`` that do not fit.
        TypeError
            ``x`` or ``positions`` not real numbers.

        Examples
        --------
        >>> layer = LatentAttention(16, 2, kv_rank=4, d_nope=4, d_rope=2, rng=0)
        >>> c, k_rope = layer.latent(np.ones((1, 5, 16)))
        >>> c.shape, k_rope.shape  # 4 + 2 numbers cached per token, whatever the number of heads
        ((1, 5, 4), (1, 1, 5, 2))
        """
        x = check_features(x, "x", self.d_model)
        c = linear(x, self.W_dkv)  # (batch, seq, kv_rank)
        k_rope = linear(x, self.W_kr)[:, None]  # (batch, 1, seq, d_rope): one key for every head
        return c, apply_rotary(k_rope, positions, frequencies=self.frequencies)

    def queries(self, x: ArrayLike, positions: ArrayLike | None = None,
                ) -> tuple[FloatArray, FloatArray]:
        """Each head's query, in its compressed part and its rotary part.

        Parameters
        ----------
        x : array_like, shape (batch, seq, d_model)
        positions : array_like, broadcastable to (batch, n_heads, seq), optional
            Position of each token for the rotation; ``0 .. seq - 1`` by default.

        Returns
        -------
        q_nope : ndarray, shape (batch, n_heads, seq, d_nope)
        q_rope : ndarray, shape (batch, n_heads, seq, d_rope)

        Raises
        ------
        ValueError
            ``x`` without a last axis of ``d_model``, NaN or infinities, or ``positions`` that do not fit.
        TypeError
            ``x`` or ``positions`` not real numbers.

        Examples
        --------
        >>> layer = LatentAttention(16, 2, kv_rank=4, d_nope=4, d_rope=2, q_rank=8, rng=0)
        >>> q_nope, q_rope = layer.queries(np.ones((1, 5, 16)))
        >>> q_nope.shape, q_rope.shape
        ((1, 2, 5, 4), (1, 2, 5, 2))
        """
        x = check_features(x, "x", self.d_model)
        c_q = x if self.W_dq is None else linear(x, self.W_dq)  # (batch, seq, q_rank)
        q_nope = split_heads(linear(c_q, self.W_uq), self.n_heads)  # (batch, n_heads, seq, d_nope)
        q_rope = apply_rotary(split_heads(linear(c_q, self.W_qr), self.n_heads), positions,
                              frequencies=self.frequencies)
        return q_nope, q_rope

    def heads(self, W: FloatArray) -> FloatArray:
        """An up-projection ``(kv_rank, n_heads · width)``, per head ``(n_heads, kv_rank, width)``.

        Parameters
        ----------
        W : ndarray, shape (kv_rank, n_heads * width)
            ``W_uk`` or ``W_uv``.

        Returns
        -------
        ndarray, shape (n_heads, kv_rank, width)
            A view of ``W``: head ``i`` is columns ``i * width`` to ``(i + 1) * width - 1``.

        Examples
        --------
        >>> layer = LatentAttention(16, 2, kv_rank=4, d_nope=4, d_rope=2, d_v=3, rng=0)
        >>> per_head = layer.heads(layer.W_uv)
        >>> per_head.shape, np.array_equal(per_head[1], layer.W_uv[:, 3:])
        ((2, 4, 3), True)
        """
        return W.reshape(self.kv_rank, self.n_heads, -1).transpose(1, 0, 2)  # (n_heads, kv_rank, width)

    # ------------------------------------------------------------------ forward
    def __call__(self, x: ArrayLike, *, causal: bool = True, absorbed: bool = False) -> FloatArray:
        """Self-attention over ``x`` (batch, seq, d_model), in the explicit or the absorbed form.

        ``absorbed=False`` up-projects every cached latent into per-head keys and values, then attends as
        usual. ``absorbed=True`` never builds them: queries are pulled down into the latent space
        (``q W_ukᵀ``), attend to the latents directly, and the mixed latent is up-projected by ``W_uv``
        once per query. Same numbers, to rounding.

        Parameters
        ----------
        x : array_like, shape (batch, seq, d_model)
        causal : bool, default True
        absorbed : bool, default False

        Returns
        -------
        ndarray, shape (batch, seq, d_model)

        Raises
        ------
        ValueError
            ``x`` not ``(batch, seq, d_model)``, or holding NaN or infinities.
        TypeError
            ``causal`` or ``absorbed`` not True or False.

        Examples
        --------
        >>> layer = LatentAttention(16, 2, kv_rank=4, d_nope=4, d_rope=2, rng=0)
        >>> x = np.random.default_rng(1).standard_normal((1, 5, 16))
        >>> bool(np.allclose(layer(x), layer(x, absorbed=True)))
        True
        """
        x = check_features(x, "x", self.d_model)
        if x.ndim != 3:
            raise ValueError(f"x must have shape (batch, seq, d_model), got {x.shape}")
        mask = causal_mask(x.shape[1]) if check_flag(causal, "causal") else None
        q_nope, q_rope = self.queries(x)
        c, k_rope = self.latent(x)
        scale = 1.0 / math.sqrt(self.d_nope + self.d_rope)  # the width of the full query, in both forms
        if not check_flag(absorbed, "absorbed"):
            k_nope = split_heads(linear(c, self.W_uk), self.n_heads)  # (batch, n_heads, seq, d_nope)
            v = split_heads(linear(c, self.W_uv), self.n_heads)  # (batch, n_heads, seq, d_v)
            k_rope = np.broadcast_to(k_rope, k_nope.shape[:-1] + (self.d_rope,))  # the shared key, per head
            q, k = np.concatenate([q_nope, q_rope], -1), np.concatenate([k_nope, k_rope], -1)
            context = scaled_dot_product_attention(q, k, v, mask, scale=scale)  # (batch, n_heads, seq, d_v)
        else:
            q_latent = q_nope @ np.swapaxes(self.heads(self.W_uk), -1, -2)  # (batch, n_heads, seq, kv_rank)
            q = np.concatenate([q_latent, q_rope], -1)  # (batch, n_heads, seq, kv_rank + d_rope)
            k = np.concatenate([c[:, None], k_rope], -1)  # (batch, 1, seq, kv_rank + d_rope): one for all
            mixed = scaled_dot_product_attention(q, k, c[:, None], mask, scale=scale)  # (.., seq, kv_rank)
            context = mixed @ self.heads(self.W_uv)  # (batch, n_heads, seq, d_v)
        return linear(merge_heads(context), self.W_o)  # (batch, seq, d_model)

    def __repr__(self) -> str:
        return (f"LatentAttention(d_model={self.d_model}, n_heads={self.n_heads}, kv_rank={self.kv_rank}, "
                f"d_nope={self.d_nope}, d_rope={self.d_rope}, d_v={self.d_v}, q_rank={self.q_rank}, "
                f"dtype={self.dtype.name})")
