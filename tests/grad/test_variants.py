"""The backward pass of ModernAttention's step (QK-norm, RoPE, attention factor, soft-capping) and of
RMS norm, against central finite differences of the forward passes (which never call mha.grad)."""

import numpy as np
import pytest

import mha
from mha.grad import multi_head_backward, rms_norm_backward
from tests.factories import modern_layer
from tests.gradcheck import assert_gradients_match, numerical_gradient


@pytest.mark.parametrize("options", [
    {"qk_norm": True}, {"rope": True}, {"softcap": 1.5}, {"rope": "yarn", "qk_norm": True, "softcap": 3.0},
    {"rope": True, "qk_norm": True, "n_kv_heads": 1},
])
def test_modern_attention_gradients_match_finite_differences(options):
    layer = modern_layer(8, 2, options, scale=2.0, context=3, nudge=0.2)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 8)) * 1.5
    upstream = rng.standard_normal((2, 5, 8))

    def loss():
        return float(np.sum(layer(x, causal=True) * upstream))

    out, cache = layer.forward(x, causal=True)
    grads, dx, _, _ = multi_head_backward(upstream, cache)
    assert sorted(grads) == sorted(layer.parameters())
    for name, arr in layer.parameters().items():
        assert_gradients_match(grads[name], numerical_gradient(loss, arr), name)
    assert_gradients_match(dx, numerical_gradient(loss, x), "x")


def test_rms_norm_backward_matches_finite_differences():
    rng = np.random.default_rng(2)
    x, gain, upstream = rng.standard_normal((3, 4, 6)), rng.standard_normal(6), rng.standard_normal((3, 4, 6))

    def loss():
        return float(np.sum(mha.rms_norm(x, gain) * upstream))

    _, cache = mha.rms_norm(x, gain, return_cache=True)
    d_gain, d_x = rms_norm_backward(upstream, cache)
    assert_gradients_match(d_gain, numerical_gradient(loss, gain), "gain")
    assert_gradients_match(d_x, numerical_gradient(loss, x), "x")
