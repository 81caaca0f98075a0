"""The conventions the frameworks chapter states, checked against PyTorch and Keras 3 themselves.

Optional references: each test skips when its framework is missing. Keras runs on its JAX backend
(``KERAS_BACKEND=jax``, set here unless the environment chose another backend), in float32, Keras's
default dtype: outputs agree to float32 rounding (``ATOL``).
"""

import os

import numpy as np
import pytest

import mha

#: float32 products of a few dozen terms, computed in different orders.
ATOL = 2e-5


def torch_layer(rng, d_model=8, n_heads=2):
    torch = pytest.importorskip("torch")
    module = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.3))
    layer = mha.MultiHeadAttention.from_torch_state_dict(
        {k: v.numpy() for k, v in module.state_dict().items()}, n_heads)
    return torch, module, layer


# ------------------------------------------------------------------------------------------ PyTorch
def test_need_weights_averages_the_heads_unless_asked_not_to():
    torch, module, layer = torch_layer(np.random.default_rng(0))
    x = np.random.default_rng(1).standard_normal((2, 5, 8))
    _, weights = layer(x, return_weights=True)  # (batch, n_heads, seq_q, seq_k)
    t_x = torch.from_numpy(x)
    _, averaged = module(t_x, t_x, t_x)  # need_weights=True by default
    _, per_head = module(t_x, t_x, t_x, average_attn_weights=False)
    assert averaged.shape == (2, 5, 5)
    np.testing.assert_allclose(averaged.detach().numpy(), weights.mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(per_head.detach().numpy(), weights, atol=1e-12)


def test_module_attn_mask_true_means_blocked():
    torch, module, layer = torch_layer(np.random.default_rng(2))
    x = np.random.default_rng(3).standard_normal((1, 4, 8))
    t_x = torch.from_numpy(x)
    allowed = mha.causal_mask(4)  # True = may attend
    out, _ = module(t_x, t_x, t_x, attn_mask=torch.from_numpy(~allowed))  # True = blocked
    np.testing.assert_allclose(out.detach().numpy(), layer(x, mask=allowed), atol=1e-12)
    wrong, _ = module(t_x, t_x, t_x, attn_mask=torch.from_numpy(allowed))  # mha's polarity: inverted
    # token 0 now sees the future:
    assert not np.allclose(wrong.detach().numpy()[:, 0], layer(x, mask=allowed)[:, 0])


def test_functional_attn_mask_true_means_may_attend():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((3, 2, 2, 4, 3))  # each (batch, n_heads, seq, d_head)
    allowed = mha.causal_mask(4)
    out = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(allowed))
    np.testing.assert_allclose(out.numpy(), mha.scaled_dot_product_attention(q, k, v, allowed), atol=1e-12)


def test_a_query_that_may_attend_to_nothing():
    torch, module, layer = torch_layer(np.random.default_rng(5))
    x = np.random.default_rng(6).standard_normal((1, 3, 8))
    allowed = np.ones((3, 3), dtype=bool)
    allowed[1] = False  # query 1 may attend to nothing
    out, weights = layer(x, mask=allowed, return_weights=True)
    np.testing.assert_array_equal(weights[0, :, 1], 0.0)  # mha: zero weights ...
    np.testing.assert_allclose(out[0, 1], layer.b_o)  # ... so only the output bias is left
    t_x = torch.from_numpy(x)
    t_out, _ = module(t_x, t_x, t_x, attn_mask=torch.from_numpy(~allowed))
    assert torch.isnan(t_out[0, 1]).all()  # nn.MultiheadAttention returning weights: NaN
    with torch.no_grad():  # without weights, on the path gradients take, the fused kernel's zeros
        fused, _ = module(t_x, t_x, t_x, attn_mask=torch.from_numpy(~allowed), need_weights=False)
    np.testing.assert_allclose(fused[0, 1].numpy(), layer.b_o, atol=1e-12)
    module.eval()
    with torch.no_grad():  # ... but in inference PyTorch's own fast path gives NaN again
        fast, _ = module(t_x, t_x, t_x, attn_mask=torch.from_numpy(~allowed), need_weights=False)
    assert torch.isnan(fast[0, 1]).all()
    q = torch.from_numpy(np.random.default_rng(7).standard_normal((1, 2, 3, 4)))
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=torch.from_numpy(allowed))
    np.testing.assert_array_equal(sdpa[0, :, 1].numpy(), 0.0)  # F.scaled_dot_product_attention: zeros


# ------------------------------------------------------------------------------------------ Keras 3
@pytest.fixture(scope="module")
def keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    pytest.importorskip("jax")
    return pytest.importorskip("keras")


def keras_layer(keras, layer, query, value, key):
    """A Keras layer built for these inputs and loaded with ``layer``'s weights."""
    module = keras.layers.MultiHeadAttention(num_heads=layer.n_heads, key_dim=layer.d_head,
                                             use_bias=layer.bias)
    module(query, value, key)  # builds the kernels
    module.set_weights(layer.to_keras_weights())
    return module


def with_biases(layer, rng):
    for name in ("b_q", "b_k", "b_v", "b_o"):
        setattr(layer, name, rng.standard_normal(getattr(layer, name).shape, dtype=layer.dtype))
    return layer


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 5, "vdim": 6}, {"bias": False}])
def test_keras_call_order_is_query_value_key(keras, kwargs):
    rng = np.random.default_rng(8)
    layer = mha.MultiHeadAttention(8, 2, rng=rng, dtype=np.float32, **kwargs)
    if layer.bias:
        with_biases(layer, rng)
    query = rng.standard_normal((2, 3, 8), dtype=np.float32)
    key = rng.standard_normal((2, 4, layer.kdim), dtype=np.float32)
    value = rng.standard_normal((2, 4, layer.vdim), dtype=np.float32)
    module = keras_layer(keras, layer, query, value, key)
    out, scores = module(query, value, key, return_attention_scores=True)
    expected, weights = layer(query, key, value, return_weights=True)
    np.testing.assert_allclose(np.asarray(out), expected, atol=ATOL)
    np.testing.assert_allclose(np.asarray(scores), weights, atol=ATOL)  # per head, not averaged


def test_keras_attention_mask_one_means_may_attend(keras):
    rng = np.random.default_rng(9)
    layer = with_biases(mha.MultiHeadAttention(8, 4, rng=rng, dtype=np.float32), rng)
    x = rng.standard_normal((2, 5, 8), dtype=np.float32)
    allowed = rng.random((2, 5, 5)) < 0.6
    allowed[..., 0] = True
    module = keras_layer(keras, layer, x, x, x)
    out = module(x, x, attention_mask=allowed.astype("int32"))
    np.testing.assert_allclose(np.asarray(out), layer(x, mask=allowed[:, None]), atol=ATOL)


def test_weights_from_a_keras_layer_give_its_outputs(keras):
    rng = np.random.default_rng(10)
    module = keras.layers.MultiHeadAttention(num_heads=3, key_dim=4)
    query = rng.standard_normal((1, 2, 12), dtype=np.float32)
    value = rng.standard_normal((1, 6, 7), dtype=np.float32)
    module(query, value)
    weights = [0.3 * rng.standard_normal(w.shape, dtype=np.float32) for w in module.get_weights()]
    module.set_weights(weights)  # random biases too (Keras starts them at zero)
    layer = mha.MultiHeadAttention.from_keras_weights(module.get_weights())
    assert layer.dtype == np.float32
    assert (layer.d_model, layer.n_heads, layer.kdim, layer.vdim) == (12, 3, 7, 7)
    np.testing.assert_allclose(layer(query, value), np.asarray(module(query, value)), atol=ATOL)


def test_keras_gives_zero_weights_to_a_query_that_may_attend_to_nothing(keras):
    rng = np.random.default_rng(11)
    layer = mha.MultiHeadAttention(8, 2, rng=rng, dtype=np.float32)
    x = rng.standard_normal((1, 3, 8), dtype=np.float32)
    allowed = np.ones((1, 3, 3), dtype=bool)
    allowed[0, 1] = False
    _, scores = keras_layer(keras, layer, x, x, x)(x, x, attention_mask=allowed,
                                                   return_attention_scores=True)
    np.testing.assert_array_equal(np.asarray(scores)[0, :, 1], 0.0)


def test_causal_switches_equal_a_causal_mask(keras):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    q, k, v = rng.standard_normal((3, 1, 2, 4, 3))  # each (batch, n_heads, seq, d_head)
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), is_causal=True)
    np.testing.assert_allclose(sdpa.numpy(), mha.scaled_dot_product_attention(q, k, v, mha.causal_mask(4)),
                               atol=1e-12)
    layer = mha.MultiHeadAttention(8, 2, rng=rng, dtype=np.float32)
    x = rng.standard_normal((1, 4, 8), dtype=np.float32)
    module = keras_layer(keras, layer, x, x, x)
    np.testing.assert_allclose(np.asarray(module(x, x, use_causal_mask=True)), layer(x, causal=True),
                               atol=ATOL)


def test_causal_switches_align_differently_when_lengths_differ(keras):
    """With fewer queries than keys, mha puts the queries last (the newest tokens of a KV cache);
    PyTorch's is_causal and Keras's use_causal_mask put them first: query i sees keys 0..i."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    q = rng.standard_normal((1, 2, 2, 3))  # (batch, n_heads, seq_q=2, d_head)
    k, v = rng.standard_normal((2, 1, 2, 4, 3))  # (batch, n_heads, seq_k=4, d_head)
    top_left = np.tril(np.ones((2, 4), dtype=bool))  # query i sees keys 0..i
    assert not np.array_equal(top_left, mha.causal_mask(2, 4))
    sdpa = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), is_causal=True)
    np.testing.assert_allclose(sdpa.numpy(), mha.scaled_dot_product_attention(q, k, v, top_left), atol=1e-12)
    assert not np.allclose(sdpa.numpy(), mha.scaled_dot_product_attention(q, k, v, mha.causal_mask(2, 4)))
    layer = mha.MultiHeadAttention(8, 2, rng=rng, dtype=np.float32)
    query = rng.standard_normal((1, 2, 8), dtype=np.float32)
    memory = rng.standard_normal((1, 4, 8), dtype=np.float32)
    module = keras_layer(keras, layer, query, memory, memory)
    out = np.asarray(module(query, memory, use_causal_mask=True))
    np.testing.assert_allclose(out, layer(query, memory, mask=top_left), atol=ATOL)
    assert not np.allclose(out, layer(query, memory, causal=True), atol=1e-3)


@pytest.mark.parametrize("bias", [True, False])
def test_grouped_query_weights_load_into_keras_group_query_attention(keras, bias):
    rng = np.random.default_rng(14)
    layer = mha.MultiHeadAttention(12, 6, n_kv_heads=2, kdim=5, vdim=7, bias=bias, rng=rng, dtype=np.float32)
    if bias:
        with_biases(layer, rng)
    query = rng.standard_normal((2, 3, 12), dtype=np.float32)
    key = rng.standard_normal((2, 4, 5), dtype=np.float32)
    value = rng.standard_normal((2, 4, 7), dtype=np.float32)
    module = keras.layers.GroupQueryAttention(head_dim=layer.d_head, num_query_heads=6, num_key_value_heads=2,
                                              use_bias=bias)
    module(query, value, key)  # builds the kernels
    module.set_weights(layer.to_keras_weights())
    np.testing.assert_allclose(np.asarray(module(query, value, key)), layer(query, key, value), atol=ATOL)
    back = mha.MultiHeadAttention.from_keras_weights(module.get_weights())
    assert (back.n_heads, back.n_kv_heads, back.kdim, back.vdim) == (6, 2, 5, 7)
    for name, array in layer.parameters().items():
        np.testing.assert_array_equal(back.parameters()[name], array)


def test_a_bfloat16_state_dict_is_refused_by_name():
    torch = pytest.importorskip("torch")
    module = torch.nn.MultiheadAttention(8, 2, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match=r"state_dict\['in_proj_weight'\].*tensor.float\(\)"):
        mha.MultiHeadAttention.from_torch_state_dict(module.state_dict(), 2)
    as_float32 = {k: v.float() for k, v in module.state_dict().items()}
    assert mha.MultiHeadAttention.from_torch_state_dict(as_float32, 2).dtype == np.float32
