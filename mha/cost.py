"""What multi-head attention costs: parameters, floating-point operations and bytes, from the sizes alone.

Conventions, so that the numbers can be checked by hand:

* a matrix product ``(m, n) @ (n, p)`` costs ``2 * m * n * p`` FLOPs (one multiply and one add per term);
* an element-wise operation costs 1 FLOP per element (a bias add, the ``1/√d_head`` scale);
* the softmax costs ``SOFTMAX_FLOPS_PER_SCORE = 5`` FLOPs per score: a comparison for the maximum, a
  subtraction, an exponential, an addition for the sum and a division.

Sizes use the course's names: ``batch, seq_q, seq_k, d_model, n_heads, d_head``; ``kdim``/``vdim`` are the
widths of key and value inputs (cross-attention) and ``n_kv_heads`` the number of key/value heads.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass

import numpy as np

from mha.typing import ArrayLike, DTypeLike
from mha.validation import check_bool_mask, check_positive_int

__all__ = [
    "SOFTMAX_FLOPS_PER_SCORE",
    "FlopCount",
    "MemoryCount",
    "parameter_count",
    "flops",
    "memory_bytes",
    "kv_cache_bytes",
    "decode_step_flops",
    "attention_cache_bytes",
    "PatternCost",
    "pattern_cost",
    "linear_attention_cost",
    "format_bytes",
    "format_flops",
    "format_count",
]

SOFTMAX_FLOPS_PER_SCORE = 5


@dataclass(frozen=True)
class FlopCount:
    """FLOPs of one forward pass, item by item (what :func:`flops` returns).

    Parameters
    ----------
    q_projection, k_projection, v_projection : int
        The input projections: matrix products and bias adds.
    scores : int
        ``q kᵀ``, plus the scale applied to ``q``.
    softmax, weighted_sum, output_projection : int
        The softmax, ``weights @ v`` and the output projection.

    Examples
    --------
    >>> f = flops(batch=1, seq_q=4, d_model=8, n_heads=2)
    >>> f.total == f.projections + f.scores + f.softmax + f.weighted_sum + f.output_projection
    True
    """

    q_projection: int
    k_projection: int
    v_projection: int
    scores: int
    softmax: int
    weighted_sum: int
    output_projection: int

    @property
    def projections(self) -> int:
        """Input projections: q, k and v."""
        return self.q_projection + self.k_projection + self.v_projection

    @property
    def matmul(self) -> int:
        """Everything but the softmax: the work a matrix-multiply unit does."""
        return self.total - self.softmax

    @property
    def total(self) -> int:
        """All the items together."""
        return sum(asdict(self).values())

    def as_dict(self) -> dict[str, int]:
        """Items and total, e.g. to print as a table.

        Returns
        -------
        dict of str to int
            The seven items by name, then ``"total"``.

        Examples
        --------
        >>> list(flops(1, 4, 8, 2).as_dict())[-2:]
        ['output_projection', 'total']
        """
        return {**asdict(self), "total": self.total}


@dataclass(frozen=True)
class MemoryCount:
    """Bytes of the arrays of one forward pass, weights excluded (what :func:`memory_bytes` returns).

    Parameters
    ----------
    inputs, qkv : int
        The query, key and value inputs; the projected queries, keys and values.
    scores : int
        The score matrices alive at once (in place: scores become weights).
    context, output : int
        The concatenated head outputs; the layer's output.
    kv_cache : int
        The keys and values a decoder keeps per layer.

    Examples
    --------
    >>> m = memory_bytes(1, 4, 8, 2)
    >>> m.peak == m.inputs + m.qkv + m.scores + m.context
    True
    """

    inputs: int
    qkv: int
    scores: int
    context: int
    output: int
    kv_cache: int

    @property
    def peak(self) -> int:
        """Forward-pass arrays alive together at the attention step (inputs, qkv, scores, context)."""
        return self.inputs + self.qkv + self.scores + self.context

    def as_dict(self) -> dict[str, int]:
        """Items and peak, e.g. to print as a table.

        Returns
        -------
        dict of str to int
            The six items by name, then ``"peak"``.

        Examples
        --------
        >>> memory_bytes(1, 4, 8, 2).as_dict()["scores"]  # 2 heads x 4 x 4 float32 scores
        128
        """
        return {**asdict(self), "peak": self.peak}


def _sizes(d_model: int, n_heads: int, kdim: int | None, vdim: int | None, n_kv_heads: int | None
           ) -> tuple[int, int, int, int, int, int, int]:
    d_model = check_positive_int(d_model, "d_model")
    n_heads = check_positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
    n_kv_heads = n_heads if n_kv_heads is None else check_positive_int(n_kv_heads, "n_kv_heads")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_heads={n_heads} is not a multiple of n_kv_heads={n_kv_heads}")
    kdim = d_model if kdim is None else check_positive_int(kdim, "kdim")
    vdim = d_model if vdim is None else check_positive_int(vdim, "vdim")
    d_head = d_model // n_heads
    return d_model, n_heads, kdim, vdim, n_kv_heads, d_head, n_kv_heads * d_head


def parameter_count(d_model: int, n_heads: int, *, kdim: int | None = None, vdim: int | None = None,
                    n_kv_heads: int | None = None, bias: bool = True) -> int:
    """Number of learned numbers in a :class:`~mha.MultiHeadAttention` layer.

    ``W_q`` and ``W_o`` are ``d_model × d_model``; ``W_k`` and ``W_v`` map ``kdim``/``vdim`` to
    ``n_kv_heads * d_head``. The number of heads does not change the count unless it changes ``n_kv_heads``.

    Parameters
    ----------
    d_model, n_heads : int
    kdim, vdim, n_kv_heads, bias
        As for :class:`~mha.MultiHeadAttention`.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        A size below 1, or heads that do not divide ``d_model`` (or ``n_kv_heads`` that do not divide them).
    TypeError
        A size that is not an integer.

    Examples
    --------
    >>> parameter_count(512, 8)  # 4 * 512 * 512 weights + 4 * 512 biases
    1050624
    >>> parameter_count(512, 8) == parameter_count(512, 1)
    True
    """
    d_model, _, kdim, vdim, _, _, kv_dim = _sizes(d_model, n_heads, kdim, vdim, n_kv_heads)
    weights = 2 * d_model * d_model + (kdim + vdim) * kv_dim
    biases = 2 * d_model + 2 * kv_dim if bias else 0
    return weights + biases


def flops(batch: int, seq_q: int, d_model: int, n_heads: int, *, seq_k: int | None = None,
          kdim: int | None = None, vdim: int | None = None, n_kv_heads: int | None = None,
          bias: bool = True) -> FlopCount:
    """FLOPs of one forward pass of the layer, itemised.

    Parameters
    ----------
    batch, seq_q, d_model, n_heads : int
    seq_k : int, optional
        Number of keys; defaults to ``seq_q`` (self-attention).
    kdim, vdim, n_kv_heads, bias
        As for :class:`~mha.MultiHeadAttention`.

    Returns
    -------
    FlopCount

    Raises
    ------
    ValueError
        A size below 1, or heads that do not divide ``d_model`` (or ``n_kv_heads`` that do not divide them).
    TypeError
        A size that is not an integer.

    Examples
    --------
    >>> f = flops(batch=1, seq_q=3, d_model=512, n_heads=8)
    >>> f.q_projection == 2 * 3 * 512 * 512 + 3 * 512  # matmul + bias add
    True
    >>> f.scores == 2 * 8 * 3 * 3 * 64 + 3 * 512  # eight 3x64 @ 64x3 products + the scale
    True
    """
    d_model, n_heads, kdim, vdim, _, d_head, kv_dim = _sizes(d_model, n_heads, kdim, vdim, n_kv_heads)
    batch = check_positive_int(batch, "batch")
    seq_q = check_positive_int(seq_q, "seq_q")
    seq_k = seq_q if seq_k is None else check_positive_int(seq_k, "seq_k")

    def linear(rows: int, fan_in: int, fan_out: int) -> int:
        return 2 * rows * fan_in * fan_out + (rows * fan_out if bias else 0)

    n_scores = batch * n_heads * seq_q * seq_k
    return FlopCount(
        q_projection=linear(batch * seq_q, d_model, d_model),
        k_projection=linear(batch * seq_k, kdim, kv_dim),
        v_projection=linear(batch * seq_k, vdim, kv_dim),
        scores=2 * n_scores * d_head + batch * seq_q * d_model,
        softmax=SOFTMAX_FLOPS_PER_SCORE * n_scores,
        weighted_sum=2 * n_scores * d_head,
        output_projection=linear(batch * seq_q, d_model, d_model),
    )


def memory_bytes(batch: int, seq_q: int, d_model: int, n_heads: int, *, seq_k: int | None = None,
                 kdim: int | None = None, vdim: int | None = None, n_kv_heads: int | None = None,
                 dtype: DTypeLike = np.float32, block_size: int | None = None) -> MemoryCount:
    """Bytes of the activations of one forward pass, full or chunked.

    Parameters
    ----------
    batch, seq_q, d_model, n_heads, seq_k, kdim, vdim, n_kv_heads
        As for :func:`flops`.
    dtype : numpy dtype, default float32
    block_size : int, optional
        With a block size, scores are those of :func:`mha.chunked_attention`: one
        ``block_size × block_size`` tile per head, plus its running maximum and sum.

    Returns
    -------
    MemoryCount

    Raises
    ------
    ValueError
        A size below 1, or heads that do not divide ``d_model`` (or ``n_kv_heads`` that do not divide them).
    TypeError
        A size that is not an integer.

    Examples
    --------
    >>> full = memory_bytes(1, 16384, 512, 8)
    >>> full.scores / 2**30  # GiB of float32 scores for 8 heads at 16k tokens
    8.0
    >>> memory_bytes(1, 16384, 512, 8, block_size=256).scores / 2**20  # MiB per tile set
    2.015625
    """
    d_model, n_heads, kdim, vdim, _, _, kv_dim = _sizes(d_model, n_heads, kdim, vdim, n_kv_heads)
    batch = check_positive_int(batch, "batch")
    seq_q = check_positive_int(seq_q, "seq_q")
    seq_k = seq_q if seq_k is None else check_positive_int(seq_k, "seq_k")
    item = np.dtype(dtype).itemsize
    if block_size is None:
        scores = batch * n_heads * seq_q * seq_k
    else:
        block = check_positive_int(block_size, "block_size")
        tile_q, tile_k = min(block, seq_q), min(block, seq_k)
        scores = batch * n_heads * (tile_q * tile_k + 2 * tile_q)  # tile + running max and sum
    is_self = seq_k == seq_q and kdim == vdim == d_model
    inputs = batch * seq_q * d_model if is_self else batch * (seq_q * d_model + seq_k * (kdim + vdim))
    return MemoryCount(
        inputs=item * inputs,
        qkv=item * batch * (seq_q * d_model + 2 * seq_k * kv_dim),
        scores=item * scores,
        context=item * batch * seq_q * d_model,
        output=item * batch * seq_q * d_model,
        kv_cache=kv_cache_bytes(batch, seq_k, d_model, n_heads, n_kv_heads=n_kv_heads, dtype=dtype),
    )


def kv_cache_bytes(batch: int, seq: int, d_model: int, n_heads: int, *, n_kv_heads: int | None = None,
                   dtype: DTypeLike = np.float32) -> int:
    """Bytes a decoder keeps per attention layer: keys and values of ``seq`` tokens.

    Parameters
    ----------
    batch, seq, d_model, n_heads : int
    n_kv_heads : int, optional
        Key/value heads (grouped-query attention); ``n_heads`` by default.
    dtype : numpy dtype, default float32

    Returns
    -------
    int

    Raises
    ------
    ValueError
        A size below 1, or heads that do not divide ``d_model`` (or ``n_kv_heads`` that do not divide them).
    TypeError
        A size that is not an integer.

    Examples
    --------
    >>> kv_cache_bytes(1, 1024, 512, 8) // 2**20  # MiB, float32, plain multi-head
    4
    >>> kv_cache_bytes(1, 1024, 512, 8, n_kv_heads=1) // 2**10  # multi-query: 8x smaller
    512
    """
    _, _, _, _, _, _, kv_dim = _sizes(d_model, n_heads, None, None, n_kv_heads)
    batch = check_positive_int(batch, "batch")
    seq = check_positive_int(seq, "seq")
    return 2 * batch * seq * kv_dim * np.dtype(dtype).itemsize


def decode_step_flops(position: int, d_model: int, n_heads: int, *, n_kv_heads: int | None = None,
                      cached: bool = True, batch: int = 1) -> int:
    """FLOPs to produce the output of token number ``position`` (1-based) while decoding.

    With a KV cache only the new token is projected and attends to ``position`` keys. Without one the
    whole prefix is run again: a full causal forward pass over ``position`` tokens (computed densely,
    as :class:`~mha.MultiHeadAttention` does).

    Parameters
    ----------
    position : int
        1 for the first token.
    d_model, n_heads : int
    n_kv_heads : int, optional
    cached : bool, default True
        Whether a KV cache keeps the earlier tokens' keys and values.
    batch : int, default 1

    Returns
    -------
    int

    Raises
    ------
    ValueError
        A size below 1, or heads that do not divide ``d_model`` (or ``n_kv_heads`` that do not divide them).
    TypeError
        A size that is not an integer.

    Examples
    --------
    >>> round(decode_step_flops(1000, 512, 8, cached=False) / decode_step_flops(1000, 512, 8))
    1000
    """
    position = check_positive_int(position, "position")
    if not cached:
        return flops(batch, position, d_model, n_heads, n_kv_heads=n_kv_heads).total
    attend = flops(batch, 1, d_model, n_heads, seq_k=position, n_kv_heads=n_kv_heads)
    new_token = flops(batch, 1, d_model, n_heads, n_kv_heads=n_kv_heads)
    # Only the new token's key and value are projected; the other position - 1 come from the cache.
    return attend.total - attend.k_projection - attend.v_projection + new_token.k_projection \
        + new_token.v_projection


def attention_cache_bytes(seq: int, *, n_kv_heads: int | None = None, d_head: int | None = None,
                          kv_rank: int | None = None, d_rope: int = 0, window: int | None = None,
                          sinks: int = 0, batch: int = 1, dtype: DTypeLike = np.float32) -> int:
    """Bytes one attention layer caches for ``seq`` tokens, for each way of attending.

    * multi-head, grouped-query or multi-query attention: ``2 · n_kv_heads · d_head`` numbers a token
      (keys and values);
    * with a sliding ``window`` (and ``sinks``): only the last ``window`` tokens and the first ``sinks``
      are kept (:class:`mha.RollingKVCache`);
    * multi-head latent attention (``kv_rank``, ``d_rope``): ``kv_rank + d_rope`` numbers a token, one
      latent and one shared rotary key (:class:`mha.LatentAttention`).

    Parameters
    ----------
    seq : int
    n_kv_heads, d_head : int, optional
        Key/value heads and their width; give both, or ``kv_rank``.
    kv_rank, d_rope : int, optional
        Latent attention's latent width and its shared rotary key's.
    window, sinks : int, optional
        A sliding window's length, and the first tokens it keeps as well.
    batch : int, default 1
    dtype : numpy dtype, default float32

    Returns
    -------
    int

    Raises
    ------
    ValueError
        Neither ``kv_rank`` nor both of ``n_kv_heads`` and ``d_head`` (or both kinds), or a size below its
        minimum.
    TypeError
        A size that is not an integer.

    Examples
    --------
    >>> attention_cache_bytes(8192, n_kv_heads=8, d_head=128, dtype=np.float16) // 2**20  # MiB, Llama-like
    32
    >>> attention_cache_bytes(8192, n_kv_heads=8, d_head=128, window=4096, dtype=np.float16) // 2**20
    16
    >>> attention_cache_bytes(8192, kv_rank=512, d_rope=64, dtype=np.float16) // 2**20  # DeepSeek-V2's MLA
    9
    """
    seq = check_positive_int(seq, "seq")
    batch = check_positive_int(batch, "batch")
    if kv_rank is not None:
        if n_kv_heads is not None or d_head is not None:
            raise ValueError("give either kv_rank (latent attention) or n_kv_heads and d_head, not both")
        per_token = check_positive_int(kv_rank, "kv_rank") + check_positive_int(d_rope, "d_rope", minimum=0)
    elif n_kv_heads is None or d_head is None:
        raise ValueError("give n_kv_heads and d_head (keys and values), or kv_rank (latent attention)")
    else:
        per_token = 2 * check_positive_int(n_kv_heads, "n_kv_heads") * check_positive_int(d_head, "d_head")
    sinks = check_positive_int(sinks, "sinks", minimum=0)
    tokens = seq if window is None else min(seq, check_positive_int(window, "window") + sinks)
    return batch * tokens * per_token * np.dtype(dtype).itemsize


@dataclass(frozen=True)
class PatternCost:
    """What attention costs when only the scores of a pattern are computed (:func:`pattern_cost`).

    Parameters
    ----------
    scores : int
        Scores computed: the mask's True entries, times batch and heads.
    flops : int
        ``q · k``, softmax and weighted sum over those scores.
    score_bytes : int
        The scores, if all of them are held at once.
    density : float
        ``scores`` over the full ``seq_q · seq_k`` (times batch and heads).

    Examples
    --------
    >>> pattern_cost(np.eye(4, dtype=bool), 8).density
    0.25
    """

    scores: int
    flops: int
    score_bytes: int
    density: float

    def as_dict(self) -> dict[str, float]:
        """The four items by name, e.g. to print as a table.

        Returns
        -------
        dict of str to number

        Examples
        --------
        >>> pattern_cost(np.eye(4, dtype=bool), 8).as_dict()["scores"]
        4
        """
        return asdict(self)


def pattern_cost(mask: ArrayLike, d_head: int, *, d_v: int | None = None, n_heads: int = 1, batch: int = 1,
                 dtype: DTypeLike = np.float32) -> PatternCost:
    """FLOPs and bytes of attention restricted to a pattern (``mask``: True where a score is computed).

    The conventions of :func:`flops`: ``2 · d_head`` FLOPs per score for ``q · k``,
    :data:`SOFTMAX_FLOPS_PER_SCORE` for the softmax and ``2 · d_v`` for the weighted sum. A kernel that
    skips the masked scores (block-sparse attention, a sliding-window kernel) pays only these.

    Parameters
    ----------
    mask : bool array_like, shape (..., seq_q, seq_k)
    d_head : int
    d_v : int, optional
        Width of the values; ``d_head`` by default.
    n_heads, batch : int, default 1
        Copies of the pattern.
    dtype : numpy dtype, default float32

    Returns
    -------
    PatternCost

    Raises
    ------
    ValueError
        ``mask`` has fewer than 2 dimensions, or a size is below 1.
    TypeError
        ``mask`` is not boolean, or a size not an integer.

    Examples
    --------
    >>> from mha.masks import causal_mask, sliding_window_mask
    >>> full = pattern_cost(np.ones((1024, 1024), dtype=bool), 64)
    >>> local = pattern_cost(sliding_window_mask(1024, window=128), 64)
    >>> round(local.flops / full.flops, 3), round(local.density, 3)
    (0.117, 0.117)
    """
    mask = check_bool_mask(np.asarray(mask))
    if mask.ndim < 2:
        raise ValueError(f"mask must have shape (..., seq_q, seq_k), got {mask.shape}")
    d_head = check_positive_int(d_head, "d_head")
    d_v = d_head if d_v is None else check_positive_int(d_v, "d_v")
    copies = check_positive_int(n_heads, "n_heads") * check_positive_int(batch, "batch")
    scores = copies * int(mask.sum())
    per_score = 2 * d_head + SOFTMAX_FLOPS_PER_SCORE + 2 * d_v
    full = copies * math.prod(mask.shape)
    return PatternCost(scores=scores, flops=scores * per_score, score_bytes=scores * np.dtype(dtype).itemsize,
                       density=scores / full)


def linear_attention_cost(seq: int, d_head: int, *, d_v: int | None = None, n_heads: int = 1, batch: int = 1,
                          dtype: DTypeLike = np.float32) -> PatternCost:
    """FLOPs and state bytes of causal linear attention run as its recurrence (:mod:`mha.linear_attention`).

    Per token and head: ``2 · d_head · d_v + d_head`` to add ``φ(k) vᵀ`` and ``φ(k)`` to the state, and
    ``2 · d_head · d_v + 2 · d_head + d_v`` to read it with ``φ(q)`` and normalise. The state,
    ``d_head · d_v + d_head`` numbers a head, is all it keeps: ``score_bytes`` holds its size, and
    ``scores`` is 0 (there are none).

    Parameters
    ----------
    seq, d_head : int
    d_v : int, optional
        Width of the values; ``d_head`` by default.
    n_heads, batch : int, default 1
    dtype : numpy dtype, default float32

    Returns
    -------
    PatternCost

    Raises
    ------
    ValueError
        A size below 1.
    TypeError
        A size that is not an integer.

    Examples
    --------
    >>> short, long = linear_attention_cost(1024, 64), linear_attention_cost(8192, 64)
    >>> long.flops // short.flops, long.score_bytes == short.score_bytes  # linear in seq, memory flat
    (8, True)
    """
    seq, d_head = check_positive_int(seq, "seq"), check_positive_int(d_head, "d_head")
    d_v = d_head if d_v is None else check_positive_int(d_v, "d_v")
    copies = check_positive_int(n_heads, "n_heads") * check_positive_int(batch, "batch")
    per_token = (2 * d_head * d_v + d_head) + (2 * d_head * d_v + 2 * d_head + d_v)
    state = copies * (d_head * d_v + d_head) * np.dtype(dtype).itemsize
    return PatternCost(scores=0, flops=copies * seq * per_token, score_bytes=state, density=0.0)


def _scaled(value: float, units: tuple[str, ...], base: float, what: str) -> str:
    """``value`` in the largest unit that keeps three significant digits below 1000 (no exponents)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        fix = ": convert it with float(...) first" if isinstance(value, str) else ""
        raise TypeError(f"expected {what} as a number (int or float), got {type(value).__name__} "
                        f"{value!r}{fix}")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"expected a finite, non-negative amount, got {value!r}")
    for power, unit in enumerate(units):
        # Compare the *rounded* mantissa: 999.6 rounds to 1000, which belongs to the next unit.
        if float(f"{value:.3g}") < 1000 or power == len(units) - 1:
            text = f"{value:.3g}" if float(f"{value:.3g}") < 1000 else f"{value:.0f}"
            return f"{text} {unit}".rstrip()
        value /= base
    raise AssertionError("unreachable")


def format_bytes(n: float) -> str:
    """Bytes in binary units (KiB = 1024 B), three significant digits, never an exponent.

    Between 1000 and 1023 bytes the number is shown in KiB, so that every unit shows at most three digits.

    Parameters
    ----------
    n : int or float
        Bytes, finite and >= 0.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        ``n`` is negative, NaN or infinite.
    TypeError
        ``n`` is not a number (a string such as ``"1000"``, a bool).

    Examples
    --------
    >>> format_bytes(512), format_bytes(1000), format_bytes(1536), format_bytes(3 * 2**20)
    ('512 B', '0.977 KiB', '1.5 KiB', '3 MiB')
    """
    return _scaled(n, ("B", "KiB", "MiB", "GiB", "TiB", "PiB"), 1024.0, "a number of bytes")


def format_flops(n: float) -> str:
    """Floating-point operations in decimal units (kFLOP = 1000 FLOP), three significant digits.

    Parameters
    ----------
    n : int or float
        FLOPs, finite and >= 0.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        ``n`` is negative, NaN or infinite.
    TypeError
        ``n`` is not a number (a string such as ``"1000"``, a bool).

    Examples
    --------
    >>> format_flops(950), format_flops(999_500), format_flops(1.5e9)
    ('950 FLOP', '1 MFLOP', '1.5 GFLOP')
    """
    return _scaled(n, ("FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"), 1000.0, "a number of FLOPs")


def format_count(n: float) -> str:
    """A count (of parameters, say) in decimal units: ``1_048_576`` -> ``"1.05 M"``.

    Parameters
    ----------
    n : int or float
        The count, finite and >= 0.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        ``n`` is negative, NaN or infinite.
    TypeError
        ``n`` is not a number (a string such as ``"1000"``, a bool).

    Examples
    --------
    >>> format_count(512), format_count(1_048_576)
    ('512', '1.05 M')
    """
    return _scaled(n, ("", "k", "M", "G", "T", "P"), 1000.0, "a count")
