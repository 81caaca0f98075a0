"""The annex (mha.fast): tiles, threads and the one door the textbook code opens to them.

Every result of the annex is held to the textbook's (the same call inside ``mha.fast.disabled()``) to
rounding; the door opens only where it should.
"""

import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import mha
from mha import fast
from mha.fast import tiles
from tests.factories import random_layer, record_calls


def textbook(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with the door closed: the readable code, whatever the size."""
    with fast.disabled():
        return fn(*args, **kwargs)


# ------------------------------------------------------------------------------------------ the door
def test_the_door_opens_for_large_problems_without_weights_only(monkeypatch):
    opened = record_calls(monkeypatch, fast, "attention")
    rng = np.random.default_rng(0)
    small = [rng.standard_normal((2, 16, 8)) for _ in range(3)]
    large = [rng.standard_normal((4, 512, 8)) for _ in range(3)]  # 4 x 512 x 512 = 1M scores
    mha.scaled_dot_product_attention(*small)
    mha.scaled_dot_product_attention(*large, return_weights=True)  # weights: every score, the textbook way
    assert not opened
    mha.scaled_dot_product_attention(*large)
    assert len(opened) == 1
    with fast.disabled():
        mha.scaled_dot_product_attention(*large)
    assert len(opened) == 1 and fast.worth_it(1 << 30)  # closed inside the block, open again after


def test_the_environment_closes_the_door_for_the_whole_process():
    code = "import mha; print(mha.fast.worth_it(1 << 30))"
    env_off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"MHA_FAST": "0", "PATH": ""}, cwd=Path(mha.__file__).parent.parent)
    assert env_off.stdout.strip() == "False"


def test_importing_mha_starts_no_thread():
    code = ("import threading; before = threading.active_count(); import mha, numpy as np; "
            "mha.MultiHeadAttention(8, 2, rng=0)(np.ones((2, 3, 8))); "
            "print(threading.active_count() - before)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"


# ------------------------------------------------------------------------------------------ threads
threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_thread_counts():
    """NumPy's own BLAS (other libraries a test session loads, e.g. PyTorch's, keep their own pools)."""
    numpy_dir = str(Path(np.__file__).resolve().parent)
    return [pool["num_threads"] for pool in threadpoolctl.threadpool_info()
            if pool["user_api"] == "blas" and pool["filepath"].startswith(numpy_dir)]


def test_blas_threads_limits_inside_the_block_and_restores_after():
    before = _blas_thread_counts()
    assert before, "NumPy's BLAS should be visible to threadpoolctl"
    with fast.blas_threads(1):
        assert set(_blas_thread_counts()) == {1}
    assert _blas_thread_counts() == before
    with fast.blas_threads(None):
        assert _blas_thread_counts() == before


def test_blas_threads_refuses_nonsense():
    with pytest.raises(ValueError, match=">= 1"):
        fast.blas_threads(0)
    with pytest.raises(TypeError, match="integer"):
        fast.blas_threads(1.5)


# ------------------------------------------------------------------------------------------ tiles
@pytest.mark.parametrize(("lead", "seq_q", "seq_k", "itemsize"),
                         [((2, 3), 100, 50, 8), ((1, 8), 2048, 2048, 4), ((5,), 7, 3, 4)])
def test_tiles_cover_every_score_once(lead, seq_q, seq_k, itemsize):
    for whole_items in (True, False):
        covered = np.zeros(lead + (seq_q,), dtype=int)
        for lead_index, heads, rows in tiles._plan(lead, seq_q, seq_k, itemsize, whole_items=whole_items):
            covered[lead_index + (heads, rows)] += 1
            n_heads, n_rows = heads.stop - heads.start, rows.stop - rows.start
            assert n_heads == 1 or n_rows == seq_q or not whole_items  # whole items: one contiguous slab
        np.testing.assert_array_equal(covered, 1)


def test_a_tile_takes_broadcast_axes_whole():
    arr = np.arange(2 * 1 * 6 * 1).reshape(2, 1, 6, 1)  # (batch, heads=1, rows, cols=1): broadcasts
    part = tiles._part(arr, (1,), slice(2, 4), slice(1, 3), slice(0, 5))
    assert part.shape == (1, 2, 1)
    np.testing.assert_array_equal(part[0, :, 0], [7, 8])
    assert tiles._part(None, (0,), slice(0, 1), slice(0, 1)) is None


def test_scores_go_unshifted_only_within_the_headroom():
    """exp of raw scores is used only when it can neither overflow nor lose a whole row to underflow."""
    inside = np.array([[-tiles.EXP_HEADROOM], [0.0], [tiles.EXP_HEADROOM]])  # (rows, 1): row maxima
    assert tiles._unshifted_is_safe(inside)
    assert tiles._unshifted_is_safe(np.array([[3.0], [-np.inf]]))  # a fully masked row is zeros either way
    for outside in (tiles.EXP_HEADROOM + 1, -tiles.EXP_HEADROOM - 1, np.nan, np.inf):
        assert not tiles._unshifted_is_safe(np.array([[0.0], [outside]])), outside


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float32, 1e-6), (np.float64, 1e-15)])
def test_row_sums_by_blas_match_exact_sums_to_rounding(dtype, rtol):
    """Tiles sum their rows as a product with ones; for positive terms, even 16k of them, that stays
    within rounding of the exact sum (computed here in float64 from the same float32 numbers)."""
    block = np.random.default_rng(6).random((2, 3, 16384)).astype(dtype)  # (heads, rows, keys), all > 0
    got = tiles._row_sums(block)
    assert got.shape == (2, 3, 1) and got.dtype == dtype
    exact = np.sort(block.astype(np.float64), axis=-1).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(got, exact, rtol=rtol)


@pytest.mark.parametrize("threads", ["1", "3"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tile_bytes", [2048, 1 << 20])  # row blocks of one head; several whole heads
@pytest.mark.parametrize("keep_scores", [True, False])  # tiles written into the full tensor, or scratch
@pytest.mark.parametrize("spread", [3.0, 0.3])  # scores in the tens (shifted by the row max) or near 0 (not)
def test_tiled_attention_equals_the_textbook(small_tiles, monkeypatch, threads, dtype, tile_bytes,
                                             keep_scores, spread):
    monkeypatch.setenv("MHA_NUM_THREADS", threads)
    monkeypatch.setattr(tiles, "TILE_BYTES", tile_bytes)
    rng = np.random.default_rng(11)
    q = (rng.standard_normal((2, 3, 37, 8)) * spread).astype(dtype)  # (batch, n_heads, seq_q, d_head)
    k = (rng.standard_normal((2, 1, 29, 8)) * spread).astype(dtype)  # one key/value head for 3 query heads
    v = rng.standard_normal((2, 1, 29, 5)).astype(dtype)
    mask = rng.random((2, 1, 37, 29)) < 0.7
    mask[1, 0, 4] = False  # a fully masked query
    bias = rng.standard_normal((3, 37, 29)).astype(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-14}
    for m, b in [(None, None), (mask, None), (mask, bias)]:
        expected = textbook(mha.scaled_dot_product_attention, q, k, v, m, bias=b)
        got = tiles.attend_tiles(fast._scaled(q), k, v, m, b, keep_scores=keep_scores)
        assert got.dtype == dtype and got.shape == (2, 3, 37, 5)
        np.testing.assert_allclose(got, expected, **tol)
        if m is not None:
            np.testing.assert_array_equal(got[1, :, 4], 0.0)  # zero output, never NaN


def test_tiled_attention_handles_unbatched_inputs(small_tiles):
    rng = np.random.default_rng(12)
    q, k, v = (rng.standard_normal((19, 4)) for _ in range(3))  # no leading axis at all
    got = mha.scaled_dot_product_attention(q, k, v)
    assert got.shape == (19, 4)
    np.testing.assert_allclose(got, textbook(mha.scaled_dot_product_attention, q, k, v), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiles_skip_the_row_maxima_only_when_the_row_sums_allow_it(small_tiles, monkeypatch, dtype):
    """Tiles exponentiate raw scores first and look at the row sums: scores near 0 keep that result,
    while a tile with a row far below 0 (all terms underflow), far above (exp overflows: no warning
    may escape) or fully masked is computed again with its maxima. Every way gives the textbook's numbers."""
    monkeypatch.setenv("MHA_NUM_THREADS", "1")
    with_maxima = record_calls(monkeypatch, tiles, "_shift_and_exp")
    rng = np.random.default_rng(5)
    q = (rng.standard_normal((2, 24, 8)) * 0.3).astype(dtype)  # (n_heads, seq_q, d_head): scores near 0
    k = (rng.standard_normal((2, 24, 8)) * 0.3).astype(dtype)
    v = rng.standard_normal((2, 24, 4)).astype(dtype)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-14}
    np.testing.assert_allclose(fast.attention(q, k, v), textbook(mha.scaled_dot_product_attention, q, k, v),
                               **tol)
    assert not with_maxima  # every tile kept its raw exp
    q[0, 3] = -k[0, 0] * 400 / (k[0, 0] @ k[0, 0])  # a row far below 0 against the first key...
    k[0, 1:] = k[0, 0]  # ...and against every key
    q[1, 20] *= 2000  # a row whose exp overflows
    mask = np.ones((2, 24, 24), dtype=bool)
    mask[1, 9] = False  # a query that sees nothing
    for m in (None, mask):
        expected = textbook(mha.scaled_dot_product_attention, q, k, v, m)
        got, _ = fast.tiled_heads(q, k, v, m)
        np.testing.assert_allclose(got, expected, **tol)
        assert np.isfinite(got).all() and np.abs(got[0, 3]).max() > 0.1  # the low row attends too
    np.testing.assert_array_equal(got[1, 9], 0.0)
    assert len(with_maxima) >= 3  # the three tiles holding those rows went the long way


def test_threaded_full_attention_on_large_scores_equals_the_textbook(monkeypatch):
    rng = np.random.default_rng(10)
    q = rng.standard_normal((4, 2, 384, 16))
    kv = rng.standard_normal((4, 2, 384, 16))
    mask = rng.random((4, 1, 384, 384)) < 0.5
    mask[0, 0, 7] = False  # a fully masked query inside the threaded path
    assert fast.worth_it(q.shape[0] * q.shape[1] * 384 * 384)  # large enough for the door
    monkeypatch.setenv("MHA_NUM_THREADS", "3")
    threaded = mha.scaled_dot_product_attention(q, kv, kv, mask)
    np.testing.assert_allclose(threaded, textbook(mha.scaled_dot_product_attention, q, kv, kv, mask),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(threaded[0, :, 7], 0.0)


# ------------------------------------------------------------------------------------------ chunked
@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize(("seq_q", "seq_k", "block"), [(40, 40, 16), (23, 50, 7), (64, 30, 64)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("spread", [4.0, 0.5])  # scores in the tens (shifted) or near 0 (no shift needed)
def test_tiled_chunked_attention_equals_full_attention(small_tiles, monkeypatch, threads, seq_q, seq_k,
                                                       block, causal, spread):
    """The tiled, threaded online softmax gives full attention's numbers to 1e-12 (float64)."""
    monkeypatch.setenv("MHA_NUM_THREADS", threads)
    opened = record_calls(monkeypatch, fast, "chunked_attention")
    rng = np.random.default_rng(seq_q * seq_k + block)
    q = rng.standard_normal((2, 3, seq_q, 8)) * spread  # (batch, n_heads, seq_q, d_head)
    k = rng.standard_normal((2, 1, seq_k, 8)) * spread  # one key/value head, broadcast over the query heads
    v = rng.standard_normal((2, 1, seq_k, 6))
    mask = rng.random((2, 1, seq_q, seq_k)) < 0.6
    mask[0, 0, 3] = False  # a fully masked query: zero output, never NaN
    full_mask = mask & mha.causal_mask(seq_q, seq_k) if causal else mask
    expected = textbook(mha.scaled_dot_product_attention, q, k, v, full_mask)
    got = mha.chunked_attention(q, k, v, mask, causal=causal, block_size=block)
    assert opened  # through the door
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got[0, :, 3], 0.0)
    got32 = mha.chunked_attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32),
                                  causal=causal, block_size=block)
    assert got32.dtype == np.float32
    causal_only = mha.causal_mask(seq_q, seq_k) if causal else None
    np.testing.assert_allclose(got32, textbook(mha.scaled_dot_product_attention, q, k, v, causal_only),
                               atol=1e-5)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_tiled_chunked_attention_rescales_only_when_needed_and_still_exactly(small_tiles, monkeypatch,
                                                                           threads):
    """The shift is raised lazily (only past e²⁰): scores that jump between key blocks, rows whose
    first blocks are all masked and whose later scores sit near -1000 (a shift of 0 would underflow to
    an all-zero row) and fully masked rows all give full attention's numbers."""
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
    full = textbook(mha.scaled_dot_product_attention, q, k, v, mask)
    chunked = mha.chunked_attention(q, k, v, mask, block_size=block)
    assert np.abs(full[1, 2, :10]).max() > 0.1  # the far-negative rows still attend somewhere
    np.testing.assert_array_equal(chunked[0, 1, 5], 0.0)
    np.testing.assert_allclose(chunked, full, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiled_chunked_attention_trusts_raw_exp_only_when_the_sums_allow(small_tiles, monkeypatch, dtype):
    """Key blocks are exponentiated before any maximum is known; a first block whose row sums fall
    below the headroom (a row that sees nothing yet, so a shift of 0 could later underflow to an all-zero
    row) goes the long way, and so does a later block that tops the shift. Same numbers either way."""
    monkeypatch.setenv("MHA_NUM_THREADS", "1")
    first_blocks_with_maxima = record_calls(monkeypatch, tiles, "_unshifted_is_safe")
    rng = np.random.default_rng(8)
    seq, d_head, block = 64, 8, 16
    q = (rng.standard_normal((2, seq, d_head)) * 0.3).astype(dtype)  # (n_heads, seq, d_head)
    k = (rng.standard_normal((2, seq, d_head)) * 0.3).astype(dtype)
    v = rng.standard_normal((2, seq, d_head)).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(mha.chunked_attention(q, k, v, block_size=block),
                               textbook(mha.scaled_dot_product_attention, q, k, v), atol=tol)
    assert not first_blocks_with_maxima  # scores near 0: every tile trusted its raw exp
    k[1] = k[1, 0]  # head 1: every key the same...
    q[1, 5] = -k[1, 0] * 900 / (k[1, 0] @ k[1, 0])  # ...and query 5 scores about -318 against each
    mask = np.ones((2, seq, seq), dtype=bool)
    mask[1, 5, :block] = False  # query 5 sees nothing in the first key block
    k[0, 40] *= 200  # head 0: a key in a later block tops every row's shift
    expected = textbook(mha.scaled_dot_product_attention, q, k, v, mask)
    got = mha.chunked_attention(q, k, v, mask, block_size=block)
    np.testing.assert_allclose(got, expected, atol=tol)
    np.testing.assert_allclose(got[1, 5], v[1, block:].mean(axis=0), atol=tol * 10)  # not a zero row
    assert first_blocks_with_maxima


def test_large_chunked_attention_keeps_memory_to_a_few_tiles():
    """Through the door too, memory does not grow with the square of the sequence."""
    seq, heads, d_head, block = 4096, 2, 16, 128
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((heads, seq, d_head)).astype(np.float32) for _ in range(3))
    assert fast.worth_it(heads * seq * seq)
    tracemalloc.start()
    tracemalloc.reset_peak()
    mha.chunked_attention(q, k, v, block_size=block)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    full_scores = heads * seq * seq * 4  # 128 MiB
    assert peak < 4 * q.nbytes + full_scores / 32


# ------------------------------------------------------------------------------------------ the layer
@pytest.mark.parametrize(
    ("batch", "config", "masked"),
    [(2, {}, False), (1, {}, True), (1, {"n_kv_heads": 2}, True), (3, {"n_kv_heads": 1}, False)],
)
def test_a_large_layer_through_the_door_equals_the_textbook(monkeypatch, batch, config, masked):
    """Above a million scores the layer's own forward runs example by example over threads, its
    attention in tiles; the numbers equal the textbook path's."""
    opened = record_calls(monkeypatch, fast, "per_example")
    layer = random_layer(32, 4, seed=19, **config)
    rng = np.random.default_rng(20)
    seq = 512  # 4 heads x 512 x 512 = 1M scores per example
    x = rng.standard_normal((batch, seq, 32))
    mask = (rng.random((batch, 1, seq, seq)) < 0.9) & mha.causal_mask(seq) if masked else None
    monkeypatch.setenv("MHA_NUM_THREADS", "2")
    threaded = layer(x, mask=mask)
    assert opened
    serial, weights = layer(x, mask=mask, return_weights=True)  # weights: the textbook way
    assert len(opened) == 1 and serial.dtype == x.dtype and np.isfinite(serial).all()
    np.testing.assert_allclose(threaded, serial, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("same_key_value", [True, False])
def test_cross_attention_through_the_door_equals_the_textbook(monkeypatch, same_key_value):
    layer = random_layer(32, 4, seed=21, kdim=24, vdim=24)
    rng = np.random.default_rng(22)
    x, memory = rng.standard_normal((3, 300, 32)), rng.standard_normal((3, 700, 24))
    value = memory if same_key_value else rng.standard_normal((3, 700, 24))
    bias = rng.standard_normal((4, 1, 700))  # (n_heads, 1, seq_k): one bias per head and key
    monkeypatch.setenv("MHA_NUM_THREADS", "2")
    np.testing.assert_allclose(layer(x, memory, value, bias=bias),
                               textbook(layer, x, memory, value, bias=bias), rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_tiled_layer_keeps_float32_and_zeroes_fully_masked_queries(small_tiles, monkeypatch, dtype):
    monkeypatch.setattr(tiles, "TILE_BYTES", 4096)
    layer = mha.MultiHeadAttention(16, 4, n_kv_heads=2, rng=5, dtype=dtype)
    x = np.random.default_rng(6).standard_normal((2, 33, 16)).astype(dtype)
    mask = np.ones((2, 1, 33, 33), dtype=bool)
    mask[1, 0, 9] = False
    head_mask = np.array([1.0, 0.0, 0.5, 1.0])
    out = layer(x, mask=mask, head_mask=head_mask)
    assert out.dtype == dtype
    np.testing.assert_allclose(out[1, 9], layer.b_o)  # no attention output: only the output bias
    np.testing.assert_allclose(out, textbook(layer, x, mask=mask, head_mask=head_mask),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("batch", [1, 3])  # one example: tiles over threads; several: examples over threads
def test_a_large_layer_holds_all_scores_only_when_asked_for_the_weights(monkeypatch, batch):
    """Without weights the scores live in cache-sized tiles per thread; returned weights must exist whole."""
    monkeypatch.setenv("MHA_NUM_THREADS", "2")
    layer = mha.MultiHeadAttention(64, 4, rng=23, dtype=np.float32)
    seq = 1024  # 4 heads x 1024 x 1024 = 4M scores = 16 MiB per example
    x = np.random.default_rng(24).standard_normal((batch, seq, 64)).astype(np.float32)
    all_scores = batch * 4 * seq * seq * 4  # bytes
    layer(x)  # warm up: the thread pool and BLAS buffers are not part of the forward pass

    def peak(**kwargs):
        tracemalloc.start()
        tracemalloc.reset_peak()
        result = layer(x, **kwargs)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top, result

    top_out, out = peak()
    top_weights, (out_w, weights) = peak(return_weights=True)
    assert top_weights >= all_scores and weights.nbytes == all_scores
    assert top_out < all_scores / 4  # a few tiles per thread, nowhere near the full score tensor
    np.testing.assert_allclose(out, out_w, rtol=1e-5, atol=1e-6)


def test_a_pool_replaced_by_one_of_another_size_is_shut_down():
    from mha.fast import threads

    first = threads._thread_pool(2)
    second = threads._thread_pool(3)
    try:
        assert first is not None and second is not None and second is not first
        assert threads._thread_pool(3) is second  # the same size: kept
        with pytest.raises(RuntimeError, match="shutdown"):
            first.submit(int)  # a pool that was shut down refuses new work
        assert second.submit(int, "7").result() == 7
    finally:
        threads._thread_pool(threads.worker_count())


# ------------------------------------------------------------------------------------------ weights, tiled
@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tile_bytes", [4096, 1 << 20])  # row blocks of one head; several whole heads
def test_the_weighted_step_is_the_textbook_bit_for_bit(monkeypatch, threads, dtype, tile_bytes):
    """softmax_tiles runs the textbook's steps on each row: no rounding differs, masks and biases too."""
    from mha.attention import attention_forward

    monkeypatch.setenv("MHA_NUM_THREADS", threads)
    monkeypatch.setattr(tiles, "TILE_BYTES", tile_bytes)
    rng = np.random.default_rng(31)
    q, k, v = (rng.standard_normal((2, 3, n, 8)).astype(dtype) for n in (70, 90, 90))
    mask = (rng.random((2, 1, 70, 90)) < 0.8) & mha.causal_mask(70, 90)
    mask[1, 0, 5] = False  # a query that sees nothing: zero weights, zero output
    bias = rng.standard_normal((3, 70, 90)).astype(dtype)
    for options in ({}, {"mask": mask}, {"bias": bias}, {"mask": mask, "bias": bias}):
        want_out, want_weights = attention_forward(q, k, v, options.get("mask"), options.get("bias"))
        out, weights = fast.weighted_heads(q, k, v, options.get("mask"), options.get("bias"))
        assert out.dtype == weights.dtype == dtype
        assert out.tobytes() == want_out.tobytes() and weights.tobytes() == want_weights.tobytes()
    assert not np.isnan(weights).any() and not weights[1, :, 5].any()


@pytest.mark.parametrize("layer_class", [mha.MultiHeadAttention, mha.ModernAttention])
def test_a_large_layer_asked_for_weights_takes_the_door_and_keeps_every_bit(monkeypatch, layer_class):
    opened = record_calls(monkeypatch, fast, "weighted_heads")
    monkeypatch.setenv("MHA_NUM_THREADS", "2")
    options = {"rope": True, "qk_norm": True} if layer_class is mha.ModernAttention else {}
    layer = layer_class(64, 4, rng=25, dtype=np.float32, **options)
    x = np.random.default_rng(26).standard_normal((1, 512, 64)).astype(np.float32)  # 1M scores
    out, weights = layer(x, causal=True, return_weights=True)
    assert opened
    want_out, want_weights = textbook(layer, x, causal=True, return_weights=True)
    assert out.tobytes() == want_out.tobytes() and weights.tobytes() == want_weights.tobytes()
    small = x[:, :64]
    layer(small, return_weights=True)
    assert len(opened) == 1  # 4 x 64 x 64 scores: the textbook's own step


def test_an_overflow_in_the_weighted_step_is_named_as_the_textbook_names_it():
    q = np.full((1, 1, 1100, 4), 1e20, np.float32)
    with pytest.raises(ValueError, match="attention scores overflowed float32"):
        fast.weighted_heads(q, q, q)
