"""Every backward pass in mha.grad against central finite differences of the package's own forward passes.

The numerical side never calls mha.grad: it differentiates ``mha.softmax``,
``mha.scaled_dot_product_attention`` and ``MultiHeadAttention.__call__``, so the two sides are independent.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mha
from mha.grad import (
    attention_backward,
    attention_forward,
    cross_entropy,
    mha_backward,
    mha_forward,
    softmax_backward,
)
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

    out, cache = attention_forward(q, k, v, mask)
    np.testing.assert_allclose(out, mha.scaled_dot_product_attention(q, k, v, mask), rtol=1e-13)
    for name, analytic, arr in zip("qkv", attention_backward(upstream, cache), (q, k, v), strict=True):
        assert_gradients_match(analytic, numerical_gradient(loss, arr), name)
    if masked:
        dq = attention_backward(upstream, cache)[0]
        assert np.all(dq[0, 1] == 0)


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
def test_mha_forward_equals_the_layer(case):
    layer, inputs, call, _ = _layer_case(case)
    out, _ = mha_forward(layer, *inputs, **call)
    np.testing.assert_allclose(out, layer(*inputs, **call), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_mha_backward_matches_finite_differences_for_every_weight_and_input(case):
    layer, inputs, call, upstream = _layer_case(case)

    def loss():
        return float(np.sum(layer(*inputs, **call) * upstream))

    out, cache = mha_forward(layer, *inputs, **call)
    grads, *d_inputs = mha_backward(upstream, cache)
    assert sorted(grads) == sorted(layer.parameters())
    for name, arr in layer.parameters().items():
        assert_gradients_match(grads[name], numerical_gradient(loss, arr), name)
    for name, analytic, arr in zip(("query", "key", "value"), d_inputs, inputs, strict=False):
        assert_gradients_match(analytic, numerical_gradient(loss, arr), name)
    if len(inputs) == 1:
        assert d_inputs[1] is None and d_inputs[2] is None


def test_switched_off_head_gets_no_gradient_in_its_own_weights():
    layer, inputs, call, upstream = _layer_case("head-mask")  # head 1 is switched off
    grads, *_ = mha_backward(upstream, mha_forward(layer, *inputs, **call)[1])
    d_head = layer.d_head
    off = slice(1 * d_head, 2 * d_head)
    assert np.all(grads["W_q"][:, off] == 0) and np.all(grads["W_o"][off] == 0)
    assert np.abs(grads["W_q"][:, :d_head]).max() > 0


def test_float32_stays_float32():
    layer = mha.MultiHeadAttention(8, 2, rng=0, dtype=np.float32)
    x = np.random.default_rng(0).standard_normal((2, 4, 8)).astype(np.float32)
    out, cache = mha_forward(layer, x, causal=True)
    grads, dx, _, _ = mha_backward(np.ones_like(out), cache)
    assert out.dtype == dx.dtype == np.float32
    assert {g.dtype for g in grads.values()} == {np.dtype(np.float32)}
    q = x.reshape(2, 4, 2, 4)
    dq, dk, dv = attention_backward(np.ones_like(q), attention_forward(q, q, q)[1])
    assert dq.dtype == dk.dtype == dv.dtype == np.float32


def test_mha_forward_rejects_unbatched_or_mismatched_inputs():
    layer = mha.MultiHeadAttention(8, 2, rng=0)
    with pytest.raises(ValueError, match=r"query must have shape \(batch, seq, 8\)"):
        mha_forward(layer, np.ones((4, 8)))
    with pytest.raises(ValueError, match="must share batch"):
        mha_forward(layer, np.ones((2, 4, 8)), np.ones((3, 4, 8)))
    with pytest.raises(ValueError, match="head_mask must have shape"):
        mha_forward(layer, np.ones((2, 4, 8)), head_mask=np.ones(3))
    with pytest.raises(ValueError, match="value was given without key"):
        mha_forward(layer, np.ones((2, 4, 8)), value=np.ones((2, 4, 8)))


def test_attention_forward_rejects_broadcast_leading_dimensions():
    with pytest.raises(ValueError, match="equal leading"):
        attention_forward(np.ones((2, 3, 4)), np.ones((1, 3, 4)), np.ones((1, 3, 4)))


def test_cross_entropy_equals_a_loop_and_its_gradient_matches_finite_differences():
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((2, 3, 5)) * 2
    targets = rng.integers(0, 5, size=(2, 3))
    loss_mask = np.array([[True, False, True], [True, True, False]])
    expected, count = 0.0, 0
    for b in range(2):
        for t in range(3):
            if loss_mask[b, t]:
                row = logits[b, t]
                expected -= row[targets[b, t]] - math.log(sum(math.exp(x) for x in row))
                count += 1
    loss, d_logits = cross_entropy(logits, targets, loss_mask)
    assert loss == pytest.approx(expected / count, rel=1e-12)
    numeric = numerical_gradient(lambda: cross_entropy(logits, targets, loss_mask)[0], logits)
    assert_gradients_match(d_logits, numeric, "logits")
    assert np.all(d_logits[0, 1] == 0)  # an unselected position gets no gradient


def test_cross_entropy_is_stable_for_huge_logits():
    loss, d = cross_entropy(np.array([[1e4, 0.0, -1e4]]), np.array([0]))
    assert loss == pytest.approx(0.0, abs=1e-12)
    assert np.isfinite(d).all()


@pytest.mark.parametrize(
    ("targets", "loss_mask", "message"),
    [
        (np.array([0.0, 1.0]), None, "targets must be integers"),
        (np.array([0, 4]), None, r"targets must lie in \[0, 4\)"),
        (np.array([0, 1]), np.array([False, False]), "selects no position"),
        (np.array([0, 1]), np.array([1, 0]), "boolean"),
    ],
)
def test_cross_entropy_rejects_bad_targets(targets, loss_mask, message):
    with pytest.raises((ValueError, TypeError), match=message):
        cross_entropy(np.zeros((2, 4)), targets, loss_mask)


@pytest.mark.parametrize(("q", "k", "v", "words"), [
    (np.ones(4), np.ones(4), np.ones(4), "expected q"),  # 1-D: no sequence axis
    (np.ones((3, 4)), np.ones((0, 4)), np.ones((0, 2)), "seq_k, d_head, d_v >= 1"),  # no keys at all
    (np.ones((3, 0)), np.ones((3, 0)), np.ones((3, 2)), "seq_k, d_head, d_v >= 1"),  # d_head 0
    (np.array([[np.inf, 1.0]]), np.ones((1, 2)), np.ones((1, 2)), "q must hold finite values"),
])
def test_attention_forward_checks_its_inputs_like_the_public_attention(q, k, v, words):
    with pytest.raises(ValueError, match=words):
        attention_forward(q, k, v)
