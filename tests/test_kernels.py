import pytest

from mha._kernels import blas_threads

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_thread_counts():
    return [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]


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
