"""Weights exchanged with Keras 3's MultiHeadAttention layout, checked without Keras (mha.frameworks)."""

import numpy as np
import pytest

import mha
from mha.frameworks import read_keras_weights, to_keras_weights


def keras_forward(weights, query, value, key):
    """Keras's einsum computation written out in NumPy, in Keras's (query, value, key) order."""
    wq, bq, wk, bk, wv, bv, wo, bo = weights
    q = np.einsum("btd,dnh->bnth", query, wq) + bq[:, None, :]  # (batch, n_heads, seq_q, d_head)
    k = np.einsum("bsd,dnh->bnsh", key, wk) + bk[:, None, :]  # (batch, n_heads, seq_k, d_head)
    v = np.einsum("bsd,dnh->bnsh", value, wv) + bv[:, None, :]  # (batch, n_heads, seq_k, d_head)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # (batch, n_heads, seq_q, seq_k)
    context = mha.softmax(scores) @ v  # (batch, n_heads, seq_q, d_head)
    return np.einsum("bnth,nhd->btd", context, wo) + bo  # (batch, seq_q, d_model)


def random_biases(layer, rng):
    for name in ("b_q", "b_k", "b_v", "b_o"):
        setattr(layer, name, rng.standard_normal(getattr(layer, name).shape))


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 5, "vdim": 7}, {"bias": False}])
def test_round_trip_keeps_every_parameter(kwargs):
    layer = mha.MultiHeadAttention(12, 3, rng=0, **kwargs)
    if layer.bias:
        random_biases(layer, np.random.default_rng(1))
    weights = to_keras_weights(layer)
    assert len(weights) == (8 if layer.bias else 4)
    assert weights[0].shape == (12, 3, 4)
    back = mha.MultiHeadAttention.from_keras_weights(weights)
    assert (back.n_heads, back.kdim, back.vdim, back.bias) == (3, layer.kdim, layer.vdim, layer.bias)
    for name, arr in layer.parameters().items():
        np.testing.assert_array_equal(back.parameters()[name], arr)


def test_head_axis_is_the_package_column_block():
    layer = mha.MultiHeadAttention(8, 2, rng=0)
    wq = to_keras_weights(layer)[0]  # (d_model, n_heads, d_head)
    np.testing.assert_array_equal(wq[:, 1, :], layer.W_q[:, 4:8])  # head 1 owns columns 4..7
    wo = to_keras_weights(layer)[6]  # (n_heads, d_head, d_model)
    np.testing.assert_array_equal(wo[1], layer.W_o[4:8])  # and rows 4..7 of W_o


def test_keras_computation_on_converted_weights_matches_the_layer():
    rng = np.random.default_rng(2)
    layer = mha.MultiHeadAttention(8, 2, kdim=5, vdim=6, rng=rng)
    random_biases(layer, rng)
    query, key = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 4, 5))
    value = rng.standard_normal((2, 4, 6))
    np.testing.assert_allclose(keras_forward(to_keras_weights(layer), query, value, key),
                               layer(query, key, value), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_read_from_the_arrays(dtype):
    weights = to_keras_weights(mha.MultiHeadAttention(8, 2, rng=0, dtype=dtype))
    assert mha.MultiHeadAttention.from_keras_weights(weights).dtype == dtype


def test_errors_name_the_expected_layout():
    good = to_keras_weights(mha.MultiHeadAttention(8, 2, rng=0))
    with pytest.raises(ValueError, match="expected the 8 arrays"):
        read_keras_weights(good[:5])
    with pytest.raises(ValueError, match=r"num_heads \* key_dim == d_model"):
        read_keras_weights([np.ones((8, 2, 3)), *good[1:]])
    with pytest.raises(ValueError, match=r"attention_output kernel must have shape \(2, 4, 8\)"):
        read_keras_weights([*good[:6], np.ones((2, 4, 6)), good[7]])
    with pytest.raises(ValueError, match=r"key bias must have shape \(2, 4\)"):
        read_keras_weights([*good[:3], np.ones(8), *good[4:]])
    with pytest.raises(TypeError, match="float32 or float64"):
        read_keras_weights([w.astype(np.float16) for w in good])
    with pytest.raises(TypeError, match="not a mapping.*from_torch_state_dict"):
        read_keras_weights(mha.MultiHeadAttention(8, 2, rng=0).to_torch_state_dict())
    with pytest.raises(ValueError, match=r"key kernel must have shape \(in_features, key/value heads, 4\)"):
        read_keras_weights([*good[:2], np.ones((8, 3, 4)), *good[3:]])  # 3 key heads for 2 query heads
    with pytest.raises(ValueError, match=r"value kernel must have shape \(in_features, 2, 4\)"):
        read_keras_weights([*good[:4], np.ones((8, 1, 4)), *good[5:]])
    with pytest.raises(ValueError, match="Keras weight 2 holds NaN"):
        read_keras_weights([*good[:2], np.full((8, 2, 4), np.nan), *good[3:]])


@pytest.mark.parametrize("bias", [True, False])
def test_grouped_query_layers_round_trip_with_fewer_key_value_heads(bias):
    rng = np.random.default_rng(3)
    layer = mha.MultiHeadAttention(12, 6, n_kv_heads=2, kdim=5, bias=bias, rng=rng)
    if bias:
        random_biases(layer, rng)
    weights = to_keras_weights(layer)
    kernels = weights[::2] if bias else weights
    assert [w.shape for w in kernels] == [(12, 6, 2), (5, 2, 2), (12, 2, 2), (6, 2, 12)]
    back = mha.MultiHeadAttention.from_keras_weights(weights)
    assert (back.n_heads, back.n_kv_heads, back.kdim) == (6, 2, 5)
    for name, arr in layer.parameters().items():
        np.testing.assert_array_equal(back.parameters()[name], arr)


def test_the_layer_methods_round_trip_and_keep_a_subclass():
    class Mine(mha.MultiHeadAttention):
        pass

    layer = mha.MultiHeadAttention(8, 2, kdim=6, rng=0)
    back = Mine.from_keras_weights(layer.to_keras_weights())
    assert type(back) is Mine and (back.n_heads, back.kdim, back.vdim) == (2, 6, 8)
    np.testing.assert_array_equal(back.W_k, layer.W_k)
