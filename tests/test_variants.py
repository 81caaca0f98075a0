"""ModernAttention: the parent's layer with QK-norm, rotary positions and soft-capping in its step."""

import numpy as np
import pytest

import mha
from mha.rope_scaling import scaled_rotary
from tests.factories import modern_layer, random_layer


def direct(layer, x, mask):
    """The step written out with NumPy alone, from the layer's weights: the formula the class must follow."""
    n, d = layer.n_heads, layer.d_head
    q = (x @ layer.W_q + layer.b_q).reshape(*x.shape[:2], n, d).transpose(0, 2, 1, 3)
    kv_heads = layer.n_kv_heads
    k = (x @ layer.W_k + layer.b_k).reshape(*x.shape[:2], kv_heads, d).transpose(0, 2, 1, 3)
    v = (x @ layer.W_v + layer.b_v).reshape(*x.shape[:2], kv_heads, d).transpose(0, 2, 1, 3)
    k, v = np.repeat(k, n // kv_heads, axis=1), np.repeat(v, n // kv_heads, axis=1)
    if layer.qk_norm:
        q = layer.g_q * q / np.sqrt((q ** 2).mean(-1, keepdims=True) + 1e-6)
        k = layer.g_k * k / np.sqrt((k ** 2).mean(-1, keepdims=True) + 1e-6)
    if layer.rope is not None:
        angles = np.arange(x.shape[1])[:, None] * layer.rope.frequencies  # (seq, d/2)
        cos, sin = np.cos(angles), np.sin(angles)

        def turn(a):
            even, odd = a[..., 0::2], a[..., 1::2]
            out = np.empty_like(a)
            out[..., 0::2], out[..., 1::2] = even * cos - odd * sin, even * sin + odd * cos
            return out * layer.rope.attention_factor

        q, k = turn(q), turn(k)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    if layer.softcap is not None:
        scores = layer.softcap * np.tanh(scores / layer.softcap)
    scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = (w @ v).transpose(0, 2, 1, 3).reshape(*x.shape[:2], n * d)
    return out @ layer.W_o + layer.b_o


@pytest.mark.parametrize("options", [
    {}, {"qk_norm": True}, {"rope": True}, {"softcap": 2.0}, {"n_kv_heads": 2, "rope": True, "qk_norm": True},
    {"rope": "yarn", "softcap": 5.0},
])
def test_modern_attention_follows_the_formula(options):
    layer = modern_layer(16, 4, options)  # biases and gains away from 0 and 1
    x = np.random.default_rng(1).standard_normal((2, 7, 16)) * 2
    np.testing.assert_allclose(layer(x, causal=True), direct(layer, x, np.tri(7, dtype=bool)), rtol=1e-10,
                               atol=1e-12)


def test_like_copies_the_weights_and_without_options_is_the_plain_layer():
    plain = random_layer(16, 4, seed=3)
    x = np.random.default_rng(0).standard_normal((2, 6, 16))
    np.testing.assert_allclose(mha.ModernAttention.like(plain)(x, causal=True), plain(x, causal=True),
                               rtol=1e-12)
    copy = mha.ModernAttention.like(plain, qk_norm=True).copy()
    copy.g_q[0] = 5.0
    assert copy.qk_norm and mha.ModernAttention.like(plain, qk_norm=True).g_q[0] == 1.0


@pytest.mark.parametrize("options", [{"rope": True}, {"rope": True, "qk_norm": True, "n_kv_heads": 1}])
def test_decoding_with_a_cache_equals_one_causal_pass(options):
    layer = mha.ModernAttention(16, 4, rng=2, **options)
    x = np.random.default_rng(3).standard_normal((1, 9, 16))
    cache = layer.new_cache()
    steps = np.concatenate([layer.decode(x[:, t:t + 1], cache) for t in range(9)], axis=1)
    np.testing.assert_allclose(steps, layer(x, causal=True), rtol=1e-10, atol=1e-12)


def test_a_rolling_cache_decodes_exactly_the_sliding_window_pass_in_float64():
    layer = mha.ModernAttention(16, 4, n_kv_heads=2, rope=True, rng=4)
    x = np.random.default_rng(5).standard_normal((2, 40, 16))
    window = 6
    cache = mha.RollingKVCache(2, layer.n_kv_heads, layer.d_head, window=window)
    steps = np.concatenate([layer.decode(x[:, t:t + 1], cache) for t in range(40)], axis=1)
    full = layer(x, mask=mha.sliding_window_mask(40, window=window))
    assert np.abs(steps - full).max() <= 1e-10
    assert cache.length == window  # it never held more


def test_the_annex_runs_the_same_step_for_large_inputs():
    layer = mha.ModernAttention(32, 4, rope=True, qk_norm=True, rng=6)
    x = np.random.default_rng(7).standard_normal((2, 300, 32))
    fast = layer(x, causal=True)
    with mha.fast.disabled():
        textbook = layer(x, causal=True)
    np.testing.assert_allclose(fast, textbook, rtol=1e-9, atol=1e-11)


def test_qk_norm_and_softcap_bound_the_logits_however_large_the_inputs():
    plain = random_layer(16, 4, seed=8)
    normed = mha.ModernAttention.like(plain, qk_norm=True)
    capped = mha.ModernAttention.like(plain, softcap=10.0)
    bounds = {}
    for scale in (1.0, 10.0, 100.0):
        x = np.random.default_rng(9).standard_normal((1, 12, 16)) * scale
        for name, layer in {"plain": mha.ModernAttention.like(plain), "normed": normed,
                            "capped": capped}.items():
            bounds.setdefault(name, []).append(np.abs(layer.attention_logits(layer.forward(x)[1])).max())
    assert bounds["plain"][2] > 1000 * bounds["plain"][0]  # logits grow with the square of the scale
    assert max(bounds["normed"]) <= np.sqrt(4) + 1e-9  # |q̂ · k̂| / √d <= √d with unit gains
    assert max(bounds["capped"]) <= 10.0 and bounds["capped"][0] < 10.0  # tanh reaches 1.0 in float64


def test_rope_must_fit_the_head_width():
    with pytest.raises(ValueError, match="d_head=8, this layer has d_head=4"):
        mha.ModernAttention(16, 4, rope=scaled_rotary("none", 8))
    with pytest.raises(TypeError, match="rope must be True, False, None or a RotaryTable"):
        mha.ModernAttention(16, 4, rope="yes")
