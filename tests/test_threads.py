import numpy as np
import pytest

from mha import _threads
from mha.feed_forward import _gelu_exact_chain, _gelu_tanh_chain, gelu_exact_inplace, gelu_inplace


def _square_plus_one(view):
    np.square(view, out=view)
    view += 1


@pytest.fixture
def small_blocks(monkeypatch):
    """Split even a small array, into blocks of 100 elements."""
    monkeypatch.setattr(_threads, "SPLIT_MIN_ELEMENTS", 1000)
    monkeypatch.setattr(_threads, "BLOCK_ELEMENTS", 100)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_elementwise_chain_in_blocks_gives_the_whole_array_result(small_blocks, monkeypatch, threads):
    monkeypatch.setenv("MHA_NUM_THREADS", threads)
    x = np.random.default_rng(0).standard_normal((7, 301))  # 2107 elements: parts end inside blocks
    sizes = []

    def chain(view):
        sizes.append(view.size)
        _square_plus_one(view)

    expected = x.copy()
    _square_plus_one(expected)
    got = _threads.elementwise_inplace(chain, x)
    assert got is x  # overwritten in place, shape kept
    np.testing.assert_array_equal(x, expected)
    assert sum(sizes) == x.size and max(sizes) <= 100  # every element once, in blocks
    assert len(sizes) >= 22  # ceil(2107 / 100) at least; one more per part boundary inside a block


def test_small_or_strided_arrays_go_to_the_chain_whole(small_blocks):
    sizes = []

    def chain(view):
        sizes.append(view.shape)
        _square_plus_one(view)

    small = np.ones((10, 10))
    _threads.elementwise_inplace(chain, small)
    strided = np.ones((200, 20))[:, ::2]  # 2000 elements, not contiguous
    _threads.elementwise_inplace(chain, strided)
    assert sizes == [(10, 10), (200, 10)]
    np.testing.assert_array_equal(strided, 2.0)


def test_a_failing_part_raises_in_the_caller(small_blocks, monkeypatch):
    monkeypatch.setenv("MHA_NUM_THREADS", "2")

    def chain(view):
        if view[0] > 0.5:
            raise ValueError("this block fails")

    x = np.linspace(0, 1, 2000)  # the second thread's part fails
    with pytest.raises(ValueError, match="this block fails"):
        _threads.elementwise_inplace(chain, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("inplace", "chain"), [(gelu_exact_inplace, _gelu_exact_chain),
                                                  (gelu_inplace, _gelu_tanh_chain)])
def test_large_gelus_in_blocks_match_the_whole_array_bit_for_bit(monkeypatch, dtype, inplace, chain):
    """Above the split size a GELU runs in blocks on two threads: each element's value is unchanged."""
    monkeypatch.setenv("MHA_NUM_THREADS", "2")
    x = (np.random.default_rng(1).standard_normal((300, 1000)) * 4).astype(dtype)  # above the split size
    assert x.size >= _threads.SPLIT_MIN_ELEMENTS
    whole = x.copy()
    chain(whole)
    got = inplace(x)
    assert got is x and got.dtype == dtype
    np.testing.assert_array_equal(got, whole)
