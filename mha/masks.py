"""Boolean attention masks: True means "this query may attend to this key".

Masks broadcast against scores of shape ``(batch, n_heads, seq_q, seq_k)``. Combine masks with ``&``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mha.typing import ArrayLike, BoolArray
from mha.validation import check_positive_int

__all__ = ["causal_mask", "padding_mask", "torch_masks_to_mask"]


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
