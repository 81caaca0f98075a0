"""The attention step as current models configure it: RoPE inside the layer, QK-norm, soft-capping.

:class:`ModernAttention` is :class:`mha.MultiHeadAttention` with a different attention step. Projections,
heads, grouped key/value heads, the output projection and KV-cache decoding are the parent's own code;
only what happens between "split into heads" and "softmax" changes, in :meth:`ModernAttention.prepare`
and in :func:`mha.scaled_dot_product_attention`'s ``softcap``::

    q, k = rms_norm(q, g_q), rms_norm(k, g_k)            # QK-norm (OLMo 2, Gemma 3, Qwen3)
    q, k = rotate(q, positions), rotate(k, positions)    # RoPE (Llama, Mistral, Qwen, Gemma ...)
    scores = softcap · tanh(q kᵀ / √d_head / softcap)    # soft-capping (Gemma 2)

Positions are counted in the layer's own frame: the ``seq_k`` keys it is given are positions
``0 .. seq_k - 1`` and the queries the last ``seq_q`` of them. A score depends on the offset between
query and key only, so a cache that slides (:class:`mha.RollingKVCache`) changes no score, and one that
keeps sink tokens places them just before its window, as StreamingLLM does.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, overload

import numpy as np

from mha.attention import attention_forward, soft_cap
from mha.layers import Inputs, LayerCache, MultiHeadAttention
from mha.module import Parameter
from mha.normalization import RMSNormCache, rms_norm
from mha.positions import apply_rotary, rope_frequencies
from mha.rope_scaling import RotaryTable
from mha.typing import ArrayLike, Attend, BoolArray, DTypeLike, FloatArray, IntArray, Seed
from mha.validation import check_flag, check_positive_real

__all__ = ["ModernAttention", "PreparedCache"]


class PreparedCache(NamedTuple):
    """What :meth:`ModernAttention.prepare` did: for :func:`mha.grad.attention_step_backward`.

    Parameters
    ----------
    norms : tuple of two RMSNormCache, or None
        QK-norm's caches of the queries and keys; None without QK-norm.
    positions : tuple of two int ndarray, or None
        The rotation's query and key positions; None without RoPE.
    factor : float
        YaRN's attention factor (1.0 without).

    Examples
    --------
    >>> layer = ModernAttention(8, 2, rope=True, rng=0)
    >>> _, _, cache = layer.prepare(np.ones((1, 2, 3, 4)), np.ones((1, 2, 3, 4)), return_cache=True)
    >>> cache.norms, cache.positions[0].tolist(), cache.factor
    (None, [0, 1, 2], 1.0)
    """

    norms: tuple[RMSNormCache, RMSNormCache] | None  # QK-norm's caches of the queries and keys, or None
    positions: tuple[IntArray, IntArray] | None  # the rotation's query and key positions, or None
    factor: float  # YaRN's attention factor (1.0 without)


class ModernAttention(MultiHeadAttention):
    """Multi-head attention whose attention step can rotate, normalise and cap: a layer of a 2024 model.

    Parameters
    ----------
    d_model, n_heads : int
        As in :class:`mha.MultiHeadAttention`.
    rope : RotaryTable or bool, optional
        Rotate queries and keys by their position (RoPE) inside the layer. True uses the standard table
        (base 10 000); a :class:`mha.rope_scaling.RotaryTable` may carry a table rescaled for long contexts.
        Assign ``layer.rope`` later to change it on a trained layer.
    qk_norm : bool, default False
        RMS-normalise each head's queries and keys, with learned gains ``g_q`` and ``g_k`` (ones at first).
    softcap : float, optional
        Soft-cap the scaled scores at ``±softcap`` (:func:`mha.attention.soft_cap`).
    n_kv_heads, bias, rng, dtype, kdim, vdim
        As in :class:`mha.MultiHeadAttention`.

    Raises
    ------
    ValueError
        As :class:`mha.MultiHeadAttention`; a ``softcap`` that is not a finite number > 0; a rotary table
        for another ``d_head``.
    TypeError
        As :class:`mha.MultiHeadAttention`; a ``qk_norm`` that is not a bool; a ``rope`` that is not a bool,
        None or a :class:`mha.rope_scaling.RotaryTable`.

    Attributes
    ----------
    g_q, g_k : ndarray, shape (d_head,), or None
        QK-norm's gains, shared by the heads; None without ``qk_norm``.

    Examples
    --------
    >>> layer = ModernAttention(16, 4, rope=True, qk_norm=True, softcap=20.0, n_kv_heads=2, rng=0)
    >>> out, weights = layer(np.ones((2, 5, 16)), causal=True, return_weights=True)
    >>> out.shape, weights.shape, sorted(layer.parameters())[:2]
    ((2, 5, 16), (2, 4, 5, 5), ['W_k', 'W_o'])
    >>> layer
    ModernAttention(d_model=16, n_heads=4, n_kv_heads=2, rope=none, qk_norm=True, softcap=20.0, dtype=float64)
    """

    g_q: Parameter[FloatArray | None] = Parameter()
    g_k: Parameter[FloatArray | None] = Parameter()

    def __init__(self, d_model: int, n_heads: int, *, rope: RotaryTable | bool | None = None,
                 qk_norm: bool = False, softcap: float | None = None, n_kv_heads: int | None = None,
                 bias: bool = True, kdim: int | None = None, vdim: int | None = None, rng: Seed = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(d_model, n_heads, kdim=kdim, vdim=vdim, bias=bias, n_kv_heads=n_kv_heads, rng=rng,
                         dtype=dtype)
        self.rope = rope
        self.qk_norm = check_flag(qk_norm, "qk_norm")
        self.softcap = None if softcap is None else check_positive_real(softcap, "softcap")
        gains = np.ones(self.d_head, dtype=self.dtype) if self.qk_norm else None
        self._params = {**self._params, "g_q": gains, "g_k": None if gains is None else gains.copy()}

    @property
    def rope(self) -> RotaryTable | None:
        """The rotary table the step uses, or None (no rotation)."""
        return self._rope

    @rope.setter
    def rope(self, rope: RotaryTable | bool | None) -> None:
        if rope is True:
            rope = RotaryTable(rope_frequencies(self.d_head))
        elif rope is False:
            rope = None
        if rope is not None and not isinstance(rope, RotaryTable):
            raise TypeError(f"rope must be True, False, None or a RotaryTable, got {type(rope).__name__}")
        if rope is not None and rope.d_head != self.d_head:
            raise ValueError(f"the rotary table is for d_head={rope.d_head}, this layer has "
                             f"d_head={self.d_head}")
        self._rope = rope

    @classmethod
    def like(cls, layer: MultiHeadAttention, **options: Any) -> ModernAttention:
        """A modern layer with ``layer``'s sizes and a copy of its weights, plus the step ``options``.

        Parameters
        ----------
        layer : MultiHeadAttention
            The layer whose sizes and weights are copied.
        **options
            The step's options only: ``rope``, ``qk_norm``, ``softcap``.

        Returns
        -------
        ModernAttention

        Raises
        ------
        TypeError
            ``layer`` is not a :class:`mha.MultiHeadAttention`, ``options`` name what is copied from it
            (``n_kv_heads``, ``bias``, ``kdim``, ``vdim``, ``dtype``, ``rng``), or an option has the wrong
            type.
        ValueError
            An option's value is refused (a ``softcap`` that is not > 0, a rotary table for another
            ``d_head``).

        Examples
        --------
        >>> plain = MultiHeadAttention(8, 2, rng=0)
        >>> capped = ModernAttention.like(plain, softcap=5.0)
        >>> x = np.random.default_rng(1).standard_normal((3, 8))
        >>> np.allclose(ModernAttention.like(plain)(x), plain(x))  # no option: the same layer
        True
        """
        if not isinstance(layer, MultiHeadAttention):
            raise TypeError(f"{cls.__name__}.like copies the sizes and weights of a MultiHeadAttention, got "
                            f"{type(layer).__name__}: build one with {cls.__name__}(d_model, n_heads, ...)")
        copied = {"n_kv_heads", "bias", "kdim", "vdim", "dtype", "rng"} & set(options)
        if copied:
            raise TypeError(f"{cls.__name__}.like copies {sorted(copied)} from the layer: pass only the "
                            "step's options (rope, qk_norm, softcap)")
        twin = cls(layer.d_model, layer.n_heads, n_kv_heads=layer.n_kv_heads, bias=layer.bias,
                   kdim=layer.kdim, vdim=layer.vdim, dtype=layer.dtype, rng=0, **options)
        for name, array in layer.parameters().items():
            setattr(twin, name, array)
        return twin

    def __deepcopy__(self, memo: dict[int, object]) -> ModernAttention:
        twin = self.like(self, rope=self.rope, qk_norm=self.qk_norm, softcap=self.softcap)
        memo[id(self)] = twin
        return twin

    # ------------------------------------------------------------------ the attention step
    def rotary_positions(self, seq_q: int, seq_k: int) -> tuple[IntArray, IntArray]:
        """Positions of the queries and keys in the layer's frame: keys ``0 .. seq_k - 1``, queries last.

        Parameters
        ----------
        seq_q, seq_k : int
            Numbers of queries and keys; ``seq_q <= seq_k``.

        Returns
        -------
        q_positions : int ndarray, shape (seq_q,)
        k_positions : int ndarray, shape (seq_k,)

        Examples
        --------
        >>> q_pos, k_pos = ModernAttention(8, 2, rng=0).rotary_positions(2, 5)
        >>> q_pos.tolist(), k_pos.tolist()
        ([3, 4], [0, 1, 2, 3, 4])
        """
        return np.arange(seq_k - seq_q, seq_k), np.arange(seq_k)

    @overload
    def prepare(self, q: ArrayLike, k: ArrayLike, *,
                return_cache: Literal[False] = ...) -> tuple[FloatArray, FloatArray]: ...
    @overload
    def prepare(self, q: ArrayLike, k: ArrayLike, *,
                return_cache: Literal[True]) -> tuple[FloatArray, FloatArray, PreparedCache]: ...
    def prepare(self, q: ArrayLike, k: ArrayLike, *, return_cache: bool = False
                ) -> tuple[FloatArray, FloatArray] | tuple[FloatArray, FloatArray, PreparedCache]:
        """The queries and keys the scores are made of: QK-norm, then the rotation, then the attention factor.

        Parameters
        ----------
        q : array_like, shape (batch, n_heads, seq_q, d_head)
        k : array_like, shape (batch, n_heads, seq_k, d_head)
            Key heads already repeated for their query heads.
        return_cache : bool, default False
            Also return what the backward pass needs (:func:`mha.grad.attention_step_backward`).

        Returns
        -------
        q, k : ndarray, the same shapes
        cache : PreparedCache
            Only with ``return_cache=True``: the norms' caches, the positions and the factor.

        Raises
        ------
        ValueError
            If ``q`` or ``k`` hold NaN or infinities (under QK-norm or RoPE), or ``d_head`` is not even
            (under RoPE).

        Examples
        --------
        >>> layer = ModernAttention(8, 2, rope=True, qk_norm=True, rng=0)
        >>> q = k = np.ones((1, 2, 3, 4))
        >>> q2, k2, cache = layer.prepare(q, k, return_cache=True)
        >>> q2.shape, cache.positions[1].tolist()
        ((1, 2, 3, 4), [0, 1, 2])
        """
        q, k = np.asarray(q), np.asarray(k)
        norms = positions = None
        if self.qk_norm:  # each vector to length √d_head, then the gains
            (q, q_norm), (k, k_norm) = rms_norm(q, self.g_q, return_cache=True), rms_norm(k, self.g_k,
                                                                                          return_cache=True)
            norms = (q_norm, k_norm)
        factor = 1.0
        if self.rope is not None:
            q_pos, k_pos = positions = self.rotary_positions(q.shape[-2], k.shape[-2])
            q = apply_rotary(q, q_pos, frequencies=self.rope.frequencies)
            k = apply_rotary(k, k_pos, frequencies=self.rope.frequencies)
            factor = self.rope.attention_factor
            if factor != 1.0:  # YaRN: both sides, so the scores grow by its square
                q, k = q * q.dtype.type(factor), k * k.dtype.type(factor)
        if return_cache:
            return q, k, PreparedCache(norms, positions, factor)
        return q, k

    def attention_logits(self, cache: LayerCache) -> FloatArray:
        """The scores the softmax saw in a forward pass (before the mask), from its cache.

        ``q kᵀ / √d_head`` of the prepared queries and keys, soft-capped when the layer caps: what QK-norm and
        soft-capping keep bounded.

        Parameters
        ----------
        cache : LayerCache
            From ``layer.forward(...)``.

        Returns
        -------
        ndarray, shape (batch, n_heads, seq_q, seq_k)

        Raises
        ------
        ValueError
            The cache's queries or keys hold NaN or infinities (under QK-norm or RoPE).

        Examples
        --------
        >>> layer = ModernAttention(8, 2, softcap=1.0, rng=0)
        >>> _, cache = layer.forward(np.random.default_rng(0).standard_normal((1, 4, 8)) * 100)
        >>> bool(np.abs(layer.attention_logits(cache)).max() <= 1.0)
        True
        """
        q, k = self.prepare(cache.q, cache.k)
        q = q * q.dtype.type(1.0 / np.sqrt(q.shape[-1]))
        scores = q @ np.swapaxes(k, -1, -2)  # (batch, n_heads, seq_q, seq_k)
        return scores if self.softcap is None else soft_cap(scores, self.softcap)

    def _attend(self, q: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None,
                bias: FloatArray | None, head_mask: FloatArray | None, attend: Attend | None = None, *,
                inputs: Inputs | None = None) -> tuple[FloatArray, LayerCache]:
        """The parent's heads and output projection around this layer's step (see :meth:`prepare`)."""

        def step(q: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None,
                 bias: FloatArray | None) -> tuple[FloatArray, FloatArray | None]:
            q, k = self.prepare(q, k)
            if attend is not None and self.softcap is None:  # the annex's tiles: the same numbers, no weights
                return attend(q, k, v, mask, bias)
            return attention_forward(q, k, v, mask, bias, softcap=self.softcap)

        return super()._attend(q, k, v, mask, bias, head_mask, step, inputs=inputs)

    def __repr__(self) -> str:
        kv = f", n_kv_heads={self.n_kv_heads}" if self.n_kv_heads != self.n_heads else ""
        rope = "off" if self.rope is None else self.rope.method
        return (f"ModernAttention(d_model={self.d_model}, n_heads={self.n_heads}{kv}, rope={rope}, "
                f"qk_norm={self.qk_norm}, softcap={self.softcap}, dtype={self.dtype.name})")
