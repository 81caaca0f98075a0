"""The chapter's experiments on small inputs: what each one measures, and that it measures it."""

import numpy as np
import pytest

import mha
from mha.lab import TinyGPT, bos_batch, bos_windows
from mha.lab import modern_attention as lab


def test_bos_batches_start_with_the_start_token_and_predict_the_next_character():
    ids = np.arange(50)
    batch = bos_batch(ids, 3, 6, rng=0, bos=99)
    assert (batch.tokens[:, 0] == 99).all() and batch.tokens.shape == batch.targets.shape == (3, 6)
    np.testing.assert_array_equal(batch.targets[:, :-1], batch.tokens[:, 1:])
    np.testing.assert_array_equal(batch.targets[:, -1], batch.tokens[:, -1] + 1)
    held = bos_windows(ids, 6, bos=99, n_windows=2)
    assert held.tokens.tolist() == [[99, 0, 1, 2, 3, 4], [99, 5, 6, 7, 8, 9]]
    assert held.targets.tolist() == [[0, 1, 2, 3, 4, 5], [5, 6, 7, 8, 9, 10]]


def test_receptive_field_grows_by_window_minus_one_per_layer():
    for window in (2, 5):
        assert lab.receptive_field(3, 30, window=window).tolist() == [window - 1, 2 * (window - 1),
                                                                      3 * (window - 1)]


def small_rotary_gpt(seed=0):
    return TinyGPT(12, 8, d_model=16, n_heads=2, positions="rotary", rng=seed)


def test_streaming_with_a_full_cache_equals_the_full_forward_pass():
    model = small_rotary_gpt()
    tokens = np.random.default_rng(1).integers(0, 12, 20)
    logits = model(tokens[None]).astype(np.float64)[0, :-1]  # (19, vocab)
    expected = -np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) \
        + (logits - logits.max(-1, keepdims=True))[np.arange(19), tokens[1:]]
    np.testing.assert_allclose(lab.stream_losses(model, tokens, cache="full"), -expected, rtol=1e-4)


def test_streaming_through_a_window_equals_the_band_masked_pass():
    model = small_rotary_gpt(2)
    tokens = np.random.default_rng(3).integers(0, 12, 30)
    logits = model(tokens[None], mask=mha.sliding_window_mask(30, window=5)).astype(np.float64)[0, :-1]
    shifted = logits - logits.max(-1, keepdims=True)
    expected = np.log(np.exp(shifted).sum(-1)) - shifted[np.arange(29), tokens[1:]]
    np.testing.assert_allclose(lab.stream_losses(model, tokens, cache="window", window=5), expected,
                               rtol=1e-4)


def test_rereading_equals_a_one_layer_rolling_cache_that_keeps_its_start_token():
    """One layer: caching the start token and the last context - 1 tokens reads as a fresh window does."""
    model = TinyGPT(12, 8, d_model=16, n_heads=2, n_layers=1, positions="rotary", rng=5)
    stream = np.concatenate([[11], np.random.default_rng(6).integers(0, 11, 40)])
    reread = lab.reread_losses(model, stream, start=7)
    rolling = lab.stream_losses(model, stream, cache="window", window=7, sinks=1)
    assert reread.shape == (40 - 7,)
    np.testing.assert_allclose(reread, rolling[7:], rtol=1e-4)
    # the first full window is the stream's own beginning: what dense attention read there
    np.testing.assert_allclose(reread[0], lab.stream_losses(model, stream)[7], rtol=1e-4)


def test_rereading_refuses_windows_that_are_not_full_or_not_a_stream():
    model = TinyGPT(12, 8, d_model=16, n_heads=2, positions="rotary", rng=5)
    stream = np.arange(20) % 12
    with pytest.raises(ValueError, match="start must be >= 7, got 3"):
        lab.reread_losses(model, stream, start=3)
    with pytest.raises(ValueError, match="start=19 leaves no token to predict in a stream of 20"):
        lab.reread_losses(model, stream, start=19)
    with pytest.raises(ValueError, match=r"one stream of integer ids, shape \(seq,\), got int64 \(2, 10\)"):
        lab.reread_losses(model, stream.reshape(2, 10), start=7)
    with pytest.raises(ValueError, match="integer ids"):
        lab.reread_losses(model, stream.astype(float), start=7)


def test_first_token_weight_averages_the_late_queries_of_each_head():
    w = np.zeros((2, 3, 10, 10))
    w[:, 1, 8:, 0] = 1.0
    np.testing.assert_array_equal(lab.first_token_weight([w]), [[0.0, 1.0, 0.0]])


def test_context_losses_restore_the_trained_table_and_differ_by_method():
    model = small_rotary_gpt(4)
    trained = [block.attention.rope for block in model.blocks]
    batches = {16: bos_windows(np.arange(100) % 12, 16, bos=11, n_windows=3)}
    results = lab.context_losses(model, batches, original_context=8)
    assert set(results) == {"none", "interpolation", "ntk", "yarn"}
    assert results["none"][16].shape == (16,)
    assert not np.allclose(results["none"][16], results["ntk"][16])
    assert [block.attention.rope for block in model.blocks] == trained


def test_context_losses_take_yarns_ramp_and_refuse_an_unknown_one():
    model = small_rotary_gpt(4)
    batches = {32: bos_windows(np.arange(100) % 12, 32, bos=11, n_windows=3)}
    index = lab.context_losses(model, batches, original_context=8, methods=("yarn",))
    turns = lab.context_losses(model, batches, original_context=8, methods=("yarn",), ramp="turns")
    assert not np.allclose(index["yarn"][32], turns["yarn"][32])
    with pytest.raises(ValueError, match="ramp must be one of"):
        lab.context_losses(model, batches, original_context=8, methods=("none",), ramp="paper")


def test_context_losses_need_a_rotary_model():
    with pytest.raises(ValueError, match="rotary positions"):
        lab.context_losses(TinyGPT(12, 8, d_model=16, n_heads=2, rng=0), {}, original_context=8)


def test_cache_growth_measures_a_flat_rolling_cache_and_a_growing_full_one():
    layer = mha.ModernAttention(16, 2, rope=True, rng=0, dtype=np.float32)
    growth = lab.cache_growth(layer, 64, window=8, sinks=2, every=16)
    full, rolling = growth.values()
    assert full["tokens"] == rolling["tokens"] == [16, 32, 48, 64]
    assert full["cache_bytes"] == [2 * n * 16 * 4 for n in (16, 32, 48, 64)]
    assert rolling["cache_bytes"] == [2 * 10 * 16 * 4] * 4
    assert all(peak > 0 for peak in rolling["step_peak_bytes"])


def test_logit_ranges_bound_the_normed_and_capped_steps():
    ranges = lab.logit_ranges(mha.MultiHeadAttention(16, 4, rng=0), [1, 100], seq=8)
    assert ranges["plain"]["largest"][1] > 1000 * ranges["plain"]["largest"][0]
    assert max(ranges["QK-norm"]["largest"]) <= 2.0 + 1e-9 and max(ranges["soft-cap 5"]["largest"]) <= 5
    assert ranges["plain"]["entropy"][1] < ranges["QK-norm"]["entropy"][1]


def test_largest_logit_reads_the_scores_the_softmax_sees():
    capped = TinyGPT(12, 8, d_model=16, n_heads=2, positions="rotary", attention={"softcap": 0.5}, rng=0)
    for block in capped.blocks:
        block.attention.W_q[...] *= 100
    assert lab.largest_logit(capped, np.zeros((1, 8), dtype=int)) <= 0.5
    plain = small_rotary_gpt()
    assert lab.largest_logit(plain, np.arange(8)[None]) > 0
