"""The annex: the same attention, computed faster. Nothing a chapter needs to read, except the one on speed.

The textbook code (:mod:`mha.attention`, :mod:`mha.layers`, :mod:`mha.efficient`) is written to be read:
whole arrays, one step per line, the formula in the function you call. On a large problem that code
streams every score through memory several times and keeps one core busy while the other waits. This
annex computes the same numbers another way (scores in cache-sized tiles, tiles and whole examples spread
over threads, no pass the result does not need) and the textbook code opens one door to it, in the style
of nanoGPT's ``if self.flash: ... else: <the lesson>``::

    if not return_weights and fast.worth_it(n_scores):   # large, and nobody asked for the weights
        return fast.attention(q, k, v, mask, bias)        # same numbers, tile by tile
    scores = ...                                          # the lesson

The door opens when the problem has at least :data:`TILE_MIN_SCORES` scores. Without weights, the
annex skips every pass the output does not need, and the tests hold its results to the textbook's to
rounding; a layer asked for its weights (:func:`weighted_heads`) gets the textbook's own steps, row by
row, run tile by tile over the cores: the same numbers, to the last bit. Close the door to time or trace
the textbook path on a large problem::

    with mha.fast.disabled():
        layer(x)

or set the environment variable ``MHA_FAST=0``. ``MHA_NUM_THREADS`` caps the threads (``1``: none).

``import mha`` starts no thread: the pool starts the first time the door opens.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

from mha.fast.threads import blas_threads, worker_count
from mha.fast.tiles import TILE_MIN_SCORES, attend_tiles, chunked_tiles, softmax_tiles, split_batch
from mha.typing import BoolArray, FloatArray

#: A layer's checked arguments, as :class:`mha.layers.LayerInputs` holds them: query, key, value, mask,
#: bias and head mask.
LayerArguments = tuple[FloatArray, "FloatArray | None", "FloatArray | None", "BoolArray | None",
                       "FloatArray | None", "FloatArray | None"]
_Array = TypeVar("_Array", bound="np.ndarray[Any, Any]")

__all__ = ["worth_it", "disabled", "attention", "chunked_attention", "per_example", "weighted_heads",
           "blas_threads", "worker_count", "TILE_MIN_SCORES"]

#: Whether the door may open at all (``MHA_FAST=0`` closes it for the whole process).
_enabled = os.environ.get("MHA_FAST", "1") != "0"


def worth_it(n_scores: int) -> bool:
    """Whether a problem with ``n_scores`` attention scores takes the annex: large enough to pay for tiles.

    Parameters
    ----------
    n_scores : int
        ``batch * n_heads * seq_q * seq_k``, computed by the caller.

    Returns
    -------
    bool
        False below :data:`TILE_MIN_SCORES`, and always inside :func:`disabled` or with ``MHA_FAST=0``.

    Examples
    --------
    >>> worth_it(16), worth_it(8 * 8 * 512 * 512)
    (False, True)
    """
    return _enabled and n_scores >= TILE_MIN_SCORES


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Close the door inside a ``with`` block: every call runs the textbook code, whatever its size.

    Examples
    --------
    >>> with disabled():
    ...     worth_it(10**9)
    False
    """
    global _enabled
    before, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = before


def attention(q: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None = None,
              bias: FloatArray | None = None) -> FloatArray:
    """:func:`mha.scaled_dot_product_attention`'s output (no weights), tile by tile over threads.

    Inputs are trusted: checked by the caller, of one float dtype. Every score is written to memory once,
    as full attention and the cost model have it; :func:`per_example` (the layer) and
    :func:`chunked_attention` keep them in cache instead.

    Parameters
    ----------
    q : ndarray, shape (..., seq_q, d_head)
    k : ndarray, shape (..., seq_k, d_head)
    v : ndarray, shape (..., seq_k, d_v)
    mask : bool ndarray broadcastable to (..., seq_q, seq_k), optional
        True where a query may attend to a key.
    bias : ndarray broadcastable to (..., seq_q, seq_k), optional
        Added to the scaled scores.

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
    >>> q, k, v = np.random.default_rng(0).standard_normal((3, 2, 4, 5, 8))
    >>> np.allclose(attention(q, k, v), mha.scaled_dot_product_attention(q, k, v))
    True
    """
    return attend_tiles(_scaled(q), k, v, mask, bias, keep_scores=True)


def chunked_attention(q: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None = None, *,
                      causal: bool, block_size: int) -> FloatArray:
    """:func:`mha.chunked_attention` on trusted input: online softmax over key blocks, tiles over threads.

    Parameters
    ----------
    q : ndarray, shape (..., seq_q, d_head)
    k : ndarray, shape (..., seq_k, d_head)
    v : ndarray, shape (..., seq_k, d_v)
    mask : bool ndarray broadcastable to (..., seq_q, seq_k), optional
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
    >>> q, k, v = np.random.default_rng(0).standard_normal((3, 2, 6, 8))
    >>> out = chunked_attention(q, k, v, causal=True, block_size=4)
    >>> np.allclose(out, mha.scaled_dot_product_attention(q, k, v, mha.causal_mask(6)))
    True
    """
    return chunked_tiles(_scaled(q), k, v, mask, causal=causal, block_size=block_size)


def tiled_heads(q: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None = None,
                bias: FloatArray | None = None) -> tuple[FloatArray, None]:
    """The attention step of :class:`mha.MultiHeadAttention`, tile by tile, scores never all in memory.

    Takes and returns what the layer's ``attend`` step does: per-head ``q, k, v`` in, ``(context, None)``
    out (no weights).
    """
    return attend_tiles(_scaled(q), k, v, mask, bias, keep_scores=False), None


def weighted_heads(q: FloatArray, k: FloatArray, v: FloatArray, mask: BoolArray | None = None,
                   bias: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    """The attention step of :class:`mha.MultiHeadAttention` with its weights: the textbook's numbers.

    The two products are the textbook's, whole; between them, the softmax's passes over the scores run
    tile by tile, in cache and over the cores (:func:`mha.fast.tiles.softmax_tiles`).

    Parameters
    ----------
    q : ndarray, shape (batch, n_heads, seq_q, d_head)
    k, v : ndarray, shape (batch, n_heads, seq_k, d_head)
        Key/value heads already repeated for the query heads they serve.
    mask : bool ndarray broadcastable to (batch, n_heads, seq_q, seq_k), optional
    bias : ndarray broadcastable to (batch, n_heads, seq_q, seq_k), optional

    Returns
    -------
    context : ndarray, shape (batch, n_heads, seq_q, d_head)
    weights : ndarray, shape (batch, n_heads, seq_q, seq_k)
        Bit for bit :func:`mha.attention.attention_forward`'s.

    Raises
    ------
    ValueError
        Scores that overflow the dtype (some ``q · k`` is inf or NaN).

    Examples
    --------
    >>> from mha.attention import attention_forward
    >>> q, k, v = np.random.default_rng(0).standard_normal((3, 1, 2, 4, 8))
    >>> context, weights = weighted_heads(q, k, v)
    >>> np.array_equal(weights, attention_forward(q, k, v)[1])
    True
    """
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named from the row maxima
        scores: FloatArray = _scaled(q) @ np.swapaxes(k, -1, -2)  # (..., seq_q, seq_k)
    softmax_tiles(scores, mask, bias)  # the weights, in place
    return scores @ v, scores  # (..., seq_q, d_v), (..., seq_q, seq_k)


def per_example(forward: Callable[..., tuple[FloatArray, Any]], inputs: LayerArguments) -> FloatArray:
    """Run a layer's own forward pass on one example at a time, the examples spread over threads.

    The layer's projections, heads and output projection run as its own code; its attention step is the
    annex's, tile by tile, the scores never all in memory.

    Parameters
    ----------
    forward : callable
        The layer's textbook forward, ``forward(query, key, value, mask, bias, head_mask, attend=...)``
        returning ``(output, cache)`` (:meth:`mha.MultiHeadAttention._forward`).
    inputs : tuple
        Its checked arguments (:class:`mha.layers.LayerInputs`): query, key and value with the batch first;
        mask and bias broadcastable to ``(batch, n_heads, seq_q, seq_k)``; head mask.

    Returns
    -------
    ndarray, shape (batch, seq_q, d_model)
        The output, typed like the query.

    Raises
    ------
    ValueError
        Scores that overflow the dtype; anything ``forward`` raises is raised here too.

    Examples
    --------
    >>> import mha
    >>> from mha.layers import LayerInputs
    >>> layer, x = mha.MultiHeadAttention(8, 2, rng=0), np.random.default_rng(0).standard_normal((2, 3, 8))
    >>> out = per_example(layer._forward, LayerInputs(x, None, None, None, None, None))
    >>> np.allclose(out, layer(x))
    True
    """
    query, key, value, mask, bias, head_mask = inputs
    batched = (query, key, value, _four_d(mask), _four_d(bias))  # batch first (or 1: shared by all)

    def one_example(query: FloatArray, key: FloatArray | None, value: FloatArray | None,
                    mask: BoolArray | None, bias: FloatArray | None) -> FloatArray:
        return forward(query, key, value, mask, bias, head_mask, attend=tiled_heads)[0]

    return split_batch(one_example, batched, query.shape, query.dtype)


def _four_d(arr: _Array | None) -> _Array | None:
    """A mask or bias with leading axes of 1 up to (batch, n_heads, seq_q, seq_k); None stays None."""
    if arr is None:
        return None
    four_d: _Array = arr.reshape((1,) * (4 - arr.ndim) + arr.shape)
    return four_d


def _scaled(q: FloatArray) -> FloatArray:
    """``q / √d_head`` in q's dtype: the scale folded into the queries, as the textbook code does."""
    scaled: FloatArray = q * q.dtype.type(1.0 / math.sqrt(q.shape[-1]))
    return scaled
