"""mha._features.token_matmul: one BLAS call over all tokens, the same numbers as ``x @ W``."""

from __future__ import annotations

import numpy as np
import pytest

from mha._features import token_matmul


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5), (2, 1, 3, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_equals_matmul_for_any_leading_axes(shape, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    W = rng.standard_normal((5, 7)).astype(dtype)
    out = token_matmul(x, W)
    expected = np.einsum("...i,ij->...j", x.astype(np.float64), W.astype(np.float64))
    assert out.shape == shape[:-1] + (7,) and out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_non_contiguous_input():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6, 3)).transpose(1, 0, 2)  # (6, 4, 3), not C-contiguous
    W = rng.standard_normal((3, 2))
    np.testing.assert_allclose(token_matmul(x, W), np.einsum("abi,ij->abj", x, W), rtol=1e-12)
    assert token_matmul(x, W).shape == (6, 4, 2)
