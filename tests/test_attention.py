import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mha
from tests.reference import attention_loop, softmax_row

finite_floats = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


# ---------------------------------------------------------------- softmax
@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), elements=finite_floats),
       st.floats(-1e3, 1e3))
def test_softmax_rows_sum_to_one_and_ignore_a_shift(x, shift):
    w = mha.softmax(x)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
    assert (w >= 0).all()
    np.testing.assert_allclose(mha.softmax(x + shift), w, rtol=1e-9, atol=1e-12)


def test_softmax_matches_textbook_formula_on_every_row():
    x = np.random.default_rng(0).standard_normal((4, 7)) * 3
    expected = np.stack([softmax_row(row) for row in x])
    np.testing.assert_allclose(mha.softmax(x), expected, rtol=1e-13)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_normalises_the_requested_axis(axis):
    x = np.random.default_rng(1).standard_normal((3, 4, 5))
    w = mha.softmax(x, axis=axis)
    np.testing.assert_allclose(w.sum(axis=axis), 1.0)
    moved = np.moveaxis(x, axis, -1)
    np.testing.assert_allclose(np.moveaxis(w, axis, -1), mha.softmax(moved))


def test_softmax_of_huge_scores_does_not_overflow():
    with np.errstate(over="raise", invalid="raise"):
        w = mha.softmax(np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4]]))
    assert np.isfinite(w).all()
    np.testing.assert_array_equal(w[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(w[1], [1 / 3] * 3)


def test_softmax_gives_minus_inf_zero_weight_and_an_all_minus_inf_row_zeros():
    w = mha.softmax(np.array([[0.0, -np.inf, 0.0], [-np.inf, -np.inf, -np.inf]]))
    np.testing.assert_allclose(w, [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_keeps_dtype_and_does_not_modify_its_input(dtype):
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    before = x.copy()
    assert mha.softmax(x).dtype == dtype
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (np.array([1.0, np.nan]), ValueError, "NaN"),
        (np.array([1.0, np.inf]), ValueError, "infinite"),
        (np.array(["a", "b"]), TypeError, "strings"),
        (np.array([True, False]), TypeError, "booleans"),
        (np.float64(3.0), ValueError, "scalar"),
        (np.ones(3, dtype=np.longdouble), TypeError, r"float16, float32 or float64, got float128.*astype"),
    ],
)
def test_softmax_rejects_bad_input_with_a_clear_message(bad, error, words):
    with pytest.raises(error, match=words):
        mha.softmax(bad)


@pytest.mark.parametrize("axis", [2, -3, 1.0, True, "last"])
def test_softmax_names_an_axis_it_cannot_use(axis):
    with pytest.raises(ValueError, match=r"axis must be an int in \[-2, 2\) for x of shape \(2, 3\)"):
        mha.softmax(np.ones((2, 3)), axis=axis)
    assert mha.softmax(np.ones((2, 3)), axis=np.int64(0)).shape == (2, 3)  # NumPy ints are ints


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_can_write_into_its_input_and_keeps_the_weights_exact(dtype):
    """``out=x`` overwrites the scores with the weights (no second array of their size): same numbers."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 16)) * 30).astype(dtype)
    x[2] = -np.inf  # a fully masked row
    x[3, ::2] = -np.inf
    expected = np.stack([softmax_row(row) for row in x.astype(np.float64)])
    fresh = mha.softmax(x)
    scores = x.copy()
    in_place = mha.softmax(scores, out=scores)
    assert in_place is scores and fresh.dtype == in_place.dtype == dtype
    np.testing.assert_array_equal(fresh, in_place)
    np.testing.assert_allclose(fresh, expected, rtol=1e-5 if dtype == np.float32 else 1e-13,
                               atol=1e-7 if dtype == np.float32 else 1e-30)
    with pytest.raises(ValueError, match=r"out must be an array of x's shape \(6, 16\)"):
        mha.softmax(x, out=np.empty((6, 15), dtype=dtype))
    assert mha.softmax(np.zeros((3, 0))).shape == (3, 0) and mha.softmax(np.zeros((0, 4))).shape == (0, 4)


# ---------------------------------------------------------------- scaled dot-product attention
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_attention_matches_loop_reference(seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    mask = rng.random((3, 5)) < 0.7
    out, w = mha.scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    ref_out, ref_w = attention_loop(q, k, v, mask)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-14)


def test_attention_broadcasts_leading_dimensions_like_matmul():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 3, 4, 8))  # (batch, heads, seq_q, d_head)
    kv = rng.standard_normal((2, 1, 6, 8))  # one key/value head shared by the three query heads
    out = mha.scaled_dot_product_attention(q, kv, kv)
    for b in range(2):
        for h in range(3):
            np.testing.assert_allclose(out[b, h], attention_loop(q[b, h], kv[b, 0], kv[b, 0])[0], rtol=1e-12)


def test_fully_masked_query_gets_zero_weights_and_zero_output_not_nan():
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 4)) + 10
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False
    out, w = mha.scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_allclose(w[[0, 2]].sum(-1), 1.0)


def test_output_without_weights_equals_output_with_weights():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 6, 8)) for _ in range(3))
    mask = mha.causal_mask(6)
    out, _ = mha.scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    np.testing.assert_allclose(mha.scaled_dot_product_attention(q, k, v, mask), out, rtol=1e-13)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 7), st.integers(0, 1000))
def test_attention_without_mask_is_permutation_equivariant(seq, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((seq, 4))
    perm = rng.permutation(seq)
    out = mha.scaled_dot_product_attention(x, x, x)
    np.testing.assert_allclose(mha.scaled_dot_product_attention(x[perm], x[perm], x[perm]), out[perm],
                               rtol=1e-10, atol=1e-12)


def test_bias_is_added_to_the_scaled_scores():
    rng = np.random.default_rng(6)
    q, k, v = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    bias = rng.standard_normal((3, 5))
    _, w = mha.scaled_dot_product_attention(q, k, v, bias=bias, return_weights=True)
    expected = np.stack([softmax_row(row) for row in q @ k.T / 2.0 + bias])
    np.testing.assert_allclose(w, expected, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_keeps_float32_as_float32(dtype):
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((2, 5, 8)).astype(dtype) for _ in range(3))
    out, w = mha.scaled_dot_product_attention(q, k, v, mha.causal_mask(5), return_weights=True)
    assert out.dtype == dtype and w.dtype == dtype


def test_integer_inputs_are_computed_in_float64():
    q = np.ones((2, 3), dtype=int)
    assert mha.scaled_dot_product_attention(q, q, q).dtype == np.float64


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"k": np.ones((5, 3))}, ValueError, "last dimension d_head"),
        ({"v": np.ones((4, 2))}, ValueError, "same number of keys"),
        ({"q": np.ones(4)}, ValueError, r"shape \(\.\.\., seq_q, d_head\)"),
        ({"mask": np.ones((3, 5))}, TypeError, "boolean"),
        ({"mask": np.ones((4, 5), dtype=bool)}, ValueError, "cannot be broadcast"),
        ({"q": np.full((3, 4), np.nan)}, ValueError, "NaN"),
        ({"q": [["a"] * 4] * 3}, TypeError, "strings"),
        ({"q": np.ones((2, 3, 4)), "k": np.ones((3, 5, 4)), "v": np.ones((3, 5, 2))},
         ValueError, "broadcast"),
    ],
)
def test_attention_errors_name_what_was_expected(kwargs, error, words):
    args = {"q": np.ones((3, 4)), "k": np.ones((5, 4)), "v": np.ones((5, 2)), "mask": None}
    args.update(kwargs)
    with pytest.raises(error, match=words):
        mha.scaled_dot_product_attention(**args)


# ---------------------------------------------------------------- heads
def test_split_heads_puts_each_slice_of_features_in_its_head():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 5, 12))
    heads = mha.split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    for h in range(3):
        np.testing.assert_array_equal(heads[:, h], x[:, :, 4 * h:4 * (h + 1)])


def test_merge_heads_inverts_split_heads_and_orders_heads_left_to_right():
    rng = np.random.default_rng(9)
    heads = rng.standard_normal((2, 4, 3, 5))
    merged = mha.merge_heads(heads)
    np.testing.assert_array_equal(merged, np.concatenate([heads[:, h] for h in range(4)], axis=-1))
    np.testing.assert_array_equal(mha.split_heads(merged, 4), heads)


def test_split_heads_error_names_the_sizes():
    with pytest.raises(ValueError, match="10 is not divisible by n_heads=4"):
        mha.split_heads(np.ones((1, 2, 10)), 4)
    with pytest.raises(ValueError, match=r"\(\.\.\., n_heads, seq, d_head\)"):
        mha.merge_heads(np.ones((2, 3)))
    with pytest.raises(TypeError, match="n_heads must be an integer"):
        mha.split_heads(np.ones((1, 2, 8)), 2.0)


def _overflowing_qkv(dtype):
    """Finite float queries and keys whose products overflow the dtype: about 1e40 in float32."""
    rng = np.random.default_rng(12)
    big = np.sqrt(np.finfo(dtype).max) * 4
    q, k = (rng.standard_normal((2, 3, 9, 4)).astype(dtype) * dtype(big) for _ in range(2))
    return q, k, rng.standard_normal((2, 3, 9, 4)).astype(dtype)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # NumPy's, from tile threads too
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("path", ["plain", "tiles"])
@pytest.mark.parametrize("function", ["scaled_dot_product_attention", "chunked_attention"])
def test_scores_that_overflow_raise_instead_of_giving_nan(small_tiles, monkeypatch, dtype, path, function):
    if path == "plain":
        monkeypatch.setattr(small_tiles, "_enabled", False)  # the door closed: the textbook path
    q, k, v = _overflowing_qkv(dtype)
    assert np.isfinite(q).all() and np.isfinite(k).all()
    attend = getattr(mha, function)
    extra = {"block_size": 4} if function == "chunked_attention" else {}
    with pytest.raises(ValueError, match=f"attention scores overflowed {np.dtype(dtype).name}"):
        attend(q, k, v, **extra)
    out = attend(q / dtype(1e30), k / dtype(1e30), v, **extra)  # the same directions, in range: no error
    assert np.isfinite(out).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("path", ["plain", "tiles"])
@pytest.mark.parametrize("function", ["scaled_dot_product_attention", "chunked_attention"])
def test_an_overflow_is_the_package_s_error_when_warnings_are_errors(small_tiles, monkeypatch, dtype, path,
                                                                      function):
    """``python -W error``: NumPy's RuntimeWarning must not pre-empt the error that names the cause."""
    import warnings

    if path == "plain":
        monkeypatch.setattr(small_tiles, "_enabled", False)
    q, k, v = _overflowing_qkv(dtype)
    extra = {"block_size": 4} if function == "chunked_attention" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=f"attention scores overflowed {np.dtype(dtype).name}.*float64"):
            getattr(mha, function)(q, k, v, **extra)
        layer = mha.MultiHeadAttention(8, 2, rng=0, dtype=np.float32)
        with pytest.raises(ValueError, match="attention scores overflowed float32"):
            layer(np.random.default_rng(3).standard_normal((2, 5, 8)).astype(np.float32) * np.float32(1e20))
        np.testing.assert_array_equal(mha.softmax(np.array([1e308, -1e308])), [1.0, 0.0])


def test_a_layer_whose_scores_overflow_says_so():
    layer = mha.MultiHeadAttention(8, 2, rng=0, dtype=np.float32)
    x = np.random.default_rng(3).standard_normal((2, 5, 8)).astype(np.float32) * np.float32(1e20)
    with pytest.raises(ValueError, match="attention scores overflowed float32"), \
            np.errstate(over="ignore", invalid="ignore"):
        layer(x)


# ------------------------------------------------------------------------------ soft-capping and the scale
def test_softcap_applies_cap_tanh_to_the_scaled_scores_and_scale_replaces_one_over_root_d():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((3, 5, 4)) * 4, rng.standard_normal((3, 6, 4)) * 4
    v = rng.standard_normal((3, 6, 2))
    scores = 0.3 * q @ k.transpose(0, 2, 1)
    capped = 2.0 * np.tanh(scores / 2.0)
    w = np.exp(capped - capped.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out, weights = mha.scaled_dot_product_attention(q, k, v, scale=0.3, softcap=2.0, return_weights=True)
    np.testing.assert_allclose(weights, w, rtol=1e-12)
    np.testing.assert_allclose(out, w @ v, rtol=1e-12)


def test_soft_cap_is_odd_bounded_and_nearly_the_identity_near_zero():
    x = np.linspace(-1e4, 1e4, 1001, dtype=np.float32)
    y = mha.soft_cap(x, 50.0)
    assert y.dtype == np.float32 and np.abs(y).max() <= 50.0
    np.testing.assert_allclose(y, -mha.soft_cap(-x, 50.0))
    assert abs(float(mha.soft_cap(np.array([0.5]), 50.0)[0]) - 0.5) < 1e-4


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"softcap": 0.0}, "softcap must be a finite number > 0"),
    ({"scale": float("nan")}, "scale must be a finite number > 0"),
])
def test_softcap_and_scale_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mha.scaled_dot_product_attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), **kwargs)
