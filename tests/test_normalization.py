"""Layer norm, checked against a loop with ``math.fsum``; float32 and large offsets included."""

import numpy as np
import pytest

import mha
from mha.normalization import LayerNorm, layer_norm
from tests.reference_block import layer_norm_loop


def test_layer_norm_equals_the_loop_reference_and_normalises_each_token():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 5.0, size=(2, 4, 10))
    gamma, beta = rng.standard_normal(10), rng.standard_normal(10)
    np.testing.assert_allclose(layer_norm(x, gamma, beta, eps=1e-5), layer_norm_loop(x, gamma, beta, 1e-5),
                               rtol=1e-12, atol=1e-12)
    y = LayerNorm(10)(x)
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1, rtol=1e-6)  # 1 - eps / var, var ~ 25


def test_layer_norm_float32_stays_float32_and_survives_a_large_offset():
    rng = np.random.default_rng(1)
    x64 = 1e4 + rng.standard_normal((8, 64))  # features share a large offset
    x32 = x64.astype(np.float32)
    y32 = LayerNorm(64, dtype=np.float32)(x32)
    assert y32.dtype == np.float32
    reference = layer_norm_loop(x32.astype(np.float64), np.ones(64), np.zeros(64), 1e-5)
    np.testing.assert_allclose(y32, reference, atol=2e-3)
    # the one-pass shortcut mean(x²) - mean(x)² loses everything at this offset in float32
    shortcut_var = (x32 * x32).mean(axis=-1) - x32.mean(axis=-1) ** 2
    true_var = x32.astype(np.float64).var(axis=-1)  # about 1
    assert np.abs(shortcut_var - true_var).max() > 0.5


def test_layer_norm_constant_row_gives_beta_not_nan():
    norm = LayerNorm(4)
    norm.beta = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_allclose(norm(np.full((2, 4), 7.0)), [[1, 2, 3, 4]] * 2)


def test_layer_norm_errors():
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., 4\)"):
        LayerNorm(4)(np.ones((2, 5)))
    with pytest.raises(ValueError, match="eps must be"):
        LayerNorm(4, eps=0)
    with pytest.raises(ValueError, match="finite"):
        layer_norm(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="gamma must have shape"):
        layer_norm(np.ones((2, 3)), gamma=np.ones(4))
    with pytest.raises(ValueError, match="eps = 1e-50 is 0 in float32: use at least 1.4e-45"):
        LayerNorm(4, eps=1e-50, dtype=np.float32)(np.ones((2, 4), dtype=np.float32))


def test_layer_norm_of_rows_whose_sums_overflow_is_right_and_quiet():
    """Rows of float32 values near its largest: their sum overflows, not only their squares."""
    import warnings

    big = np.float32(3.0e38)
    x = np.array([[big, big, big], [big, -big, -big], [big, -big, np.float32(1)]], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = layer_norm(x)
    expected = layer_norm(x.astype(np.float64) / 3e38)  # layer norm ignores a row's scale (but eps)
    assert y.dtype == np.float32 and np.isfinite(y).all()
    np.testing.assert_allclose(y, expected, atol=1e-5)
    np.testing.assert_array_equal(y[0], 0)  # a constant row normalises to zeros, not 0 / 0


@pytest.mark.parametrize(("x", "dtype"), [([300.0, -300.0, 3.0, 6.0], np.float16),  # squares beyond 65504
                                          ([1e200, -1e200, 0.0, 0.0], np.float64)])  # beyond 1.8e308
def test_layer_norm_of_values_whose_squares_overflow_is_still_right(x, dtype):
    exact = np.asarray(x, dtype=np.float64) / np.float64(np.max(np.abs(x)))  # the same row, scaled: safe
    expected = (exact - exact.mean()) / np.sqrt(((exact - exact.mean()) ** 2).mean())
    got = layer_norm(np.asarray(x, dtype=dtype)[None])
    assert got.dtype == dtype
    np.testing.assert_allclose(got[0], expected, rtol=2e-3 if dtype == np.float16 else 1e-12, atol=1e-3)


# ---------------------------------------------------------------------------------------------- RMS norm
def test_rms_norm_follows_its_formula_and_ignores_the_length():
    rng = np.random.default_rng(0)
    x, gain = rng.standard_normal((4, 7)), rng.standard_normal(7)
    expected = gain * x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(mha.rms_norm(x, gain), expected, rtol=1e-12)
    np.testing.assert_allclose(mha.rms_norm(1e6 * x), mha.rms_norm(1e3 * x), rtol=1e-9)  # eps negligible


def test_rms_norm_keeps_float32_and_survives_huge_and_zero_vectors():
    x = np.array([[3e20, 4e20], [0.0, 0.0]], dtype=np.float32)
    y = mha.rms_norm(x)
    assert y.dtype == np.float32 and np.isfinite(y).all()
    np.testing.assert_allclose(y[0], [0.8485281, 1.1313708], rtol=1e-6)
    np.testing.assert_array_equal(y[1], [0.0, 0.0])


def test_rms_norm_names_a_gain_of_the_wrong_size():
    with pytest.raises(ValueError, match="gain"):
        mha.rms_norm(np.ones((2, 4)), np.ones(3))
