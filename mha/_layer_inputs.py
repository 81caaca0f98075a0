"""Validation of a :class:`~mha.layers.MultiHeadAttention` call: inputs, masks, head mask.

Every check raises an error that names the argument, the shape or dtype expected and what arrived.
"""

from __future__ import annotations

import numpy as np

from mha._features import promote
from mha._validation import as_float_array, check_bool_mask, check_broadcastable, check_finite, check_flag
from mha.masks import causal_mask


def combine_masks(layer, mask, causal: bool, batch: int, seq_q: int, seq_k: int):
    """Validate ``mask`` against the scores (batch, n_heads, seq_q, seq_k) and add the causal mask."""
    scores_shape = (batch, layer.n_heads, seq_q, seq_k)
    if mask is not None:
        mask = check_broadcastable(check_bool_mask(mask), scores_shape)
        if mask.ndim > 4:
            raise ValueError(f"mask must have at most 4 dimensions, got shape {mask.shape}")
    if check_flag(causal, "causal"):
        mask = causal_mask(seq_q, seq_k) if mask is None else mask & causal_mask(seq_q, seq_k)
    return mask


def check_head_mask(layer, head_mask, dtype):
    """``head_mask`` as an (n_heads,) array of the compute dtype, or None."""
    if head_mask is None:
        return None
    head_mask = as_float_array(head_mask, "head_mask")
    if head_mask.shape != (layer.n_heads,):
        raise ValueError(f"head_mask must have shape (n_heads,) = ({layer.n_heads},), "
                         f"got {head_mask.shape}")
    check_finite(head_mask, "head_mask")
    return head_mask.astype(dtype, copy=False)


def check_inputs(layer, query, key, value):
    """Validate the layer's inputs; return them batched and promoted, and whether they were unbatched."""
    if key is None and value is not None:
        raise ValueError("value was given without key; pass key too (or neither for self-attention)")
    query = _check_input(query, "query", layer.d_model)
    unbatched = query.ndim == 2
    if key is None and not layer.fused:
        raise ValueError(
            f"this layer expects keys of width kdim={layer.kdim} and values of width vdim={layer.vdim}: "
            "pass key and value (self-attention needs kdim == vdim == d_model)"
        )
    if key is None:
        return promote(query[None] if unbatched else query, layer.dtype), None, None, unbatched
    same = value is None or value is key
    key = _check_input(key, "key", layer.kdim)
    value = key if same else _check_input(value, "value", layer.vdim)
    if same and layer.kdim != layer.vdim:
        raise ValueError(f"value must be given: kdim={layer.kdim} differs from vdim={layer.vdim}")
    for name, arr in (("key", key), ("value", value)):
        if (arr.ndim == 2) != unbatched:
            raise ValueError(
                f"query has shape {query.shape} but {name} has shape {arr.shape}: "
                "pass all inputs batched (batch, seq, dim) or all unbatched (seq, dim)"
            )
    if key.shape[:-1] != value.shape[:-1]:
        raise ValueError(f"key {key.shape} and value {value.shape} must share (batch, seq_k)")
    if not unbatched and key.shape[0] != query.shape[0]:
        raise ValueError(f"query has batch {query.shape[0]} but key has batch {key.shape[0]}")
    if unbatched:
        query, key, value = query[None], key[None], value[None]
    # One dtype for all three, by NumPy's promotion with the weights: a float64 key makes a float32 layer
    # compute in float64 throughout, so its output and its weights agree.
    dtype = np.result_type(query, key, value, layer.dtype)
    query, key = query.astype(dtype, copy=False), key.astype(dtype, copy=False)
    return query, key, key if same else value.astype(dtype, copy=False), unbatched


def _check_input(x, name, dim):
    x = as_float_array(x, name)
    if x.ndim not in (2, 3) or x.shape[-1] != dim or x.shape[-2] == 0:
        raise ValueError(
            f"{name} must have shape (batch, seq, {dim}) or (seq, {dim}) with seq >= 1, got {x.shape}"
        )
    check_finite(x, name)
    return x
