"""Boolean attention masks: True means "this query may attend to this key".

Masks broadcast against scores of shape ``(batch, n_heads, seq_q, seq_k)``. Combine masks with ``&``
(both allow) and ``|`` (either allows).

Besides the causal and padding masks, the patterns of sparse attention: a sliding window (a band of the
last ``window`` tokens, optionally with a few *sink* tokens at the start), strided attention, global
tokens and block-sparse attention. Each says which scores exist; :func:`mha.cost.pattern_cost` counts
what computing only those costs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mha.typing import ArrayLike, BoolArray, Seed
from mha.validation import as_generator, check_positive_int

__all__ = ["causal_mask", "padding_mask", "torch_masks_to_mask", "sliding_window_mask", "strided_mask",
           "global_tokens_mask", "block_sparse_mask"]


def causal_mask(seq_q: int, seq_k: int | None = None) -> BoolArray:
    """Let each query see its own position and the past, never the future.

    The mask is aligned to the *end*: query ``i`` is the token at position ``seq_k - seq_q + i``, so with a
    KV cache (``seq_k > seq_q``, the new queries come last) the last query sees every key. With
    ``seq_k < seq_q`` the first ``seq_q - seq_k`` queries see no key at all (zero output).

    Parameters
    ----------
    seq_q : int
        Number of queries.
    seq_k : int, optional
        Number of keys; defaults to ``seq_q``.

    Returns
    -------
    ndarray of bool, shape (seq_q, seq_k)

    Raises
    ------
    ValueError
        ``seq_q`` or ``seq_k`` is below 1.
    TypeError
        ``seq_q`` or ``seq_k`` is not an integer.

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    >>> causal_mask(2, 4).astype(int)  # two new tokens after two cached ones
    array([[1, 1, 1, 0],
           [1, 1, 1, 1]])
    """
    seq_q = check_positive_int(seq_q, "seq_q")
    seq_k = seq_q if seq_k is None else check_positive_int(seq_k, "seq_k")
    return np.tri(seq_q, seq_k, k=seq_k - seq_q, dtype=bool)


def padding_mask(lengths: ArrayLike, seq_k: int) -> BoolArray:
    """Hide the padding at the end of each sequence in a ragged batch.

    Parameters
    ----------
    lengths : array_like of int, shape (batch,)
        The true length of each sequence, between 0 and ``seq_k``.
    seq_k : int
        The padded length.

    Returns
    -------
    ndarray of bool, shape (batch, 1, 1, seq_k)
        Broadcasts over heads and queries.

    Raises
    ------
    ValueError
        A length outside ``[0, seq_k]``, or ``seq_k`` below 1.
    TypeError
        ``lengths`` is not a 1-D array of integers, or ``seq_k`` not an integer.

    Examples
    --------
    >>> padding_mask([2, 4], 4)[:, 0, 0].astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 1, 1]])
    """
    seq_k = check_positive_int(seq_k, "seq_k")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu":
        raise TypeError(
            f"lengths must be a 1-D array of integers (one per sequence), got dtype {lengths.dtype} "
            f"and shape {lengths.shape}"
        )
    if lengths.size and (lengths.min() < 0 or lengths.max() > seq_k):
        raise ValueError(f"every length must lie in [0, seq_k={seq_k}], got {lengths.tolist()}")
    keep = np.arange(seq_k) < lengths[:, None]  # (batch, seq_k)
    return keep[:, None, None, :]  # (batch, 1, 1, seq_k)


def torch_masks_to_mask(attn_mask: ArrayLike | None = None, key_padding_mask: ArrayLike | None = None, *,
                        n_heads: int | None = None) -> BoolArray | None:
    """Translate PyTorch's ``nn.MultiheadAttention`` masks into one mask of this package.

    PyTorch's boolean masks mean the opposite: True = *not* allowed. Its float ``attn_mask`` is added to the
    scores; only ``0`` / ``-inf`` float masks have a boolean meaning and are accepted here.

    Parameters
    ----------
    attn_mask : array_like, shape (seq_q, seq_k) or (batch * n_heads, seq_q, seq_k), optional
    key_padding_mask : array_like, shape (batch, seq_k) or (seq_k,), optional
        True (or ``-inf``) marks padding; 1-D for unbatched inputs.
    n_heads : int, optional
        Needed to unfold a 3-D ``attn_mask``.

    Returns
    -------
    ndarray of bool or None
        Broadcastable to (batch, n_heads, seq_q, seq_k); None when both inputs are None.

    Raises
    ------
    ValueError
        A mask of another shape, a 3-D ``attn_mask`` without ``n_heads`` (or not a multiple of it), masks
        that disagree on batch or ``seq_k``, or a float mask with entries other than 0 and ``-inf``.
    TypeError
        A mask that is neither bool nor float.

    Examples
    --------
    >>> blocked = np.triu(np.ones((3, 3), dtype=bool), k=1)  # PyTorch's causal mask
    >>> np.array_equal(torch_masks_to_mask(blocked), causal_mask(3))
    True
    """
    allowed = None
    if attn_mask is not None:
        allowed = _allowed_from_torch(np.asarray(attn_mask), "attn_mask")
        if allowed.ndim == 3:
            if n_heads is None:
                raise ValueError("a 3-D attn_mask (batch * n_heads, seq_q, seq_k) needs n_heads=")
            n_heads = check_positive_int(n_heads, "n_heads")
            if allowed.shape[0] % n_heads:
                raise ValueError(
                    f"attn_mask's first dimension {allowed.shape[0]} is not a multiple of n_heads={n_heads}"
                )
            allowed = allowed.reshape(-1, n_heads, *allowed.shape[1:])  # (batch, n_heads, seq_q, seq_k)
        elif allowed.ndim != 2:
            raise ValueError(
                "attn_mask must have shape (seq_q, seq_k) or (batch * n_heads, seq_q, seq_k), "
                f"got {allowed.shape}"
            )
    if key_padding_mask is not None:
        padding = _allowed_from_torch(np.asarray(key_padding_mask), "key_padding_mask")
        if padding.ndim not in (1, 2):
            raise ValueError(
                "key_padding_mask must have shape (batch, seq_k), or (seq_k,) for unbatched inputs, "
                f"got {padding.shape}"
            )
        keep = padding[:, None, None, :] if padding.ndim == 2 else padding[None, None, :]
        # keep: (batch, 1, 1, seq_k), or (1, 1, seq_k) for unbatched inputs
        if allowed is not None and allowed.shape[-1] != keep.shape[-1]:
            raise ValueError(f"attn_mask {allowed.shape} and key_padding_mask {padding.shape} must agree on "
                             f"seq_k, their last dimension: got {allowed.shape[-1]} and {keep.shape[-1]}")
        if allowed is None:
            allowed = keep
        else:
            try:
                allowed = allowed & keep
            except ValueError:  # a 3-D attn_mask's batch and the padding's batch differ
                raise ValueError(f"attn_mask {tuple(allowed.shape)} (as (batch, n_heads, seq_q, seq_k)) "
                                 f"and key_padding_mask {padding.shape} (batch, seq_k) must agree on "
                                 "batch") from None
    return allowed


def _allowed_from_torch(mask: np.ndarray[Any, Any], name: str) -> BoolArray:
    """PyTorch's mask (bool True = blocked, or additive float 0 / -inf) as True = may attend."""
    allowed: BoolArray
    if mask.dtype == np.bool_:
        allowed = ~mask
        return allowed
    if mask.dtype.kind == "f":
        if not np.all((mask == 0) | np.isneginf(mask)):
            raise ValueError(
                f"a float {name} is an additive bias; only 0 / -inf entries translate to a boolean "
                "mask (pass other biases through `bias=`)"
            )
        allowed = mask == 0
        return allowed
    raise TypeError(f"{name} must be bool or float, got dtype {mask.dtype}")


# ---------------------------------------------------------------------------------------- sparse patterns
def sliding_window_mask(seq_q: int, seq_k: int | None = None, *, window: int,
                        sinks: int = 0) -> BoolArray:
    """Causal attention to the last ``window`` tokens only (a band), plus ``sinks`` tokens at the start.

    Query ``i`` sits at position ``p = seq_k - seq_q + i`` (end-aligned, as in :func:`causal_mask`) and may
    see key ``j`` when ``0 <= p - j < window``: itself and the ``window - 1`` tokens before it. Mistral and
    Gemma 2's local layers attend this way. With ``sinks > 0`` every query also sees the first ``sinks``
    keys, as StreamingLLM keeps them (never beyond its own position: the mask stays causal).

    Parameters
    ----------
    seq_q : int
    seq_k : int, optional
        Defaults to ``seq_q``.
    window : int
        Keys a query sees counting itself, >= 1. ``window >= seq_k`` gives :func:`causal_mask`.
    sinks : int, default 0
        Leading keys every (later) query may see as well.

    Returns
    -------
    ndarray of bool, shape (seq_q, seq_k)

    Raises
    ------
    ValueError
        ``seq_q``, ``seq_k`` or ``window`` below 1, or ``sinks`` below 0.
    TypeError
        Any of them not an integer.

    Examples
    --------
    >>> sliding_window_mask(5, window=2).astype(int)
    array([[1, 0, 0, 0, 0],
           [1, 1, 0, 0, 0],
           [0, 1, 1, 0, 0],
           [0, 0, 1, 1, 0],
           [0, 0, 0, 1, 1]])
    >>> sliding_window_mask(5, window=2, sinks=1)[4].astype(int)  # the last query: a sink and its window
    array([1, 0, 0, 1, 1])
    """
    seq_q = check_positive_int(seq_q, "seq_q")
    seq_k = seq_q if seq_k is None else check_positive_int(seq_k, "seq_k")
    window = check_positive_int(window, "window")
    sinks = check_positive_int(sinks, "sinks", minimum=0)
    query_pos = np.arange(seq_k - seq_q, seq_k)  # (seq_q,), end-aligned
    behind = query_pos[:, None] - np.arange(seq_k)[None, :]  # (seq_q, seq_k): how far back each key is
    in_window = (behind >= 0) & (behind < window)
    is_sink = (np.arange(seq_k) < sinks)[None, :] & (behind >= 0)  # (seq_q, seq_k)
    return in_window | is_sink


def strided_mask(seq: int, stride: int) -> BoolArray:
    """The two heads of the Sparse Transformer's strided pattern, joined: local and every ``stride``-th.

    Query ``i`` sees key ``j <= i`` when ``i - j < stride`` (the recent past) or ``i - j`` is a multiple
    of ``stride`` (a summary column every ``stride`` tokens back). Two layers of it connect any two
    tokens, with about ``2 seq / stride + stride`` keys per query.

    Parameters
    ----------
    seq : int
        Number of tokens (queries and keys).
    stride : int
        Width of the local band, and the step between summary columns.

    Returns
    -------
    ndarray of bool, shape (seq, seq)

    Raises
    ------
    ValueError
        ``seq`` or ``stride`` below 1.
    TypeError
        Either not an integer.

    Examples
    --------
    >>> strided_mask(7, 3)[6].astype(int)  # the last token: its two predecessors, and 3 and 6 back
    array([1, 0, 0, 1, 1, 1, 1])
    """
    seq = check_positive_int(seq, "seq")
    stride = check_positive_int(stride, "stride")
    behind = np.arange(seq)[:, None] - np.arange(seq)[None, :]  # (seq_q, seq_k): i - j
    allowed: BoolArray = (behind >= 0) & ((behind < stride) | (behind % stride == 0))
    return allowed


def global_tokens_mask(seq: int, n_global: int, *, window: int) -> BoolArray:
    """A (non-causal) local band of ``window`` tokens each side, plus ``n_global`` global tokens.

    The Longformer/BigBird pattern for encoders: token ``i`` sees ``j`` when ``|i - j| < window``; the
    first ``n_global`` tokens (e.g. ``[CLS]``) see every token and are seen by every token.

    Parameters
    ----------
    seq : int
        Number of tokens.
    n_global : int
        Leading tokens that see and are seen by all, >= 0.
    window : int
        Half-width of the band, >= 1 (1 is the token itself).

    Returns
    -------
    ndarray of bool, shape (seq, seq)

    Raises
    ------
    ValueError
        ``seq`` or ``window`` below 1, or ``n_global`` below 0.
    TypeError
        Any of them not an integer.

    Examples
    --------
    >>> global_tokens_mask(6, 1, window=2).astype(int)
    array([[1, 1, 1, 1, 1, 1],
           [1, 1, 1, 0, 0, 0],
           [1, 1, 1, 1, 0, 0],
           [1, 0, 1, 1, 1, 0],
           [1, 0, 0, 1, 1, 1],
           [1, 0, 0, 0, 1, 1]])
    """
    seq = check_positive_int(seq, "seq")
    n_global = check_positive_int(n_global, "n_global", minimum=0)
    window = check_positive_int(window, "window")
    positions = np.arange(seq)
    local = np.abs(positions[:, None] - positions[None, :]) < window  # (seq, seq)
    is_global = positions < n_global  # (seq,)
    allowed: BoolArray = local | is_global[:, None] | is_global[None, :]
    return allowed


def block_sparse_mask(seq: int, block: int, *, local_blocks: int = 1, global_blocks: int = 1,
                      random_blocks: int = 0, rng: Seed = None) -> BoolArray:
    """BigBird's block pattern: whole ``block × block`` tiles are either computed or skipped.

    Query block ``b`` computes the tiles of its ``local_blocks`` neighbours on each side (and its own),
    the first ``global_blocks`` blocks (which, in turn, see everything) and ``random_blocks`` other
    blocks drawn from ``rng``. Tiles suit hardware: each is one dense product.

    Parameters
    ----------
    seq, block : int
        ``block`` must divide ``seq``.
    local_blocks, global_blocks, random_blocks : int
    rng : numpy.random.Generator or int, optional
        Draws the random blocks; required when ``random_blocks > 0``.

    Returns
    -------
    ndarray of bool, shape (seq, seq)

    Raises
    ------
    ValueError
        ``block`` does not divide ``seq``, a count below its minimum, or ``random_blocks > 0`` without
        ``rng``.
    TypeError
        A count that is not an integer.

    Examples
    --------
    >>> m = block_sparse_mask(8, 2, local_blocks=0, global_blocks=1)
    >>> m[::2, ::2].astype(int)  # one entry per tile
    array([[1, 1, 1, 1],
           [1, 1, 0, 0],
           [1, 0, 1, 0],
           [1, 0, 0, 1]])
    """
    seq, block = check_positive_int(seq, "seq"), check_positive_int(block, "block")
    if seq % block:
        raise ValueError(f"block={block} must divide seq={seq} (tiles are whole blocks)")
    local_blocks = check_positive_int(local_blocks, "local_blocks", minimum=0)
    global_blocks = check_positive_int(global_blocks, "global_blocks", minimum=0)
    random_blocks = check_positive_int(random_blocks, "random_blocks", minimum=0)
    if random_blocks and rng is None:
        raise ValueError("random_blocks > 0 needs rng= (a numpy.random.Generator or a seed)")
    n = seq // block
    tiles = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]) <= local_blocks  # (n, n) query × key blocks
    tiles[:global_blocks, :] = True
    tiles[:, :global_blocks] = True
    if random_blocks:
        rng = as_generator(rng)
        for row in range(global_blocks, n):  # one draw per query block: a few blocks, not a loop over tokens
            free = np.flatnonzero(~tiles[row])
            tiles[row, rng.choice(free, size=min(random_blocks, free.size), replace=False)] = True
    return np.kron(tiles, np.ones((block, block), dtype=bool)).astype(bool)  # (seq, seq)
