"""Telling attention where tokens are: absolute encodings, relative biases, rotations.

Attention on its own is permutation-equivariant: shuffle the tokens and the outputs are shuffled the same
way. The functions here give it a sense of order, in the three ways transformers do it:

* :func:`sinusoidal_encoding` -- a fixed vector per position, added to the token embeddings;
* :class:`RelativePositionBias` (and :func:`alibi_bias`) -- a number per head and offset, *added to the
  scores* before the softmax (pass it to the layer as ``bias=``);
* :func:`apply_rotary` (RoPE) -- queries and keys rotated by their position, so that ``q · k`` depends on
  the offset between the two tokens only.

Offsets are ``key position - query position``: offset ``-1`` is the previous token, ``+1`` the next. When
``seq_q < seq_k`` the queries are the *last* ``seq_q`` positions (end-aligned, like :func:`mha.causal_mask`
and decoding with a cache).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from mha.module import Module, Parameter
from mha.typing import ArrayLike, DTypeLike, FloatArray, IntArray, Seed
from mha.validation import (
    as_float_array,
    as_generator,
    check_dtype_argument,
    check_finite,
    check_ndim,
    check_positive_int,
)

__all__ = [
    "sinusoidal_encoding",
    "relative_positions",
    "relative_bias",
    "RelativePositionBias",
    "rope_frequencies",
    "apply_rotary",
    "alibi_slopes",
    "alibi_bias",
]


def _check_real(value: object, name: str, *, above: float = -math.inf, at_least: float = -math.inf) -> float:
    """A finite real number (not a bool) > ``above`` and >= ``at_least``, as a float."""
    number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    if not math.isfinite(number) or number <= above or number < at_least:
        bound = f" > {above:g}" if above > -math.inf else f" >= {at_least:g}" if at_least > -math.inf else ""
        raise ValueError(f"{name} must be a finite number{bound}, got {value!r}")
    return number


def _check_base(base: object) -> float:
    return _check_real(base, "base", above=1.0)


def _check_even(d: int, name: str) -> int:
    d = check_positive_int(d, name)
    if d % 2:
        raise ValueError(f"{name} must be even (features come in sine/cosine pairs), got {d}")
    return d


def sinusoidal_encoding(seq_len: int, d_model: int, *, base: float = 10000.0,
                        dtype: DTypeLike = np.float64) -> FloatArray:
    """The fixed position vectors of the original transformer, one row per position.

    ``PE[p, 2i] = sin(p * w_i)`` and ``PE[p, 2i + 1] = cos(p * w_i)`` with ``w_i = base ** (-2i / d_model)``:
    each feature pair is a clock hand turning at its own speed, fast for the first pairs, slow for the last.

    Parameters
    ----------
    seq_len : int
        Number of positions, 0 to ``seq_len - 1``.
    d_model : int
        Width of the embeddings the encoding is added to; must be even.
    base : float, default 10000.0
        Sets the slowest speed (wavelength up to ``2π * base`` positions).
    dtype : np.float32 or np.float64
        The angles are computed in float64, then cast.

    Returns
    -------
    ndarray, shape (seq_len, d_model)

    Raises
    ------
    ValueError
        ``seq_len`` below 1, ``d_model`` not a positive even number, or ``base`` not a finite number > 1.
    TypeError
        A size that is not an integer, or a ``dtype`` other than float32 or float64.

    Examples
    --------
    >>> pe = sinusoidal_encoding(4, 6)
    >>> pe.shape
    (4, 6)
    >>> pe[0]  # position 0: every sine is 0, every cosine is 1
    array([0., 1., 0., 1., 0., 1.])
    """
    seq_len = check_positive_int(seq_len, "seq_len")
    d_model = _check_even(d_model, "d_model")
    dtype = check_dtype_argument(dtype)
    speeds = rope_frequencies(d_model, base=base)  # (d_model // 2,)
    angles = np.arange(seq_len)[:, None] * speeds  # (seq_len, d_model // 2)
    pe = np.empty((seq_len, d_model // 2, 2))  # (seq_len, pairs, [sin, cos])
    pe[..., 0] = np.sin(angles)
    pe[..., 1] = np.cos(angles)
    return pe.reshape(seq_len, d_model).astype(dtype)  # (seq_len, d_model), pairs side by side


# ---------------------------------------------------------------------------------------- relative bias
def relative_positions(seq_q: int, seq_k: int | None = None) -> IntArray:
    """Offset ``key position - query position`` for every (query, key) pair, end-aligned.

    Parameters
    ----------
    seq_q : int
    seq_k : int, optional
        Defaults to ``seq_q``; must be at least ``seq_q`` (queries are the last ``seq_q`` positions).

    Returns
    -------
    ndarray of int, shape (seq_q, seq_k)

    Raises
    ------
    ValueError
        ``seq_q`` or ``seq_k`` below 1, or ``seq_k < seq_q``.
    TypeError
        ``seq_q`` or ``seq_k`` not an integer.

    Examples
    --------
    >>> relative_positions(3)
    array([[ 0,  1,  2],
           [-1,  0,  1],
           [-2, -1,  0]])
    >>> relative_positions(1, 4)  # one new token decoding after three cached ones
    array([[-3, -2, -1,  0]])
    """
    seq_q = check_positive_int(seq_q, "seq_q")
    seq_k = seq_q if seq_k is None else check_positive_int(seq_k, "seq_k")
    if seq_k < seq_q:
        raise ValueError(f"seq_k={seq_k} < seq_q={seq_q}: queries are the last seq_q of the seq_k positions")
    query_pos = np.arange(seq_k - seq_q, seq_k)  # (seq_q,), end-aligned
    return np.arange(seq_k)[None, :] - query_pos[:, None]  # (seq_q, seq_k)


def relative_bias(table: ArrayLike, seq_q: int, seq_k: int | None = None) -> FloatArray:
    """Look up each head's learned number for every (query, key) offset.

    Offsets further than ``max_distance`` share the table's end entries (clipping), so one table serves
    sequences of any length.

    Parameters
    ----------
    table : array_like, shape (n_heads, 2 * max_distance + 1)
        Column ``max_distance + o`` holds the bias for offset ``o``.
    seq_q, seq_k : int
        As in :func:`relative_positions`.

    Returns
    -------
    ndarray, shape (n_heads, seq_q, seq_k)
        Ready for ``layer(x, bias=...)``; broadcasts over the batch.

    Raises
    ------
    ValueError
        ``table`` of another shape or with NaN or infinities, or sizes as in :func:`relative_positions`.
    TypeError
        ``table`` not real numbers, or a size not an integer.

    Examples
    --------
    >>> table = np.array([[-1.0, 0.0, 1.0]])  # one head, max_distance = 1
    >>> relative_bias(table, 2, 4)[0]
    array([[-1., -1.,  0.,  1.],
           [-1., -1., -1.,  0.]])
    """
    table = as_float_array(table, "table")
    if table.ndim != 2 or table.shape[1] % 2 == 0:
        raise ValueError(f"table must have shape (n_heads, 2 * max_distance + 1), got {table.shape}")
    check_finite(table, "table")
    max_distance = table.shape[1] // 2
    columns = np.clip(relative_positions(seq_q, seq_k), -max_distance, max_distance) + max_distance
    bias: FloatArray = table[:, columns]  # (n_heads, seq_q, seq_k)
    return bias


class RelativePositionBias(Module):
    """A learned bias per head and per (clipped) offset, added to the attention scores.

    This is the part the lessons' ``RelativeMultiHeadAttention`` computes and then throws away: the bias
    only matters if it reaches the scores, ``softmax(q kᵀ / √d_head + bias)``. Here it does, through the
    layer's ``bias=`` argument::

        layer(x, bias=position_bias(seq_len))

    Parameters
    ----------
    n_heads : int
    max_distance : int, default 16
        Offsets beyond ``±max_distance`` share the last entry on their side.
    rng : numpy.random.Generator or int, optional
        Only used when ``init_std > 0``.
    init_std : float, default 0.0
        Standard deviation of the initial table; 0 starts every head position-blind.
    dtype : np.float32 or np.float64

    Attributes
    ----------
    table : ndarray, shape (n_heads, 2 * max_distance + 1)
        Edit in place or assign an array of the same shape.
    offsets : ndarray of int, shape (2 * max_distance + 1,)
        The offset each column of ``table`` stands for, ``-max_distance .. max_distance``.

    Raises
    ------
    ValueError
        ``n_heads`` below 1, ``max_distance`` below 0, or ``init_std`` negative or not finite.
    TypeError
        A size that is not an integer, a ``dtype`` other than float32 or float64, or a bad ``rng``.

    Examples
    --------
    >>> position_bias = RelativePositionBias(n_heads=2, max_distance=3)
    >>> position_bias.table[0] = -np.abs(position_bias.offsets + 1)  # head 0 prefers the previous token
    >>> position_bias(4).shape
    (2, 4, 4)
    >>> position_bias(4)[0, 2]  # query at position 2: the key at position 1 scores highest
    array([-1.,  0., -1., -2.])
    """

    table: Parameter[FloatArray] = Parameter()

    def __init__(self, n_heads: int, max_distance: int = 16, *, rng: Seed = None, init_std: float = 0.0,
                 dtype: DTypeLike = np.float64) -> None:
        self.n_heads = check_positive_int(n_heads, "n_heads")
        self.max_distance = check_positive_int(max_distance, "max_distance", minimum=0)
        self.dtype = check_dtype_argument(dtype)
        init_std = _check_real(init_std, "init_std", at_least=0.0)
        shape = (self.n_heads, 2 * self.max_distance + 1)
        table = np.zeros(shape, dtype=self.dtype)
        if init_std > 0:
            table[...] = as_generator(rng).normal(0.0, init_std, size=shape)
        self._params = {"table": table}
        self.offsets = np.arange(-self.max_distance, self.max_distance + 1)

    def __call__(self, seq_q: int, seq_k: int | None = None) -> FloatArray:
        """The bias for ``seq_q`` queries and ``seq_k`` keys: one learned number per head and offset.

        Parameters
        ----------
        seq_q : int
        seq_k : int, optional
            Default ``seq_q``.

        Returns
        -------
        ndarray, shape (n_heads, seq_q, seq_k)

        Raises
        ------
        ValueError
            ``seq_q`` or ``seq_k`` below 1 (offsets beyond ``max_distance`` share the last entry).
        TypeError
            ``seq_q`` or ``seq_k`` not an integer.

        Examples
        --------
        >>> bias = RelativePositionBias(2, max_distance=4)
        >>> bias(3, 5).shape
        (2, 3, 5)
        """
        return relative_bias(self.table, seq_q, seq_k)

    def prefer_offset(self, head: int, offset: int, strength: float = 1.0) -> None:
        """Hand-set one head's table to ``-strength * |o - offset|``: the nearer to ``offset``, the higher.

        A quick way to build by hand what training finds, e.g. ``prefer_offset(0, -1, 4.0)`` makes head 0
        a previous-token head.

        Parameters
        ----------
        head : int
            In ``0 .. n_heads - 1``.
        offset : int
            In ``-max_distance .. max_distance``; -1 is the previous token.
        strength : float, default 1.0
            How steeply the bias falls with the distance from ``offset``.

        Raises
        ------
        ValueError
            ``head`` or ``offset`` out of range, or ``strength`` not finite.
        TypeError
            ``head`` or ``offset`` not an integer.

        Examples
        --------
        >>> bias = RelativePositionBias(1, max_distance=2)
        >>> bias.prefer_offset(0, -1, 2.0)
        >>> bias.table[0]  # offsets -2 .. 2
        array([-2.,  0., -2., -4., -6.])
        """
        head = check_positive_int(head, "head", minimum=0)
        if head >= self.n_heads:
            raise ValueError(f"head must be in 0 .. {self.n_heads - 1}, got {head}")
        offset = check_positive_int(offset, "offset", minimum=-self.max_distance)
        if offset > self.max_distance:
            raise ValueError(f"offset must be in ±max_distance = ±{self.max_distance}, got {offset}")
        strength = _check_real(strength, "strength")
        self.table[head] = 0.0 - strength * np.abs(self.offsets - offset)  # 0.0 - 0 is 0, never -0

    def __repr__(self) -> str:
        return (f"RelativePositionBias(n_heads={self.n_heads}, max_distance={self.max_distance}, "
                f"dtype={self.dtype.name})")


# ---------------------------------------------------------------------------------------- rotary (RoPE)
def rope_frequencies(d_head: int, *, base: float = 10000.0) -> FloatArray:
    """Angular speed of each feature pair ``i``: ``base ** (-2i / d_head)``, for ``i`` up to ``d_head/2 - 1``.

    Parameters
    ----------
    d_head : int
        Even.
    base : float, default 10000.0
        > 1; the slowest pair turns once every ``2π · base`` positions at most.

    Returns
    -------
    ndarray of float64, shape (d_head // 2,)

    Raises
    ------
    ValueError
        ``d_head`` not a positive even number, or ``base`` not a finite number > 1.
    TypeError
        ``d_head`` not an integer.

    Examples
    --------
    >>> rope_frequencies(8, base=10000.0)
    array([1.   , 0.1  , 0.01 , 0.001])
    """
    d_head = _check_even(d_head, "d_head")
    base = _check_base(base)
    return base ** (-np.arange(0, d_head, 2) / d_head)  # (d_head // 2,), float64


def apply_rotary(x: ArrayLike, positions: ArrayLike | None = None, *, base: float = 10000.0,
                 frequencies: ArrayLike | None = None) -> FloatArray:
    """Rotate each feature pair ``(x[2i], x[2i+1])`` of a token by ``position * w_i`` (RoPE).

    Apply it to queries and keys (not values) after the projection, per head. A query rotated for
    position ``m`` and a key rotated for position ``n`` then have a dot product that depends on their
    contents and on ``m - n`` only: rotating both by the same extra angle changes nothing.

    Pairs are adjacent features, as in the RoFormer paper; some libraries pair feature ``i`` with
    ``i + d_head/2`` instead (same idea, different layout: weights trained for one work in the other once
    the columns of each head's ``W_q`` and ``W_k`` are permuted, feature ``i`` to ``2i`` and
    ``i + d_head/2`` to ``2i + 1``).

    Parameters
    ----------
    x : array_like, shape (..., seq, d_head)
        Queries or keys, e.g. ``(batch, n_heads, seq, d_head)``; ``d_head`` must be even.
    positions : array_like, broadcastable to (..., seq), optional
        Position of each token; defaults to ``0 .. seq - 1``. Decoding with a cache passes the absolute
        positions of the new tokens.
    base : float, default 10000.0
        See :func:`rope_frequencies`.
    frequencies : array_like, shape (d_head // 2,), optional
        The angular speed of each pair, instead of ``rope_frequencies(d_head, base=base)``: a table
        rescaled for long contexts (:mod:`mha.rope_scaling`) goes here.

    Returns
    -------
    ndarray, same shape and float dtype as ``x`` (float32 stays float32)

    Raises
    ------
    ValueError
        ``x`` with fewer than 2 dimensions, an odd ``d_head`` or NaN or infinities; ``positions`` or
        ``frequencies`` that do not fit or are not finite; ``base`` not a finite number > 1.
    TypeError
        ``x`` or ``positions`` not real numbers.

    Examples
    --------
    >>> q = np.array([[1.0, 0.0], [1.0, 0.0]])  # the same 2-D vector at positions 0 and 1
    >>> apply_rotary(q).round(3)  # position 1 turned by 1 radian
    array([[1.   , 0.   ],
           [0.54 , 0.841]])
    """
    x = as_float_array(x, "x")
    check_ndim(x, "x", min_ndim=2, shape_hint="(..., seq, d_head)")
    check_finite(x, "x")
    d_head = _check_even(x.shape[-1], "d_head (the last dimension of x)")
    seq = x.shape[-2]
    if positions is None:
        positions = np.arange(seq)
    else:
        positions = as_float_array(positions, "positions")
        check_finite(positions, "positions")
        try:
            fits = np.broadcast_shapes(positions.shape, x.shape[:-1]) == x.shape[:-1]
        except ValueError:
            fits = False
        if not fits:  # positions may not add axes: the result keeps x's shape
            raise ValueError(f"positions of shape {positions.shape} do not broadcast to x's "
                             f"(..., seq) = {x.shape[:-1]}")
    speeds = rope_frequencies(d_head, base=base) if frequencies is None else \
        _check_frequencies(frequencies, d_head)
    angles = np.asarray(positions, dtype=np.float64)[..., None] * speeds
    # angles: (..., seq, d_head // 2), in float64 so that large positions keep their precision
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    pairs = x.reshape(*x.shape[:-1], d_head // 2, 2)  # (..., seq, d_head // 2, 2)
    first, second = pairs[..., 0], pairs[..., 1]  # each (..., seq, d_head // 2)
    rotated = np.stack([first * cos - second * sin, first * sin + second * cos], axis=-1)
    return rotated.reshape(rotated.shape[:-2] + (d_head,))  # (..., seq, d_head)


def _check_frequencies(frequencies: ArrayLike, d_head: int) -> FloatArray:
    """A table of ``d_head // 2`` finite angular speeds, as float64."""
    speeds = np.asarray(as_float_array(frequencies, "frequencies"), dtype=np.float64)
    if speeds.shape != (d_head // 2,):
        raise ValueError(f"frequencies must have shape (d_head // 2,) = ({d_head // 2},), got {speeds.shape}")
    check_finite(speeds, "frequencies")
    return speeds


# ---------------------------------------------------------------------------------------- ALiBi
def alibi_slopes(n_heads: int) -> FloatArray:
    """One slope per head, a geometric sequence, as in ALiBi (Press et al., 2022).

    For a power of two ``n``, head ``h`` gets ``2 ** (-8 (h + 1) / n)``. Otherwise the slopes of the
    largest power of two below ``n`` are followed by every other slope of the next power of two.

    Parameters
    ----------
    n_heads : int

    Returns
    -------
    ndarray of float64, shape (n_heads,)

    Raises
    ------
    ValueError
        ``n_heads`` below 1.
    TypeError
        ``n_heads`` not an integer.

    Examples
    --------
    >>> alibi_slopes(4)
    array([0.25      , 0.0625    , 0.015625  , 0.00390625])
    """
    n_heads = check_positive_int(n_heads, "n_heads")

    def geometric(n: int) -> FloatArray:
        slopes: FloatArray = 2.0 ** (-8.0 * np.arange(1, n + 1) / n)
        return slopes

    lower = 2 ** int(math.floor(math.log2(n_heads)))
    if lower == n_heads:
        return geometric(n_heads)
    extra = geometric(2 * lower)[0::2][: n_heads - lower]
    slopes: FloatArray = np.concatenate([geometric(lower), extra])
    return slopes


def alibi_bias(n_heads: int, seq_q: int, seq_k: int | None = None, *,
               dtype: DTypeLike = np.float64) -> FloatArray:
    """ALiBi's fixed score bias: ``-slope_h * |offset|``, a linear penalty on distance, one slope per head.

    With a causal mask this is the paper's bias; without one it penalises both directions alike.

    Parameters
    ----------
    n_heads, seq_q : int
    seq_k : int, optional
        Default ``seq_q``; at least ``seq_q`` (queries are the last positions).
    dtype : np.float32 or np.float64, default np.float64

    Returns
    -------
    ndarray, shape (n_heads, seq_q, seq_k)

    Raises
    ------
    ValueError
        A size below 1, or ``seq_k < seq_q``.
    TypeError
        A size that is not an integer, or a ``dtype`` other than float32 or float64.

    Examples
    --------
    >>> alibi_bias(2, 3)[0]  # head 0 has slope 2 ** -4
    array([[ 0.    , -0.0625, -0.125 ],
           [-0.0625,  0.    , -0.0625],
           [-0.125 , -0.0625,  0.    ]])
    """
    dtype = check_dtype_argument(dtype)
    minus_distance = -np.abs(relative_positions(seq_q, seq_k))  # (seq_q, seq_k), ints: no -0.0
    bias = alibi_slopes(n_heads)[:, None, None] * minus_distance  # (n_heads, seq_q, seq_k)
    return bias.astype(dtype)
