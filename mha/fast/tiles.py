"""Attention computed tile by tile: the same numbers as :mod:`mha.attention`, with the scores kept in cache.

Nothing here changes a number; it changes where and when the work happens. :mod:`mha.attention` and
:mod:`mha.efficient` show the algorithms on whole arrays and blocks; :func:`attend_tiles` and
:func:`chunked_tiles` run the same steps on tiles of the scores sized to the core's cache, spread over
threads (:mod:`mha.fast.threads`), and :func:`split_batch` hands whole examples of a layer to threads:

- **Tiles.** Several passes touch every score (the product ``q kᵀ``, ``exp``, the row sums, the weighted
  sum of values, and the row maxima where a shift is needed). On whole arrays each pass streams the full
  score tensor through memory; tile by tile, a block of scores about the size of a core's L2 cache goes
  through all of them while it is still there.
- **Threads.** Tiles are independent, so a pool of threads takes them in turn, each running the products
  on its own core with BLAS held to one thread, instead of BLAS threads spinning while one core
  exponentiates.

Set the environment variable ``MHA_NUM_THREADS`` to cap the pool (``1`` turns it off).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar, overload

import numpy as np

from mha.fast.threads import Scratch, run_tiles, workers_for_tiles
from mha.typing import BoolArray, DTypeLike, FloatArray
from mha.validation import check_score_maxima

__all__ = ["TILE_MIN_SCORES", "attend_tiles", "softmax_tiles", "chunked_tiles", "split_batch"]

#: Below this many scores a problem runs on whole arrays: tiles and threads cost more than they save.
TILE_MIN_SCORES = 1 << 20
#: Bytes of scores in one tile: a good part of one core's L2 cache, leaving room for the tile's queries,
#: keys and values (see benchmarks/bench_forward.py to try another size on your machine).
TILE_BYTES = 1 << 20

#: One tile: the fixed leading indices (all but the heads axis), its heads and its query rows.
Tile = tuple[tuple[int, ...], slice, slice]
_Array = TypeVar("_Array", bound="np.ndarray[Any, Any]")


def split_batch(forward: Callable[..., FloatArray], operands: tuple[FloatArray | BoolArray | None, ...],
                out_shape: tuple[int, ...], dtype: DTypeLike) -> FloatArray:
    """Run ``forward`` on one example of the batch at a time, the examples spread over threads.

    Each thread runs whole examples end to end (projections, attention tiles, output projection) with BLAS
    on one thread: one meeting point per call instead of one per matrix product, which keeps both cores busy
    even when other work on the machine preempts one of them.

    Parameters
    ----------
    forward : callable
        ``forward(*sliced_operands)`` returns the output for its slice of the batch.
    operands : tuple of ndarray or None
        Arrays whose first axis is the batch (size 1 broadcasts; None stays None).
    out_shape : tuple of int
        The output's shape, the batch first.
    dtype : data-type
        The output's dtype.

    Returns
    -------
    ndarray, shape ``out_shape``

    Raises
    ------
    Exception
        Whatever ``forward`` raises, re-raised in the caller.

    Examples
    --------
    >>> x, w = np.arange(6.0).reshape(3, 2), np.ones((1, 2))
    >>> split_batch(lambda x, w: (x * w).sum(axis=-1), (x, w), (3,), np.float64)
    array([1., 5., 9.])
    """
    batch = out_shape[0]
    out = np.empty(out_shape, dtype=dtype)  # (batch, ...)

    def run_one(rows: slice, scratch: Scratch) -> None:
        sliced = [arr if arr is None or arr.shape[0] == 1 else arr[rows] for arr in operands]
        out[rows] = forward(*sliced)

    run_tiles(run_one, [slice(i, i + 1) for i in range(batch)], workers_for_tiles() if batch > 1 else 1)
    return out


# ---------------------------------------------------------------------------------------- tiles
@overload
def _part(arr: FloatArray, lead_index: tuple[int, ...], heads: slice, rows: slice,
          cols: slice | None = None) -> FloatArray: ...
@overload
def _part(arr: BoolArray, lead_index: tuple[int, ...], heads: slice, rows: slice,
          cols: slice | None = None) -> BoolArray: ...
@overload
def _part(arr: None, lead_index: tuple[int, ...], heads: slice, rows: slice,
          cols: slice | None = None) -> None: ...
def _part(arr: np.ndarray[Any, Any] | None, lead_index: tuple[int, ...], heads: slice, rows: slice,
          cols: slice | None = None) -> np.ndarray[Any, Any] | None:
    """The piece of ``arr`` (aligned to ``lead + (rows, cols)``) that one tile needs; size-1 axes broadcast.

    ``lead_index`` fixes every leading axis but the last, which is cut by ``heads``; then ``rows`` cuts
    the second-to-last axis and ``cols`` the last (None keeps it whole). None stays None.
    """
    if arr is None:
        return None
    fixed, cut = arr.shape[:len(lead_index)], arr.shape[len(lead_index):]  # cut: (heads, rows, cols) sizes
    picks: tuple[int | slice, ...] = tuple(0 if size == 1 else i
                                           for i, size in zip(lead_index, fixed, strict=True))
    picks += tuple(slice(None) if size == 1 else part
                   for size, part in zip(cut, (heads, rows, cols or slice(None)), strict=True))
    return arr[picks]


def _plan(lead: tuple[int, ...], seq_q: int, seq_k: int, itemsize: int, rows: int | None = None,
          whole_items: bool = True) -> list[Tile]:
    """Tiles ``(lead_index, heads, rows)`` of about :data:`TILE_BYTES` of scores each.

    Several heads share a tile when their rows fit: with ``whole_items`` (scores written in place into
    the full tensor) only whole (batch, head) items, so that a tile is one contiguous slab; without, any
    block of rows (chunked attention, whose tiles live in a scratch buffer).
    """
    row_bytes = seq_k * itemsize
    if rows is None:
        rows = max(8, TILE_BYTES // row_bytes // 8 * 8)  # a multiple of 8 rows: whole SIMD vectors
    rows = min(rows, seq_q)
    per_tile = max(1, TILE_BYTES // (row_bytes * rows)) if rows == seq_q or not whole_items else 1
    n_heads = lead[-1]
    return [(lead_index, slice(h, min(h + per_tile, n_heads)), slice(r, min(r + rows, seq_q)))
            for lead_index in np.ndindex(*lead[:-1])
            for h in range(0, n_heads, per_tile)
            for r in range(0, seq_q, rows)]


@overload
def _aligned(arr: _Array, ndim: int) -> _Array: ...
@overload
def _aligned(arr: None, ndim: int) -> None: ...
def _aligned(arr: _Array | None, ndim: int) -> _Array | None:
    """``arr`` with leading size-1 axes added up to ``ndim`` dimensions (as broadcasting would)."""
    if arr is None:
        return None
    aligned: _Array = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    return aligned


#: How far above the shift in use a score may lie: its ``exp`` stays below e²⁰ ≈ 5e8, far from overflow
#: even in float32 and summed over millions of keys. Softmax does not depend on the shift, so the fast
#: paths use this room to skip work: no shift at all when every row's maximum lies within ±20 of 0, and
#: (chunked attention) no rescaling until a key block tops the shift by more than 20.
EXP_HEADROOM = 20.0


def _unshifted_is_safe(row_max: FloatArray) -> bool:
    """Whether ``exp`` of the raw scores is safe for rows with these maxima (``-inf``: a masked row)."""
    if not row_max.max() <= EXP_HEADROOM:  # also False for NaN
        return False
    if row_max.min() >= -EXP_HEADROOM:  # the largest term of every row stays above e⁻²⁰
        return True
    return bool(((row_max >= -EXP_HEADROOM) | np.isneginf(row_max)).all())


def _shift_and_exp(scores: FloatArray) -> None:
    """``exp(scores - shift)`` in place on a tile ``(..., rows, keys)``: the softmax numerators.

    The shift is each row's maximum, or 0 when every maximum lies within ±:data:`EXP_HEADROOM` (one
    pass over the scores fewer; the normalised weights are the same). A row that is entirely ``-inf``
    (every key masked) becomes all zeros, never NaN.
    """
    row_max = scores.max(axis=-1, keepdims=True)  # (..., rows, 1)
    check_score_maxima(row_max)
    if not _unshifted_is_safe(row_max):
        row_max[np.isneginf(row_max)] = 0
        scores -= row_max
    np.exp(scores, out=scores)


#: exp of the headroom's two ends: the bounds :func:`_exp_and_sum` checks row sums against.
_EXP_CEILING, _EXP_FLOOR = math.exp(EXP_HEADROOM), math.exp(-EXP_HEADROOM)


@functools.lru_cache(maxsize=16)
def filled_vector(n: int, value: float, dtype: np.dtype[Any]) -> FloatArray:
    """A read-only vector of ``n`` copies of ``value``: a product with it sums (1) or averages (1/n) rows."""
    vector = np.full(n, value, dtype=dtype)
    vector.flags.writeable = False
    return vector


def _row_sums(block: FloatArray) -> FloatArray:
    """``block.sum(axis=-1, keepdims=True)`` as a product with a vector of ones: BLAS reads the rows of a
    tile several times faster than NumPy's summing loop does. The terms are positive, so another order of
    additions moves a sum only by rounding (the tests hold long sums to the exact one)."""
    sums: FloatArray = np.matmul(block, filled_vector(block.shape[-1], 1.0, block.dtype))[..., None]
    return sums  # (..., rows, 1)


def _exp_and_sum(block: FloatArray, least_sum: float) -> FloatArray | None:
    """``exp`` of a tile's scores (already shifted, or raw) in place and their row sums ``(..., rows, 1)``.

    A row's sum bounds its largest term: ``max ≤ sum ≤ n_keys · max``. So when no sum tops ``e²⁰``, no
    score lies more than :data:`EXP_HEADROOM` above the shift; and when every sum also reaches
    ``least_sum = n_keys · e⁻²⁰``, every row's maximum lies within the headroom of it: rows that the way
    with the maxima would not shift (again) either, found without the pass over the scores for them.
    Otherwise (a masked-out row sums to 0, an overflow to inf, NaN to NaN) this returns None, and as the
    scores are overwritten, the caller computes them again and takes the way with the maxima.
    """
    with np.errstate(over="ignore"):  # an overflow only sends the tile back
        np.exp(block, out=block)
    row_sum = _row_sums(block)  # (..., rows, 1)
    if row_sum.min() >= least_sum and row_sum.max() <= _EXP_CEILING:  # False for NaN
        return row_sum
    return None


def attend_tiles(q_scaled: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None = None,
                 bias: FloatArray | None = None, *, keep_scores: bool = True) -> FloatArray:
    """Attention on trusted input (``q_scaled`` already times ``1/√d_head``), tile by tile.

    Each tile is a block of query rows of one or a few (batch, head) items against all their keys: its
    scores are computed, shifted, exponentiated, summed and multiplied by the values while they sit in
    cache.

    Parameters
    ----------
    q_scaled : ndarray, shape (..., seq_q, d_head)
        The queries times ``1/√d_head``.
    k : ndarray, shape (..., seq_k, d_head)
    v : ndarray, shape (..., seq_k, d_v)
    mask : bool ndarray broadcastable to (..., seq_q, seq_k), optional
        True where a query may attend to a key.
    bias : ndarray broadcastable to (..., seq_q, seq_k), optional
    keep_scores : bool, default True
        Write each tile into its place of the full score tensor, allocated as the cost model says
        (:func:`mha.cost.memory_bytes`). With False each thread reuses one tile-sized buffer: the scores
        never exist all at once (what the layer does when no weights are asked for).

    Returns
    -------
    ndarray, shape (..., seq_q, d_v)

    Raises
    ------
    ValueError
        Scores that overflow the dtype (some ``q · k`` is inf or NaN).

    Examples
    --------
    >>> import mha
    >>> q, k, v = np.random.default_rng(0).standard_normal((3, 2, 5, 4))
    >>> out = attend_tiles(q / 2, k, v, keep_scores=False)
    >>> np.allclose(out, mha.scaled_dot_product_attention(q, k, v))
    True
    """
    in_lead = np.broadcast_shapes(q_scaled.shape[:-2], k.shape[:-2], v.shape[:-2])
    lead = in_lead or (1,)
    ndim = len(lead) + 2
    q_scaled, k, v = (_aligned(a, ndim) for a in (q_scaled, k, v))
    mask, bias = _aligned(mask, ndim), _aligned(bias, ndim)
    seq_q, seq_k, d_v, dtype = q_scaled.shape[-2], k.shape[-2], v.shape[-1], q_scaled.dtype
    result = np.empty(lead + (seq_q, d_v), dtype=dtype)  # (..., seq_q, d_v)
    scores = np.empty(lead + (seq_q, seq_k), dtype=dtype) if keep_scores else None  # (..., seq_q, seq_k)
    key_t = np.swapaxes(k, -1, -2)  # (..., d_head, seq_k), a view
    tiles = _plan(lead, seq_q, seq_k, dtype.itemsize, whole_items=keep_scores)
    tile_size = math.prod(cut.stop - cut.start for cut in tiles[0][1:]) * seq_k  # the first is the largest

    def tile_scores(block: FloatArray, lead_index: tuple[int, ...], heads: slice, rows: slice) -> None:
        """The tile's scores into ``block``: ``q kᵀ``, the bias added, masked keys at ``-inf``."""
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named from the row sums
            np.matmul(_part(q_scaled, lead_index, heads, rows), _part(key_t, lead_index, heads, slice(None)),
                      out=block)
        if bias is not None:
            block += _part(bias, lead_index, heads, rows)
        tile_mask = _part(mask, lead_index, heads, rows)
        if tile_mask is not None:
            np.copyto(block, -np.inf, where=np.logical_not(tile_mask))

    def run_one(tile: Tile, scratch: Scratch) -> None:
        lead_index, heads, rows = tile
        block: FloatArray
        if scores is not None:
            block = _part(scores, lead_index, heads, rows)  # (heads, rows, seq_k), a view of the scores
        else:  # this thread's buffer, reused by every tile it runs
            n_h, n_q = heads.stop - heads.start, rows.stop - rows.start
            if "scores" not in scratch:
                scratch["scores"] = np.empty(tile_size, dtype=dtype)
            block = scratch["scores"][:n_h * n_q * seq_k].reshape(n_h, n_q, seq_k)  # (heads, rows, seq_k)
        tile_scores(block, lead_index, heads, rows)
        row_sum = _exp_and_sum(block, seq_k * _EXP_FLOOR)  # raw scores: (heads, rows, 1), or None
        if row_sum is None:  # some row's raw exp is unsafe: its scores are gone, so compute them again
            tile_scores(block, lead_index, heads, rows)
            _shift_and_exp(block)
            row_sum = _row_sums(block)  # (heads, rows, 1)
            row_sum[row_sum == 0] = 1  # only fully masked rows sum to 0: they stay all zeros
        context = _part(result, lead_index, heads, rows)  # (heads, rows, d_v)
        # Normalise the (rows, d_v) output instead of the (rows, seq_k) weights: fewer divisions.
        np.matmul(block, _part(v, lead_index, heads, slice(None)), out=context)
        context /= row_sum

    run_tiles(run_one, tiles, workers_for_tiles())
    return result.reshape(in_lead + (seq_q, d_v))


def softmax_tiles(scores: FloatArray, mask: BoolArray | None = None, bias: FloatArray | None = None) -> None:
    """The textbook's softmax of attention scores, in place, tile by tile over threads: the same numbers.

    Each tile (a block of rows of one or a few (batch, head) items) runs the steps of
    :func:`mha.attention.attention_forward` between the two products, on its rows, while they sit in
    cache: the bias, the mask, the row maxima, the shift, ``exp``, the row sums and the division. A row's
    numbers do not depend on the rows beside it, so every weight comes out as on whole arrays, to the
    last bit; the products before and after stay whole (how BLAS blocks a product changes its rounding).

    Parameters
    ----------
    scores : ndarray, shape (..., seq_q, seq_k)
        Scaled scores in their final dtype; overwritten with the weights.
    mask : bool ndarray broadcastable to (..., seq_q, seq_k), optional
    bias : ndarray broadcastable to (..., seq_q, seq_k), optional

    Raises
    ------
    ValueError
        A row of scores whose maximum is ``+inf`` or NaN (``q · k`` overflowed).

    Examples
    --------
    >>> import mha
    >>> scores = np.random.default_rng(0).standard_normal((2, 3, 4))
    >>> expected = mha.softmax(scores)
    >>> softmax_tiles(scores)
    >>> np.array_equal(scores, expected)
    True
    """
    lead = scores.shape[:-2] or (1,)
    ndim = len(lead) + 2
    scores = _aligned(scores, ndim)
    mask, bias = _aligned(mask, ndim), _aligned(bias, ndim)

    def run_one(tile: Tile, scratch: Scratch) -> None:
        lead_index, heads, rows = tile
        block = _part(scores, lead_index, heads, rows)  # (heads, rows, seq_k), a view of the scores
        if bias is not None:
            block += _part(bias, lead_index, heads, rows)
        tile_mask = _part(mask, lead_index, heads, rows)
        if tile_mask is not None:
            np.copyto(block, -np.inf, where=~tile_mask)  # a masked key gets exp(-inf) = 0 weight
        row_max = block.max(axis=-1, keepdims=True)  # (heads, rows, 1)
        check_score_maxima(row_max)
        row_max[np.isneginf(row_max)] = 0  # a row of only -inf: all its weights 0
        with np.errstate(over="ignore"):
            np.subtract(block, row_max, out=block)
        np.exp(block, out=block)
        total = block.sum(axis=-1, keepdims=True)  # (heads, rows, 1)
        total[total == 0] = 1
        block /= total

    run_tiles(run_one, _plan(lead, scores.shape[-2], scores.shape[-1], scores.dtype.itemsize),
              workers_for_tiles())


def _raise_shift(run_max: FloatArray, block_max: FloatArray, run_sum: FloatArray | None,
                 acc: FloatArray) -> FloatArray:
    """The online softmax's shift after one more key block; rescales ``run_sum`` and ``acc`` in place.

    Softmax does not depend on the shift, which is there only to keep ``exp`` from overflowing. So the
    shift is raised, and the sums so far shrunk by ``exp(old - new)``, only for rows whose new block
    tops it by more than :data:`EXP_HEADROOM`, or that saw their first key (shift ``-inf``). In any other
    row the exponentials stay below e²⁰ and nothing is rescaled: most blocks skip the work.
    """
    raised = block_max > run_max + EXP_HEADROOM  # (heads, n_q, 1); -inf + headroom stays -inf
    if not raised.any():
        return run_max
    new_max = np.where(raised, block_max, run_max)
    rescale = np.subtract(run_max, new_max, where=raised, out=np.zeros_like(run_max))  # 0 where kept
    np.exp(rescale, out=rescale)  # 1 where kept; 0 where no key had been seen
    if run_sum is not None:
        run_sum *= rescale
    acc *= rescale
    return new_max


class _OnlineShift:
    """The per-row shift of one tile's online softmax, carried from key block to key block.

    :meth:`exponentiate` turns a block's scores into softmax numerators ``exp(score - shift)`` in place
    and returns their row sums. It first tries the way without maxima (the raw scores for the first
    block, the shift in use for later ones), which :func:`_exp_and_sum` accepts or sends back; only then
    does it take the block's maxima, setting or raising the shift (:func:`_raise_shift`).
    ``may_see_nothing``: whether a row of a block can be all ``-inf`` (a mask, or causal attention).
    """

    def __init__(self, may_see_nothing: bool) -> None:
        self.may_see_nothing = may_see_nothing
        # (heads, n_q, 1): the shift's rows as set, -inf for rows that saw no key
        self.run_max: FloatArray | None = None
        # (heads, n_q, 1): run_max with -inf replaced by 0, what is subtracted
        self.shift: FloatArray | None = None
        self.shifted = False  # whether any row's shift is not 0 (else no pass over the scores)
        self.all_seen = False  # whether every row has seen a key (then its shift is finite)

    def exponentiate(self, scores: FloatArray, run_sum: FloatArray | None, acc: FloatArray,
                     recompute: Callable[[], None]) -> FloatArray:
        """Numerators of one block in place; their row sums ``(heads, n_q, 1)``.

        ``run_sum`` and ``acc`` (None before the first block) are the sums and weighted values so far,
        rescaled in place if the shift rises; ``recompute()`` writes the block's scores again, for when
        the way without maxima has overwritten them and is sent back.
        """
        if self.run_max is None or self.all_seen:
            if self.run_max is None:  # the first block: try the raw scores (shift 0)
                block_sum = _exp_and_sum(scores, scores.shape[-1] * _EXP_FLOOR)
                if block_sum is not None:
                    self._use(np.zeros_like(block_sum))
            else:  # try the shift in use: no row of this block may top it by the headroom
                if self.shifted and self.shift is not None:
                    scores -= self.shift
                block_sum = _exp_and_sum(scores, 0.0)
            if block_sum is not None:
                return block_sum
            recompute()  # exp has overwritten the scores
        return self._exponentiate_with_maxima(scores, run_sum, acc)

    def _use(self, new_max: FloatArray) -> None:
        """Take ``new_max`` as the rows' shift; what follows from it is derived here once, not every block."""
        self.run_max = new_max
        seen_nothing = np.isneginf(new_max) if self.may_see_nothing else None
        self.all_seen = seen_nothing is None or not seen_nothing.any()
        shift = new_max if seen_nothing is None else np.where(seen_nothing, 0, new_max)
        self.shift = shift
        self.shifted = bool(shift.any())  # all 0 (the usual case): no pass over the scores

    def _exponentiate_with_maxima(self, scores: FloatArray, run_sum: FloatArray | None,
                                  acc: FloatArray) -> FloatArray:
        block_max = scores.max(axis=-1, keepdims=True)  # (heads, n_q, 1)
        check_score_maxima(block_max)
        if self.run_max is None:  # the first block sets the shift: its maxima, or 0 if that is safe
            new_max = block_max
            if _unshifted_is_safe(block_max):  # rows that saw no key yet stay at -inf
                new_max = np.where(np.isneginf(block_max), block_max, 0)
        else:
            new_max = _raise_shift(self.run_max, block_max, run_sum, acc)
        if new_max is not self.run_max:  # the shift was set or raised
            self._use(new_max)
        if self.shifted and self.shift is not None:
            scores -= self.shift  # no key seen yet (-inf): shift by 0, the sums stay zero
        np.exp(scores, out=scores)
        return _row_sums(scores)  # (heads, n_q, 1)


def chunked_tiles(q_scaled: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None, *,
                  causal: bool, block_size: int) -> FloatArray:
    """:func:`mha.chunked_attention` on trusted input: online softmax over key blocks, tiles over threads.

    Each thread holds one ``block_size × block_size`` tile of scores (of one or a few (batch, head) items)
    at a time, reused from tile to tile: memory does not grow with the sequence.

    Parameters
    ----------
    q_scaled : ndarray, shape (..., seq_q, d_head)
        The queries times ``1/√d_head``.
    k : ndarray, shape (..., seq_k, d_head)
    v : ndarray, shape (..., seq_k, d_v)
    mask : bool ndarray broadcastable to (..., seq_q, seq_k), or None
    causal : bool
        Query ``i`` sees keys up to ``i + seq_k - seq_q`` (end-aligned).
    block_size : int
        Keys (and queries) per block.

    Returns
    -------
    ndarray, shape (..., seq_q, d_v)

    Raises
    ------
    ValueError
        Scores that overflow the dtype (some ``q · k`` is inf or NaN).

    Examples
    --------
    >>> import mha
    >>> q, k, v = np.random.default_rng(0).standard_normal((3, 6, 4))
    >>> out = chunked_tiles(q / 2, k, v, None, causal=False, block_size=4)
    >>> np.allclose(out, mha.scaled_dot_product_attention(q, k, v))
    True
    """
    in_lead = np.broadcast_shapes(q_scaled.shape[:-2], k.shape[:-2], v.shape[:-2])
    lead = in_lead or (1,)
    ndim = len(lead) + 2
    q_scaled, k, v = (_aligned(a, ndim) for a in (q_scaled, k, v))
    mask = _aligned(mask, ndim)
    seq_q, seq_k, d_v, dtype = q_scaled.shape[-2], k.shape[-2], v.shape[-1], q_scaled.dtype
    offset = seq_k - seq_q  # end alignment: query i sits at position i + offset
    out = np.empty(lead + (seq_q, d_v), dtype=dtype)  # (..., seq_q, d_v)
    key_t = np.swapaxes(k, -1, -2)  # (..., d_head, seq_k), a view
    tiles = _plan(lead, seq_q, min(block_size, seq_k), dtype.itemsize, rows=block_size, whole_items=False)
    may_see_nothing = mask is not None or causal  # only then can a query's row of a block be all -inf

    max_heads, max_rows = (cut.stop - cut.start for cut in tiles[0][1:])  # the first tile is the largest

    def block_scores(scores: FloatArray, lead_index: tuple[int, ...], heads: slice, rows: slice,
                     keys: slice) -> None:
        """One block's scores into ``scores``: ``q kᵀ``, masked and future keys at ``-inf``."""
        key_block = _part(key_t, lead_index, heads, slice(None), keys)  # (heads, d_head, n_k)
        with np.errstate(over="ignore", invalid="ignore"):  # check_score_maxima names an overflow
            np.matmul(_part(q_scaled, lead_index, heads, rows), key_block, out=scores)
        tile_mask = _part(mask, lead_index, heads, rows, keys)
        if tile_mask is not None:
            np.copyto(scores, -np.inf, where=np.logical_not(tile_mask))
        if causal and keys.stop - 1 > rows.start + offset:  # the block reaches into some query's future
            future = np.arange(keys.start, keys.stop) > np.arange(rows.start, rows.stop)[:, None] + offset
            np.copyto(scores, -np.inf, where=future)  # future: (n_q, n_k)

    def run_one(tile: Tile, scratch: Scratch) -> None:
        lead_index, heads, rows = tile
        n_h, n_q = heads.stop - heads.start, rows.stop - rows.start
        if "scores" not in scratch:  # this thread's buffers, reused for every tile it runs
            scratch["scores"] = np.empty(max_heads * max_rows * min(block_size, seq_k), dtype=dtype)
            scratch["product"] = np.empty(max_heads * max_rows * d_v, dtype=dtype)
        acc = _part(out, lead_index, heads, rows)  # (heads, n_q, d_v): the running weighted sum, in place
        product = scratch["product"][:acc.size].reshape(acc.shape)  # (heads, n_q, d_v)
        online = _OnlineShift(may_see_nothing)
        run_sum: FloatArray | None = None  # (heads, n_q, 1), from the first key block on
        last_key = min(seq_k, rows.stop + offset) if causal else seq_k  # what the block's last query sees
        for j0 in range(0, last_key, block_size):
            keys = slice(j0, min(j0 + block_size, seq_k))
            n_k = keys.stop - keys.start
            scores = scratch["scores"][:n_h * n_q * n_k].reshape(n_h, n_q, n_k)  # (heads, n_q, n_k)
            recompute = functools.partial(block_scores, scores, lead_index, heads, rows, keys)
            recompute()
            block_sum = online.exponentiate(scores, run_sum, acc, recompute)  # (heads, n_q, 1)
            if run_sum is None:
                run_sum = block_sum
                np.matmul(scores, _part(v, lead_index, heads, keys), out=acc)
            else:
                run_sum += block_sum
                acc += np.matmul(scores, _part(v, lead_index, heads, keys), out=product)
        if run_sum is None:  # a causal block of queries before every key: nothing to see
            acc[...] = 0
            return
        run_sum[run_sum == 0] = 1  # queries that saw no key keep a zero output
        acc /= run_sum

    run_tiles(run_one, tiles, workers_for_tiles())
    return out.reshape(in_lead + (seq_q, d_v))
