from pathlib import Path

import numpy as np
import pytest

from mha._kernels import blas_threads
from tests.factories import record_calls

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_thread_counts():
    """NumPy's own BLAS (other libraries a test session loads, e.g. PyTorch's, keep their own pools)."""
    numpy_dir = str(Path(np.__file__).resolve().parent)
    return [pool["num_threads"] for pool in threadpoolctl.threadpool_info()
            if pool["user_api"] == "blas" and pool["filepath"].startswith(numpy_dir)]


def test_blas_threads_limits_inside_the_block_and_restores_after():
    before = _blas_thread_counts()
    assert before, "NumPy's BLAS should be visible to threadpoolctl"
    with blas_threads(1):
        assert set(_blas_thread_counts()) == {1}
    assert _blas_thread_counts() == before
    with blas_threads(None):
        assert _blas_thread_counts() == before


def test_blas_threads_refuses_nonsense():
    with pytest.raises(ValueError, match=">= 1"):
        blas_threads(0)
    with pytest.raises(TypeError, match="integer"):
        blas_threads(1.5)


@pytest.mark.parametrize(("lead", "seq_q", "seq_k", "itemsize"),
                         [((2, 3), 100, 50, 8), ((1, 8), 2048, 2048, 4), ((5,), 7, 3, 4)])
def test_tiles_cover_every_score_once(lead, seq_q, seq_k, itemsize):
    from mha import _kernels
    for whole_items in (True, False):
        covered = np.zeros(lead + (seq_q,), dtype=int)
        for lead_index, heads, rows in _kernels._plan(lead, seq_q, seq_k, itemsize, whole_items=whole_items):
            covered[lead_index + (heads, rows)] += 1
            n_heads, n_rows = heads.stop - heads.start, rows.stop - rows.start
            assert n_heads == 1 or n_rows == seq_q or not whole_items  # whole items: one contiguous slab
        np.testing.assert_array_equal(covered, 1)


def test_a_tile_takes_broadcast_axes_whole():
    from mha import _kernels
    arr = np.arange(2 * 1 * 6 * 1).reshape(2, 1, 6, 1)  # (batch, heads=1, rows, cols=1): broadcasts
    part = _kernels._part(arr, (1,), slice(2, 4), slice(1, 3), slice(0, 5))
    assert part.shape == (1, 2, 1)
    np.testing.assert_array_equal(part[0, :, 0], [7, 8])
    assert _kernels._part(None, (0,), slice(0, 1), slice(0, 1)) is None


def test_scores_go_unshifted_only_within_the_headroom():
    """exp of raw scores is used only when it can neither overflow nor lose a whole row to underflow."""
    from mha._kernels import EXP_HEADROOM, _unshifted_is_safe
    inside = np.array([[-EXP_HEADROOM], [0.0], [EXP_HEADROOM]])  # (rows, 1): row maxima
    assert _unshifted_is_safe(inside)
    assert _unshifted_is_safe(np.array([[3.0], [-np.inf]]))  # a fully masked row is zeros either way
    for outside in (EXP_HEADROOM + 1, -EXP_HEADROOM - 1, np.nan, np.inf):
        assert not _unshifted_is_safe(np.array([[0.0], [outside]])), outside


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiles_skip_the_row_maxima_only_when_the_row_sums_allow_it(monkeypatch, dtype):
    """Tiles exponentiate raw scores first and look at the row sums: scores near 0 keep that result,
    while a tile with a row far below 0 (all terms underflow), far above (exp overflows: no warning
    may escape) or fully masked is computed again with its maxima. Every way gives the plain numbers."""
    from mha import _kernels
    from mha.attention import attend, plain_attention
    monkeypatch.setattr(_kernels, "TILE_MIN_SCORES", 0)
    monkeypatch.setattr(_kernels, "TILE_BYTES", 2048)
    monkeypatch.setenv("MHA_NUM_THREADS", "1")
    with_maxima = record_calls(monkeypatch, _kernels, "_shift_and_exp")
    rng = np.random.default_rng(5)
    q = (rng.standard_normal((2, 24, 8)) * 0.3).astype(dtype)  # (n_heads, seq_q, d_head): scores near 0
    k = (rng.standard_normal((2, 24, 8)) * 0.3).astype(dtype)
    v = rng.standard_normal((2, 24, 4)).astype(dtype)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-14}
    np.testing.assert_allclose(attend(q, k, v)[0], plain_attention(q, k, v, None, None, False)[0], **tol)
    assert not with_maxima  # every tile kept its raw exp
    q[0, 3] = -k[0, 0] * 400 / (k[0, 0] @ k[0, 0])  # a row far below 0 against the first key...
    k[0, 1:] = k[0, 0]  # ...and against every key
    q[1, 20] *= 2000  # a row whose exp overflows
    mask = np.ones((2, 24, 24), dtype=bool)
    mask[1, 9] = False  # a query that sees nothing
    for m in (None, mask):
        expected = plain_attention(q, k, v, m, None, True)
        got = attend(q, k, v, m, return_weights=True, keep_scores=False)
        np.testing.assert_allclose(got[0], expected[0], **tol)
        np.testing.assert_allclose(got[1], expected[1], **tol)
        assert np.isfinite(got[0]).all() and np.abs(got[0][0, 3]).max() > 0.1  # the low row attends too
    np.testing.assert_array_equal(got[0][1, 9], 0.0)
    assert len(with_maxima) >= 3  # the three tiles holding those rows went the long way


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float32, 1e-6), (np.float64, 1e-15)])
def test_row_sums_by_blas_match_exact_sums_to_rounding(dtype, rtol):
    """Tiles sum their rows as a product with ones; for positive terms, even 16k of them, that stays
    within rounding of the exact sum (computed here in float64 from the same float32 numbers)."""
    from mha._kernels import _row_sums
    block = np.random.default_rng(6).random((2, 3, 16384)).astype(dtype)  # (heads, rows, keys), all > 0
    got = _row_sums(block)
    assert got.shape == (2, 3, 1) and got.dtype == dtype
    exact = np.sort(block.astype(np.float64), axis=-1).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(got, exact, rtol=rtol)
