"""Central finite differences, the independent yardstick for every backward pass in the package."""

from __future__ import annotations

import numpy as np

STEP = 1e-6


def numerical_gradient(loss, arr: np.ndarray, step: float = STEP) -> np.ndarray:
    """d loss() / d arr by central differences, nudging ``arr`` in place (it is restored afterwards).

    ``loss`` takes no arguments and must read ``arr`` (or a view of the same memory) when called.
    """
    grad = np.zeros(arr.shape, dtype=np.float64)
    for index in np.ndindex(arr.shape):  # arr may be a strided view (e.g. W_q inside the fused W_qkv)
        original = arr[index]
        arr[index] = original + step
        up = loss()
        arr[index] = original - step
        down = loss()
        arr[index] = original
        grad[index] = (up - down) / (2 * step)
    return grad

def assert_gradients_match(analytic: np.ndarray, numeric: np.ndarray, name: str) -> None:
    """Tight agreement in float64: relative to the gradient's overall size, not entry by entry."""
    assert analytic.shape == numeric.shape, f"{name}: shape {analytic.shape} != {numeric.shape}"
    scale = max(1.0, float(np.abs(numeric).max()))
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7 * scale, err_msg=name)
