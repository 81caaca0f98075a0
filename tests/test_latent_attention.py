"""Multi-head latent attention: the explicit form against the equations, the absorbed form against it."""

import numpy as np
import pytest

import mha


def direct(layer, x):
    """The paper's equations, head by head, from the layer's weights."""
    n, seq = layer.n_heads, x.shape[1]
    c_q = x @ layer.W_dq if layer.W_dq is not None else x
    c = x @ layer.W_dkv
    angles = np.arange(seq)[:, None] * 10000.0 ** (-np.arange(0, layer.d_rope, 2) / layer.d_rope)

    def turn(a):
        out = np.empty_like(a)
        out[..., 0::2] = a[..., 0::2] * np.cos(angles) - a[..., 1::2] * np.sin(angles)
        out[..., 1::2] = a[..., 0::2] * np.sin(angles) + a[..., 1::2] * np.cos(angles)
        return out

    k_rope = turn(x @ layer.W_kr)
    heads = []
    for h in range(n):
        nope = slice(h * layer.d_nope, (h + 1) * layer.d_nope)
        rope = slice(h * layer.d_rope, (h + 1) * layer.d_rope)
        q = np.concatenate([c_q @ layer.W_uq[:, nope], turn(c_q @ layer.W_qr[:, rope])], -1)
        k = np.concatenate([c @ layer.W_uk[:, nope], k_rope], -1)
        v = c @ layer.W_uv[:, h * layer.d_v:(h + 1) * layer.d_v]
        s = q @ k.transpose(0, 2, 1) / np.sqrt(layer.d_nope + layer.d_rope)
        s = np.where(np.tri(seq, dtype=bool), s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        heads.append((w / w.sum(-1, keepdims=True)) @ v)
    return np.concatenate(heads, -1) @ layer.W_o


@pytest.mark.parametrize("q_rank", [None, 12])
@pytest.mark.parametrize("seed", [0, 1])
def test_explicit_form_follows_the_equations_and_the_absorbed_form_equals_it(q_rank, seed):
    layer = mha.LatentAttention(24, 3, kv_rank=6, d_nope=8, d_rope=4, d_v=5, q_rank=q_rank, rng=seed)
    x = np.random.default_rng(seed + 10).standard_normal((2, 9, 24))
    explicit = layer(x)
    np.testing.assert_allclose(explicit, direct(layer, x), rtol=1e-10, atol=1e-12)
    assert np.abs(layer(x, absorbed=True) - explicit).max() <= 1e-10


def test_the_cache_holds_the_latent_and_one_rotary_key_per_token():
    layer = mha.LatentAttention(32, 4, kv_rank=10, d_nope=8, d_rope=6, rng=0, dtype=np.float32)
    c, k_rope = layer.latent(np.ones((2, 5, 32), dtype=np.float32))
    assert c.shape == (2, 5, 10) and k_rope.shape == (2, 1, 5, 6) and c.dtype == np.float32
    assert layer.cache_width == c.shape[-1] + k_rope.shape[-1]


def test_latent_attention_is_causal():
    layer = mha.LatentAttention(16, 2, kv_rank=4, d_nope=4, d_rope=2, rng=1)
    x = np.random.default_rng(2).standard_normal((1, 6, 16))
    changed = x.copy()
    changed[0, 4] += 1.0
    np.testing.assert_allclose(layer(changed)[0, :4], layer(x)[0, :4], rtol=1e-12)
    assert not np.allclose(layer(changed)[0, 4:], layer(x)[0, 4:])


def test_latent_attention_names_bad_sizes():
    with pytest.raises(ValueError, match="d_rope must be even"):
        mha.LatentAttention(16, 2, kv_rank=4, d_nope=4, d_rope=3)
    with pytest.raises(ValueError, match="x must have shape"):
        mha.LatentAttention(16, 2, kv_rank=4, d_nope=4, d_rope=2)(np.ones((5, 16)))
