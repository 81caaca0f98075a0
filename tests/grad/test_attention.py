"""mha.grad.attention against central finite differences of the package's own forward passes.

The numerical side never calls mha.grad: it differentiates ``mha.softmax``,
``mha.scaled_dot_product_attention`` and ``MultiHeadAttention.__call__``, so the two sides are independent.
"""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mha
from mha.grad import attention_backward, multi_head_backward, softmax_backward
from tests.factories import random_layer
from tests.gradcheck import assert_gradients_match, numerical_gradient


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_softmax_backward_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((3, 5)) * 3
    upstream = rng.standard_normal((3, 5))

    def loss():
        return float(np.sum(mha.softmax(scores) * upstream))

    analytic = softmax_backward(mha.softmax(scores), upstream)
    assert_gradients_match(analytic, numerical_gradient(loss, scores), "scores")


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9), scale=st.floats(0.1, 30.0))
def test_softmax_backward_ignores_shifts_of_the_scores(seed, n, scale):
    # softmax(s + c) = softmax(s), so moving every score of a row together changes nothing: the
    # gradient with respect to the scores must sum to zero along the row, whatever dw is.
    rng = np.random.default_rng(seed)
    w = mha.softmax(rng.standard_normal((3, n)) * scale)
    ds = softmax_backward(w, rng.standard_normal((3, n)))
    np.testing.assert_allclose(ds.sum(axis=-1), 0.0, atol=1e-12)


def test_softmax_backward_along_another_axis_equals_transposed_last_axis():
    rng = np.random.default_rng(3)
    w = mha.softmax(rng.standard_normal((4, 6)), axis=0)
    dw = rng.standard_normal((4, 6))
    np.testing.assert_allclose(softmax_backward(w, dw, axis=0), softmax_backward(w.T, dw.T).T, rtol=1e-14)


def test_softmax_backward_gives_masked_entries_no_gradient():
    scores = np.array([[0.3, -np.inf, 1.2], [-np.inf, -np.inf, -np.inf]])
    w = mha.softmax(scores)
    ds = softmax_backward(w, np.ones_like(w) + np.arange(3))
    assert ds[0, 1] == 0 and np.all(ds[1] == 0)
    assert not np.isnan(ds).any()


@pytest.mark.parametrize("masked", [False, True])
def test_attention_backward_matches_finite_differences(masked):
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
    mask = rng.random((2, 3, 5)) < 0.6 if masked else None
    if masked:
        mask[0, 1] = False  # one query sees nothing: zero output, zero gradient, never NaN
        mask[1, :, 0] = True  # every other query of batch 1 sees at least one key
    upstream = rng.standard_normal((2, 3, 3))

    def loss():
        return float(np.sum(mha.scaled_dot_product_attention(q, k, v, mask) * upstream))

    out, weights = mha.scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    grads = attention_backward(upstream, q, k, v, weights)
    for name, analytic, arr in zip("qkv", grads, (q, k, v), strict=True):
        assert_gradients_match(analytic, numerical_gradient(loss, arr), name)
    if masked:
        assert np.all(grads[0][0, 1] == 0)


LAYER_CASES = {
    "self": ({}, {}),
    "self-causal": ({}, {"causal": True}),
    "self-random-mask": ({}, {"mask": "random"}),
    "no-bias": ({"bias": False}, {"causal": True}),
    "gqa-2": ({"n_kv_heads": 2}, {"causal": True}),
    "mqa": ({"n_kv_heads": 1}, {"mask": "random"}),
    "head-mask": ({}, {"head_mask": [1.0, 0.0, 0.5, 1.0]}),
    "cross": ({"kdim": 6, "vdim": 5}, {"mask": "padding"}),
    "cross-gqa": ({"kdim": 6, "vdim": 5, "n_kv_heads": 2}, {"mask": "random", "head_mask": [1, 1, 0, 1]}),
}


def _layer_case(case):
    config, call = LAYER_CASES[case]
    layer = random_layer(**config)
    rng = np.random.default_rng(5)
    batch, seq_q = 2, 3
    cross = "kdim" in config
    seq_k = 4 if cross else seq_q
    inputs = [rng.standard_normal((batch, seq_q, 8))]
    if cross:
        inputs += [rng.standard_normal((batch, seq_k, 6)), rng.standard_normal((batch, seq_k, 5))]
    call = dict(call)
    if call.get("mask") == "random":
        mask = rng.random((batch, 4, seq_q, seq_k)) < 0.6
        mask[0, 2, 1] = False  # a fully masked query row in one head
        call["mask"] = mask
    elif call.get("mask") == "padding":
        call["mask"] = mha.padding_mask(np.array([2, 4]), seq_k)
    if "head_mask" in call:
        call["head_mask"] = np.asarray(call["head_mask"], dtype=np.float64)
    upstream = rng.standard_normal((batch, seq_q, 8))
    return layer, inputs, call, upstream


@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_the_layers_forward_equals_its_call(case):
    layer, inputs, call, _ = _layer_case(case)
    out, cache = layer.forward(*inputs, **call)
    np.testing.assert_array_equal(out, layer(*inputs, **call))
    np.testing.assert_array_equal(cache.weights, layer(*inputs, **call, return_weights=True)[1])


@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_multi_head_backward_matches_finite_differences_for_every_weight_and_input(case):
    layer, inputs, call, upstream = _layer_case(case)

    def loss():
        return float(np.sum(layer(*inputs, **call) * upstream))

    out, cache = layer.forward(*inputs, **call)
    grads, *d_inputs = multi_head_backward(upstream, cache)
    assert sorted(grads) == sorted(layer.parameters())
    for name, arr in layer.parameters().items():
        assert_gradients_match(grads[name], numerical_gradient(loss, arr), name)
    for name, analytic, arr in zip(("query", "key", "value"), d_inputs, inputs, strict=False):
        assert_gradients_match(analytic, numerical_gradient(loss, arr), name)
    if len(inputs) == 1:
        assert d_inputs[1] is None and d_inputs[2] is None


def test_switched_off_head_gets_no_gradient_in_its_own_weights():
    layer, inputs, call, upstream = _layer_case("head-mask")  # head 1 is switched off
    grads, *_ = multi_head_backward(upstream, layer.forward(*inputs, **call)[1])
    d_head = layer.d_head
    off = slice(1 * d_head, 2 * d_head)
    assert np.all(grads["W_q"][:, off] == 0) and np.all(grads["W_o"][off] == 0)
    assert np.abs(grads["W_q"][:, :d_head]).max() > 0


def test_float32_stays_float32():
    layer = mha.MultiHeadAttention(8, 2, rng=0, dtype=np.float32)
    x = np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32)
    out, cache = layer.forward(x, causal=True)
    grads, dx, _, _ = multi_head_backward(np.ones_like(out), cache)
    assert out.dtype == dx.dtype == np.float32
    assert {g.dtype for g in grads.values()} == {np.dtype(np.float32)}
    q = x.reshape(2, 4, 2, 4)
    _, weights = mha.scaled_dot_product_attention(q, q, q, return_weights=True)
    dq, dk, dv = attention_backward(np.ones_like(q), q, q, q, weights)
    assert dq.dtype == dk.dtype == dv.dtype == np.float32


def test_the_layers_forward_refuses_unbatched_or_mismatched_inputs():
    layer = mha.MultiHeadAttention(8, 2, rng=0)
    with pytest.raises(ValueError, match=r"forward needs batched inputs \(batch, seq, dim\)"):
        layer.forward(np.ones((4, 8)))
    with pytest.raises(ValueError, match="query has batch 2 but key has batch 3"):
        layer.forward(np.ones((2, 4, 8)), np.ones((3, 4, 8)))
    with pytest.raises(ValueError, match="head_mask must have shape"):
        layer.forward(np.ones((2, 4, 8)), head_mask=np.ones(3))
    with pytest.raises(ValueError, match="value was given without key"):
        layer.forward(np.ones((2, 4, 8)), value=np.ones((2, 4, 8)))


def test_attention_backward_refuses_broadcast_leading_dimensions():
    q, kv = np.ones((2, 3, 4)), np.ones((1, 3, 4))
    with pytest.raises(ValueError, match="equal leading"):
        attention_backward(q, q, kv, kv, np.ones((2, 3, 3)))


def test_a_cache_from_the_annex_cannot_go_backward(small_tiles):
    layer = mha.MultiHeadAttention(8, 2, rng=0)
    x = np.ones((2, 4, 8))
    _, cache = layer._forward(x, None, None, None, None, None, attend=small_tiles.tiled_heads)
    with pytest.raises(ValueError, match="keeps no attention weights"):
        multi_head_backward(np.ones((2, 4, 8)), cache)
