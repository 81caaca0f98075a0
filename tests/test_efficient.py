import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mha


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 20), st.integers(1, 20), st.integers(1, 9), st.booleans(), st.booleans(),
       st.integers(0, 10_000))
def test_chunked_attention_equals_full_attention(seq_q, seq_k, block, causal, masked, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((2, 3, seq_q, 4)) * 3
    k = rng.standard_normal((2, 3, seq_k, 4)) * 3
    v = rng.standard_normal((2, 3, seq_k, 5))
    mask = rng.random((2, 1, seq_q, seq_k)) < 0.6 if masked else None
    full_mask = mask
    if causal:
        full_mask = mha.causal_mask(seq_q, seq_k) if mask is None else mask & mha.causal_mask(seq_q, seq_k)
    expected = mha.scaled_dot_product_attention(q, k, v, full_mask)
    got = mha.chunked_attention(q, k, v, mask, causal=causal, block_size=block)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_chunked_attention_with_huge_score_range_stays_exact():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, 64, 8)) * 40  # scores spanning thousands: later blocks raise the max
    k = rng.standard_normal((1, 64, 8)) * 40
    v = rng.standard_normal((1, 64, 8))
    np.testing.assert_allclose(mha.chunked_attention(q, k, v, block_size=7),
                               mha.scaled_dot_product_attention(q, k, v), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chunked_attention_keeps_dtype(dtype):
    x = np.random.default_rng(2).standard_normal((2, 10, 4)).astype(dtype)
    out = mha.chunked_attention(x, x, x, causal=True, block_size=3)
    assert out.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, mha.scaled_dot_product_attention(x, x, x, mha.causal_mask(10)), atol=tol)


def test_chunked_attention_never_holds_the_full_score_matrix():
    seq, heads, d_head, block = 2048, 2, 16, 64
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((heads, seq, d_head)).astype(np.float32) for _ in range(3))
    full_scores = heads * seq * seq * 4
    tracemalloc.start()
    tracemalloc.reset_peak()
    mha.chunked_attention(q, k, v, causal=True, block_size=block)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    inputs_and_output = 4 * q.nbytes
    assert peak < inputs_and_output + full_scores / 16  # the full matrix would be 32 MiB; we stay near 1 MiB


def test_chunked_attention_errors():
    x = np.ones((4, 2))
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        mha.chunked_attention(x, x, x, block_size=0)
    with pytest.raises(TypeError, match="boolean"):
        mha.chunked_attention(x, x, x, mask=np.ones((4, 4)))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        mha.chunked_attention(x, x, x, mask=np.ones((3, 4), bool))


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
@pytest.mark.parametrize("step", [1, 3])
def test_cached_decoding_equals_full_causal_pass(n_kv_heads, step):
    layer = mha.MultiHeadAttention(16, 4, n_kv_heads=n_kv_heads, rng=0)
    layer.b_k = np.random.default_rng(1).standard_normal(layer.b_k.shape)
    x = np.random.default_rng(2).standard_normal((2, 10, 16))
    full, full_w = layer(x, causal=True, return_weights=True)
    cache = layer.new_cache(batch=2, capacity=2)  # small capacity: forces the cache to grow
    outs = []
    for t in range(0, 10, step):
        out, w = layer.decode(x[:, t:t + step], cache, return_weights=True)
        np.testing.assert_allclose(w, full_w[:, :, t:t + step, :cache.length], atol=1e-13)
        outs.append(out)
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, rtol=1e-12, atol=1e-13)
    assert cache.length == 10
    assert cache.keys.shape == (2, n_kv_heads, 10, 4)
    np.testing.assert_allclose(cache.flat_values, layer.project(x)[2], rtol=1e-13, atol=1e-14)


def test_cache_memory_follows_the_formula_and_shrinks_with_fewer_kv_heads():
    for n_kv in (8, 2, 1):
        layer = mha.MultiHeadAttention(64, 8, n_kv_heads=n_kv, rng=0, dtype=np.float32)
        cache = layer.new_cache()
        layer.decode(np.zeros((1, 12, 64), np.float32), cache)
        assert cache.nbytes == cache.flat_keys.nbytes + cache.flat_values.nbytes
        assert cache.nbytes == mha.cost.kv_cache_bytes(1, 12, 64, 8, n_kv_heads=n_kv, dtype=np.float32)


def test_cache_errors():
    layer = mha.MultiHeadAttention(16, 4, rng=0)
    with pytest.raises(TypeError, match="KVCache"):
        layer.decode(np.ones((1, 16)), cache={})
    with pytest.raises(ValueError, match="this layer needs 4 of size 4"):
        layer.decode(np.ones((1, 16)), mha.KVCache(1, 2, 4))
    with pytest.raises(ValueError, match="made for 2"):
        layer.decode(np.ones((1, 1, 16)), layer.new_cache(batch=2))
    with pytest.raises(ValueError, match="k_new must have shape"):
        mha.KVCache(1, 2, 4).append(np.ones((1, 3, 7)), np.ones((1, 3, 7)))
    cache = mha.KVCache(1, 2, 4, dtype=np.float32)
    with pytest.raises(ValueError, match=r"k_new \(as float32\) must hold finite values, got 8 NaN"):
        cache.append(np.full((1, 1, 8), np.nan), np.ones((1, 1, 8)))
    with pytest.raises(ValueError, match=r"v_new \(as float32\) must hold finite values, got 0 NaN and 8"), \
            np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's warning of the cast
        cache.append(np.ones((1, 1, 8)), np.full((1, 1, 8), 1e39))
    with pytest.raises(TypeError, match="k_new must be a real floating-point array, got complex"):
        cache.append(np.ones((1, 1, 8)) * 1j, np.ones((1, 1, 8)))
    assert cache.length == 0  # nothing refused was stored
    cache.append([[[1.0] * 8]], np.ones((1, 1, 8)))  # a nested list is an array like any other
    assert cache.length == 1 and cache.flat_keys.dtype == np.float32




# ------------------------------------------------------------------------------------- the rolling cache
@pytest.mark.parametrize(("window", "sinks", "chunks"),
                         [(4, 0, [1] * 30), (5, 2, [1] * 30), (3, 1, [4, 1, 7, 2, 9])])
def test_rolling_cache_decodes_what_a_sliding_window_mask_computes(window, sinks, chunks):
    layer = mha.MultiHeadAttention(16, 4, n_kv_heads=2, rng=0)
    x = np.random.default_rng(1).standard_normal((2, sum(chunks), 16))
    cache = mha.RollingKVCache(2, 2, 4, window=window, sinks=sinks)
    outs, start = [], 0
    for n in chunks:
        outs.append(layer.decode(x[:, start:start + n], cache))
        start += n
    full = layer(x, mask=mha.sliding_window_mask(sum(chunks), window=window, sinks=sinks))
    assert np.abs(np.concatenate(outs, axis=1) - full).max() <= 1e-10


def test_rolling_cache_memory_stops_growing_while_the_plain_cache_grows():
    rolling = mha.RollingKVCache(1, 2, 8, window=16, sinks=4, dtype=np.float32)
    plain = mha.KVCache(1, 2, 8, dtype=np.float32)
    sizes = []
    for _ in range(100):
        token = np.ones((1, 1, 16), dtype=np.float32)
        rolling.append(token, token)
        plain.append(token, token)
        sizes.append((rolling.nbytes, plain.nbytes))
    assert sizes[-1][0] == sizes[19][0] == 2 * 20 * 16 * 4  # sinks + window positions, from token 20 on
    assert sizes[-1][1] == 2 * 100 * 16 * 4
    assert rolling.positions.tolist() == [0, 1, 2, 3, *range(84, 100)]  # the sinks and the newest 16


def test_rolling_cache_attention_mask_sees_the_sinks_and_the_window():
    cache = mha.RollingKVCache(1, 1, 2, window=3, sinks=1)
    for t in range(6):
        cache.append(np.full((1, 1, 2), t), np.full((1, 1, 2), t))
    assert cache.attention_mask(1).tolist() == [[True, True, True, True]]
    np.testing.assert_array_equal(cache.keys[0, 0, :, 0], [0, 3, 4, 5])
    assert "window=3, sinks=1" in repr(cache)
