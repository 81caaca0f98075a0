import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mha


@given(st.integers(1, 12), st.integers(1, 12))
def test_causal_mask_lets_query_i_see_keys_up_to_its_own_position(seq_q, seq_k):
    mask = mha.causal_mask(seq_q, seq_k)
    assert mask.shape == (seq_q, seq_k) and mask.dtype == bool
    for i in range(seq_q):
        position = seq_k - seq_q + i  # queries are the last seq_q tokens
        for j in range(seq_k):
            assert mask[i, j] == (j <= position)


def test_causal_mask_with_a_cache_lets_the_last_query_see_every_key():
    mask = mha.causal_mask(3, 10)
    assert mask[-1].all()
    assert mask[0].sum() == 8


def test_causal_mask_defaults_to_square():
    np.testing.assert_array_equal(mha.causal_mask(4), np.tril(np.ones((4, 4), dtype=bool)))


def test_padding_mask_hides_positions_past_each_length():
    mask = mha.padding_mask([3, 0, 5], 5)
    assert mask.shape == (3, 1, 1, 5)
    for b, length in enumerate([3, 0, 5]):
        assert mask[b, 0, 0].tolist() == [j < length for j in range(5)]


def test_padding_and_causal_masks_combine_by_broadcasting():
    combined = mha.padding_mask([2, 4], 4) & mha.causal_mask(4)
    assert combined.shape == (2, 1, 4, 4)
    assert not combined[0, 0, 3, 2] and combined[1, 0, 3, 2]


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: mha.causal_mask(0), ValueError, "seq_q must be >= 1"),
        (lambda: mha.causal_mask(3, 2.5), TypeError, "seq_k must be an integer"),
        (lambda: mha.padding_mask([1, 6], 5), ValueError, r"\[0, seq_k=5\]"),
        (lambda: mha.padding_mask([1.5], 5), TypeError, "integers"),
        (lambda: mha.padding_mask([[1]], 5), TypeError, "1-D"),
        (lambda: mha.torch_masks_to_mask(np.zeros((3, 3), bool), np.zeros((2, 4), bool)), ValueError,
         r"attn_mask \(3, 3\) and key_padding_mask \(2, 4\) must agree on seq_k"),
        (lambda: mha.torch_masks_to_mask(np.zeros((6, 3, 4), bool), np.zeros((2, 4), bool), n_heads=2),
         ValueError, "must agree on batch"),
    ],
)
def test_mask_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_torch_masks_are_translated_with_opposite_polarity():
    blocked = np.array([[False, True], [False, False]])
    padding = np.array([[False, False], [False, True]])
    allowed = mha.torch_masks_to_mask(blocked, padding)
    assert allowed.shape == (2, 1, 2, 2)
    np.testing.assert_array_equal(allowed[0, 0], ~blocked)
    np.testing.assert_array_equal(allowed[1, 0], ~blocked & np.array([True, False]))


def test_torch_float_and_per_head_masks():
    additive = np.where(np.triu(np.ones((3, 3)), 1) > 0, -np.inf, 0.0)
    np.testing.assert_array_equal(mha.torch_masks_to_mask(additive), mha.causal_mask(3))
    per_head = np.zeros((2 * 4, 3, 3), dtype=bool)
    per_head[5, 0, 1] = True  # batch 1, head 1
    allowed = mha.torch_masks_to_mask(per_head, n_heads=4)
    assert allowed.shape == (2, 4, 3, 3) and not allowed[1, 1, 0, 1] and allowed.sum() == 2 * 4 * 9 - 1
    assert mha.torch_masks_to_mask() is None
    with pytest.raises(ValueError, match="additive bias"):
        mha.torch_masks_to_mask(np.full((2, 2), -1e9))
    with pytest.raises(ValueError, match="needs n_heads"):
        mha.torch_masks_to_mask(per_head)


def test_torch_unbatched_and_float_padding_masks():
    padding = np.array([False, False, True])
    allowed = mha.torch_masks_to_mask(None, padding)
    assert allowed.shape == (1, 1, 3)  # broadcasts over (n_heads, seq_q, seq_k) of an unbatched call
    np.testing.assert_array_equal(allowed[0, 0], [True, True, False])
    additive = np.where(padding, -np.inf, 0.0)[None]  # (batch=1, seq_k), float
    np.testing.assert_array_equal(mha.torch_masks_to_mask(None, additive)[0, 0, 0], [True, True, False])
    with pytest.raises(ValueError, match=r"\(batch, seq_k\), or \(seq_k,\)"):
        mha.torch_masks_to_mask(None, np.zeros((1, 1, 3), dtype=bool))
    with pytest.raises(TypeError, match="bool or float"):
        mha.torch_masks_to_mask(None, np.zeros(3, dtype=int))


# ------------------------------------------------------------------------------------- sparse patterns
@given(st.integers(1, 12), st.integers(0, 6), st.integers(1, 8), st.integers(0, 3))
def test_sliding_window_mask_matches_its_definition(seq_q, extra_keys, window, sinks):
    seq_k = seq_q + extra_keys
    mask = mha.sliding_window_mask(seq_q, seq_k, window=window, sinks=sinks)
    assert mask.shape == (seq_q, seq_k) and mask.dtype == bool
    for i in range(seq_q):
        p = seq_k - seq_q + i
        for j in range(seq_k):
            assert mask[i, j] == (0 <= p - j < window or (j < sinks and j <= p))


def test_a_window_as_long_as_the_sequence_is_the_causal_mask_and_width_one_is_the_diagonal():
    np.testing.assert_array_equal(mha.sliding_window_mask(6, window=6), mha.causal_mask(6))
    np.testing.assert_array_equal(mha.sliding_window_mask(6, window=1), np.eye(6, dtype=bool))


def test_sliding_window_mask_refuses_a_window_of_zero():
    with pytest.raises(ValueError, match="window must be >= 1"):
        mha.sliding_window_mask(4, window=0)


def test_strided_mask_is_causal_and_keeps_the_recent_past_and_every_stride():
    mask = mha.masks.strided_mask(12, 4)
    assert not (mask & ~mha.causal_mask(12)).any()
    assert mask[11].nonzero()[0].tolist() == [3, 7, 8, 9, 10, 11]


def test_global_tokens_see_and_are_seen_by_all():
    mask = mha.masks.global_tokens_mask(10, 2, window=1)
    assert mask[:2].all() and mask[:, :2].all()
    np.testing.assert_array_equal(mask[2:, 2:], np.eye(8, dtype=bool))


def test_block_sparse_mask_is_made_of_whole_tiles_and_its_random_blocks_follow_the_seed():
    a = mha.masks.block_sparse_mask(16, 4, local_blocks=0, global_blocks=1, random_blocks=1, rng=3)
    b = mha.masks.block_sparse_mask(16, 4, local_blocks=0, global_blocks=1, random_blocks=1, rng=3)
    np.testing.assert_array_equal(a, b)
    tiles = a.reshape(4, 4, 4, 4).transpose(0, 2, 1, 3)  # (query block, key block, 4, 4)
    assert all(t.all() or not t.any() for t in tiles.reshape(16, 4, 4))  # a tile is computed or skipped
    assert tiles.any(axis=(2, 3)).sum(axis=1)[1:].tolist() == [3, 3, 3]  # global, own, one random


def test_block_sparse_mask_names_what_is_wrong():
    with pytest.raises(ValueError, match="block=3 must divide seq=16"):
        mha.masks.block_sparse_mask(16, 3)
    with pytest.raises(ValueError, match="random_blocks > 0 needs rng"):
        mha.masks.block_sparse_mask(16, 4, random_blocks=1)
