"""The feed-forward network and GELU, checked against the formula token by token and against ``math.erf``."""

import numpy as np
import pytest

from mha.feed_forward import FeedForward, gelu
from tests.reference_block import exact_gelu


def test_gelu_is_close_to_the_exact_erf_form_and_keeps_float32():
    x = np.linspace(-6, 6, 241)
    np.testing.assert_allclose(gelu(x), exact_gelu(x), atol=1e-3)
    assert gelu(x.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_feed_forward_equals_its_formula_token_by_token(activation):
    ffn = FeedForward(6, 24, activation=activation, rng=0)
    rng = np.random.default_rng(1)
    ffn.b_1, ffn.b_2 = rng.standard_normal(24), rng.standard_normal(6)
    x = rng.standard_normal((2, 5, 6))
    act = exact_gelu if activation == "gelu" else (lambda h: np.maximum(h, 0))
    tolerance = 2e-3 if activation == "gelu" else 1e-12
    for b in range(2):
        for t in range(5):  # position-wise: each token alone gives the same answer
            expected = act(x[b, t] @ ffn.W_1 + ffn.b_1) @ ffn.W_2 + ffn.b_2
            np.testing.assert_allclose(ffn(x)[b, t], expected, atol=tolerance)
            np.testing.assert_allclose(ffn(x[b, t]), ffn(x)[b, t], rtol=1e-12)


def test_feed_forward_errors_and_no_bias():
    assert set(FeedForward(4, 8, bias=False).parameters()) == {"W_1", "W_2"}
    with pytest.raises(ValueError, match="activation must be one of"):
        FeedForward(4, 8, activation="swish")
    with pytest.raises(ValueError, match=r"activation must be one of .* got \['gelu'\]"):
        FeedForward(4, 8, activation=["gelu"])  # not a TypeError from a dict lookup


# --- erf and the exact (erf) GELU ---------------------------------------------------------------------------

import math  # noqa: E402

from mha.feed_forward import ACTIVATIONS, erf, gelu_exact, relu  # noqa: E402


def math_erf(x):
    return np.array([math.erf(v) for v in np.ravel(x)]).reshape(np.shape(x))


def test_erf_matches_math_erf_on_a_dense_grid():
    x = np.linspace(-8.0, 8.0, 160_001)  # steps of 1e-4, through 0
    result = erf(x)
    assert result.dtype == np.float64 and result.shape == x.shape
    assert np.abs(result - math_erf(x)).max() < 2e-7


def test_erf_is_odd_bounded_and_saturates():
    x = np.random.default_rng(0).standard_normal(1000) * 3
    x = x[x != 0]
    np.testing.assert_array_equal(erf(-x), -erf(x))
    assert np.all(np.abs(erf(x)) <= 1.0)
    np.testing.assert_array_equal(erf(np.array([-np.inf, -40.0, 40.0, np.inf])), [-1.0, -1.0, 1.0, 1.0])
    assert abs(float(erf(np.array(0.0)))) < 2e-7
    assert np.isnan(erf(np.array([np.nan]))).all()


def test_erf_keeps_float32_and_its_accuracy():
    x = np.linspace(-5.0, 5.0, 2001, dtype=np.float32)
    result = erf(x)
    assert result.dtype == np.float32
    assert np.abs(result - math_erf(x.astype(np.float64))).max() < 1e-6  # float32 resolution near 1: 6e-8


def test_erf_of_a_0d_array_integers_and_lists():
    zero_d = erf(np.array(0.5))
    assert np.shape(zero_d) == ()
    assert float(zero_d) == pytest.approx(math.erf(0.5), abs=2e-7)
    assert np.shape(erf(0.5)) == () and float(erf(-1.25)) == pytest.approx(math.erf(-1.25), abs=2e-7)
    assert erf(np.float32(0.5)).dtype == np.float32 and np.shape(erf(np.float32(0.5))) == ()
    ints = erf(np.arange(-3, 4))
    assert ints.dtype == np.float64
    np.testing.assert_allclose(ints, math_erf(np.arange(-3, 4)), atol=2e-7)
    np.testing.assert_allclose(erf([[0.1, -2.0], [1.5, 0.0]]), math_erf([[0.1, -2.0], [1.5, 0.0]]), atol=2e-7)
    assert erf(np.zeros((2, 0, 3))).shape == (2, 0, 3)


def test_erf_and_gelu_exact_leave_their_input_alone():
    x = np.linspace(-3.0, 3.0, 13)
    copy = x.copy()
    erf(x)
    gelu_exact(x)
    np.testing.assert_array_equal(x, copy)


def _x_phi(x: np.ndarray) -> np.ndarray:
    """x Φ(x) in float64 from math.erfc, accurate to the last digit in both tails."""
    return np.array([v * 0.5 * math.erfc(-v / math.sqrt(2)) for v in np.asarray(x, dtype=np.float64)])


def test_gelu_exact_is_x_times_the_normal_cdf():
    x = np.concatenate([np.linspace(-12.0, 12.0, 48_001), -np.geomspace(1e-8, 12.0, 500),
                        np.geomspace(1e-8, 12.0, 500)])
    result = gelu_exact(x)
    assert result.dtype == np.float64
    # The documented bound: 7.5e-8 |x| (erf's 1.5e-7, halved), both signs, through 0, into both tails.
    assert (np.abs(result - _x_phi(x)) / np.maximum(1e-300, np.abs(x))).max() < 7.5e-8
    x32 = x.astype(np.float32)
    result32 = gelu_exact(x32)
    assert result32.dtype == np.float32  # within float32's own rounding of values up to 12
    assert (np.abs(result32 - _x_phi(x32)) / np.maximum(1.0, np.abs(x32))).max() < 2e-7
    assert np.shape(gelu_exact(np.array(1.0))) == ()
    assert float(gelu_exact(np.array(1.0))) == pytest.approx(0.5 * (1 + math.erf(1 / math.sqrt(2))), abs=1e-7)
    np.testing.assert_allclose(gelu_exact(np.arange(-2, 3)), exact_gelu(np.arange(-2, 3)), atol=1.5e-7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gelu_exact_goes_to_its_limits_far_out(dtype):
    """x Φ(x) is x far right and 0 far left: no NaN, no overflow warning (x² is inf far out)."""
    x = np.array([20.0, 1e3, 1e6, 1e30, -20.0, -1e3, -1e6, -1e30], dtype=dtype)  # 1e30² overflows float32
    result = gelu_exact(x)
    np.testing.assert_array_equal(result[:4], x[:4])
    np.testing.assert_array_equal(result[4:], 0.0)
    assert np.isnan(gelu_exact(np.array([np.nan], dtype=dtype))).all()


def test_gelu_exact_is_not_the_tanh_form():
    x = np.linspace(-4.0, 4.0, 801)
    gap = np.abs(gelu_exact(x) - gelu(x)).max()
    assert 1e-4 < gap < 1e-3  # the tanh form is off by a few 1e-4 around |x| = 2


def test_feed_forward_with_exact_gelu_equals_its_formula():
    assert ACTIVATIONS["gelu_exact"] is gelu_exact
    ffn = FeedForward(5, 12, activation="gelu_exact", rng=2)
    rng = np.random.default_rng(3)
    ffn.b_1, ffn.b_2 = rng.standard_normal(12), rng.standard_normal(5)
    x = rng.standard_normal((2, 3, 5))
    out = ffn(x)
    assert out.shape == (2, 3, 5) and out.dtype == np.float64
    for b in range(2):
        for t in range(3):
            hidden = x[b, t] @ ffn.W_1 + ffn.b_1
            activated = np.array([h * 0.5 * (1 + math.erf(h / math.sqrt(2))) for h in hidden])
            np.testing.assert_allclose(out[b, t], activated @ ffn.W_2 + ffn.b_2, atol=1e-6)
    tanh_form = FeedForward(5, 12, activation="gelu", rng=2)
    tanh_form.b_1, tanh_form.b_2 = ffn.b_1, ffn.b_2
    np.testing.assert_array_equal(tanh_form.W_1, ffn.W_1)
    assert not np.allclose(tanh_form(x), out, rtol=0, atol=1e-9)  # a different activation, same weights


def test_feed_forward_with_exact_gelu_in_float32():
    ffn = FeedForward(4, 8, activation="gelu_exact", rng=0, dtype=np.float32)
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    out = ffn(x)
    assert out.dtype == np.float32
    w1, w2 = ffn.W_1.astype(np.float64), ffn.W_2.astype(np.float64)
    expected = exact_gelu(x.astype(np.float64) @ w1) @ w2
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert "gelu_exact" in repr(ffn)


def test_unknown_activation_lists_gelu_exact():
    with pytest.raises(ValueError, match=r"activation must be one of \['gelu', 'gelu_exact', 'relu'\]"):
        FeedForward(4, 8, activation="gelu_erf")


def tanh_gelu_formula(x):
    """GPT-2's tanh GELU exactly as written, term by term."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_tanh_gelu_is_its_formula(dtype):
    x = np.random.default_rng(4).standard_normal((3, 7, 11)).astype(dtype) * 4
    np.testing.assert_allclose(gelu(x), tanh_gelu_formula(x), rtol=1e-6 if dtype == np.float32 else 1e-14,
                               atol=1e-7 if dtype == np.float32 else 1e-15)
    assert gelu(x).dtype == dtype


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_leave_their_input_alone_and_keep_its_shape(name):
    x = np.linspace(-3.0, 3.0, 13).reshape(13, 1)
    copy = x.copy()
    assert ACTIVATIONS[name](x).shape == (13, 1)
    np.testing.assert_array_equal(x, copy)
    assert np.shape(ACTIVATIONS[name](np.array(0.5))) == ()
    assert ACTIVATIONS[name](np.arange(-2, 3)).dtype == np.float64  # integers in, floats out, for all


@pytest.mark.parametrize("name", ["gelu", "gelu_exact", "relu", "erf"])
@pytest.mark.parametrize(("bad", "words"), [(np.array(["1.5", "2"]), "strings"),
                                            (np.array([1 + 2j]), "complex"),
                                            (np.array([True, False]), "booleans")])
def test_gelus_refuse_what_is_not_a_real_number_with_a_clear_error(name, bad, words):
    function = erf if name == "erf" else ACTIVATIONS[name]
    with pytest.raises(TypeError, match=words):  # never parsed, truncated or cast in silence
        function(bad)


def test_feed_forward_leaves_its_input_alone():
    for activation in sorted(ACTIVATIONS):
        ffn = FeedForward(5, 9, activation=activation, rng=5)
        x = np.random.default_rng(6).standard_normal((2, 4, 5))
        copy = x.copy()
        hidden = x @ ffn.W_1 + ffn.b_1
        np.testing.assert_allclose(ffn(x), ACTIVATIONS[activation](hidden) @ ffn.W_2 + ffn.b_2, rtol=1e-12)
        np.testing.assert_array_equal(x, copy)
    assert relu(np.array([-1.0, 2.0])).tolist() == [0.0, 2.0]


@pytest.mark.parametrize("shape", [(3, 5), (2, 8193), (7,), (), (4, 0), (0, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_is_max_with_zero_whatever_the_shape(shape, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    if x.size:
        x.flat[0] = np.nan
    expected = np.where(np.isnan(x), x, np.where(x > 0, x, 0))
    np.testing.assert_array_equal(relu(x), expected)
    assert relu(x).dtype == dtype and relu(x).shape == shape
