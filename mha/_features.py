"""Checks shared by the layers that act on a feature axis (layer norm, feed-forward, block)."""

from __future__ import annotations

import numpy as np

from mha._validation import as_float_array, check_finite


def check_features(x, name: str, d_model: int) -> np.ndarray:
    """``x`` as a float array of shape ``(..., d_model)`` with finite entries, or a clear error."""
    x = as_float_array(x, name)
    if x.ndim < 1 or x.shape[-1] != d_model:
        raise ValueError(f"{name} must have shape (..., {d_model}), got {x.shape}")
    check_finite(x, name)
    return x


def promote(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """NumPy's promotion of input and weights: float32 input and float32 weights stay float32."""
    return x.astype(np.result_type(x, dtype), copy=False)
