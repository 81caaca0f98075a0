import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mha
from tests.factories import record_calls


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


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize(("seq_q", "seq_k", "block"), [(40, 40, 16), (23, 50, 7), (64, 30, 64)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("spread", [4.0, 0.5])  # scores in the tens (shifted) or near 0 (no shift needed)
def test_tiled_chunked_attention_equals_full_attention(monkeypatch, threads, seq_q, seq_k, block, causal,
                                                       spread):
    """The tiled, threaded online softmax gives full attention's numbers to 1e-12 (float64)."""
    from mha import _kernels
    monkeypatch.setattr(_kernels, "TILE_MIN_SCORES", 0)  # tiles even for a small problem
    monkeypatch.setenv("MHA_NUM_THREADS", threads)
    rng = np.random.default_rng(seq_q * seq_k + block)
    q = rng.standard_normal((2, 3, seq_q, 8)) * spread  # (batch, n_heads, seq_q, d_head)
    k = rng.standard_normal((2, 1, seq_k, 8)) * spread  # one key/value head, broadcast over the query heads
    v = rng.standard_normal((2, 1, seq_k, 6))
    mask = rng.random((2, 1, seq_q, seq_k)) < 0.6
    mask[0, 0, 3] = False  # a fully masked query: zero output, never NaN
    full_mask = mask & mha.causal_mask(seq_q, seq_k) if causal else mask
    expected = mha.scaled_dot_product_attention(q, k, v, full_mask)
    got = mha.chunked_attention(q, k, v, mask, causal=causal, block_size=block)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got[0, :, 3], 0.0)
    got32 = mha.chunked_attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
                                  causal=causal, block_size=block)
    assert got32.dtype == np.float32
    causal_only = mha.causal_mask(seq_q, seq_k) if causal else None
    np.testing.assert_allclose(got32, mha.scaled_dot_product_attention(q, k, v, causal_only), atol=1e-5)


def test_large_chunked_attention_keeps_memory_to_a_few_tiles():
    """Above the tiling threshold memory still does not grow with the square of the sequence."""
    seq, heads, d_head, block = 4096, 2, 16, 128
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((heads, seq, d_head)).astype(np.float32) for _ in range(3))
    tracemalloc.start()
    tracemalloc.reset_peak()
    mha.chunked_attention(q, k, v, block_size=block)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    full_scores = heads * seq * seq * 4  # 128 MiB
    assert peak < 4 * q.nbytes + full_scores / 64


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


@pytest.mark.parametrize("threads", ["1", "2"])
def test_tiled_chunked_attention_rescales_only_when_needed_and_still_exactly(monkeypatch, threads):
    """The shift is raised lazily (only past e²⁰): scores that jump between key blocks, rows whose
    first blocks are all masked and whose later scores sit near -1000 (a shift of 0 would underflow to
    an all-zero row) and fully masked rows all give full attention's numbers."""
    from mha import _kernels
    monkeypatch.setattr(_kernels, "TILE_MIN_SCORES", 0)
    monkeypatch.setenv("MHA_NUM_THREADS", threads)
    rng = np.random.default_rng(31)
    seq, d_head, block = 96, 8, 16
    q = rng.standard_normal((2, 3, seq, d_head))
    k = rng.standard_normal((2, 3, seq, d_head))
    v = rng.standard_normal((2, 3, seq, d_head))
    k[..., ::7, :] *= 40  # some keys score far above the rest, in later blocks too: the shift must rise
    q[1, 2, :10] = k[1, 2, 0] * -3000 / (k[1, 2, 0] @ k[1, 2, 0])  # ...
    k[1, 2, 1:] = k[1, 2, 0]  # ... these queries score -3000 / sqrt(d_head) against every key
    mask = np.ones((2, 3, seq, seq), dtype=bool)
    mask[1, 2, :10, :40] = False  # and see nothing in their first key blocks
    mask[0, 1, 5] = False  # a query that sees nothing at all
    full = mha.scaled_dot_product_attention(q, k, v, mask)
    chunked = mha.chunked_attention(q, k, v, mask, block_size=block)
    assert np.abs(full[1, 2, :10]).max() > 0.1  # the far-negative rows still attend somewhere
    np.testing.assert_array_equal(chunked[0, 1, 5], 0.0)
    np.testing.assert_allclose(chunked, full, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiled_chunked_attention_trusts_raw_exp_only_when_the_sums_allow(monkeypatch, dtype):
    """Key blocks are exponentiated before any maximum is known; a first block whose row sums fall
    below the headroom (a row that sees nothing yet, so a shift of 0 could later underflow to an all-zero
    row) goes the long way, and so does a later block that tops the shift. Same numbers either way."""
    from mha import _kernels
    monkeypatch.setattr(_kernels, "TILE_MIN_SCORES", 0)
    monkeypatch.setenv("MHA_NUM_THREADS", "1")
    first_blocks_with_maxima = record_calls(monkeypatch, _kernels, "_unshifted_is_safe")
    rng = np.random.default_rng(8)
    seq, d_head, block = 64, 8, 16
    q = (rng.standard_normal((2, seq, d_head)) * 0.3).astype(dtype)  # (n_heads, seq, d_head)
    k = (rng.standard_normal((2, seq, d_head)) * 0.3).astype(dtype)
    v = rng.standard_normal((2, seq, d_head)).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(mha.chunked_attention(q, k, v, block_size=block),
                               mha.scaled_dot_product_attention(q, k, v), atol=tol)
    assert not first_blocks_with_maxima  # scores near 0: every tile trusted its raw exp
    k[1] = k[1, 0]  # head 1: every key the same...
    q[1, 5] = -k[1, 0] * 900 / (k[1, 0] @ k[1, 0])  # ...and query 5 scores about -318 against each
    mask = np.ones((2, seq, seq), dtype=bool)
    mask[1, 5, :block] = False  # query 5 sees nothing in the first key block
    k[0, 40] *= 200  # head 0: a key in a later block tops every row's shift
    expected = mha.scaled_dot_product_attention(q, k, v, mask)
    got = mha.chunked_attention(q, k, v, mask, block_size=block)
    np.testing.assert_allclose(got, expected, atol=tol)
    np.testing.assert_allclose(got[1, 5], v[1, block:].mean(axis=0), atol=tol * 10)  # not a zero row
    assert first_blocks_with_maxima
