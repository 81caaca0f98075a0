"""Head statistics on patterns whose answers can be worked out by hand, and ablation on made-up metrics."""

import math

import numpy as np
import pytest

import mha
from mha.lab.analysis import (
    head_entropy,
    head_importance,
    mean_attention_distance,
    pruning_curve,
    strongest_connections,
    weight_at_offset,
    weight_on,
)


def previous_token_pattern(seq):
    """Every query on the token before it; the first one (which has none) on itself."""
    w = np.eye(seq, k=-1)
    w[0, 0] = 1.0
    return w


def test_entropy_of_one_hot_rows_is_zero_and_of_uniform_rows_is_log_n():
    seq = 5
    uniform_causal = mha.causal_mask(seq) / np.arange(1, seq + 1)[:, None]  # query i spreads over i + 1 keys
    w = np.stack([previous_token_pattern(seq), uniform_causal])  # (n_heads, seq, seq)
    expected_uniform = np.mean([math.log(i + 1) for i in range(seq)])
    np.testing.assert_allclose(head_entropy(w), [0.0, expected_uniform], atol=1e-12)


def test_entropy_skips_fully_masked_queries_and_respects_query_mask():
    w = np.array([[[0.5, 0.5], [0.0, 0.0]]])  # query 1 attends nowhere
    np.testing.assert_allclose(head_entropy(w), [math.log(2)])
    w2 = np.array([[[0.5, 0.5], [1.0, 0.0]]])
    np.testing.assert_allclose(head_entropy(w2, query_mask=np.array([False, True])), [0.0])


def test_mean_attention_distance_counts_tokens_between_query_and_key():
    seq = 6
    looks_back_two = np.eye(seq, k=-2)
    looks_back_two[:2] = np.eye(seq)[:2]  # the first two queries look at themselves (distance 0)
    w = np.stack([looks_back_two, np.eye(seq)])
    np.testing.assert_allclose(mean_attention_distance(w), [2 * (seq - 2) / seq, 0.0])


def test_mean_attention_distance_uses_end_aligned_positions_for_cached_keys():
    # 1 new query after 3 cached keys: it sits at position 3; all its weight on key 0 is 3 tokens away
    w = np.array([[[1.0, 0.0, 0.0, 0.0]]])
    np.testing.assert_allclose(mean_attention_distance(w), [3.0])
    np.testing.assert_allclose(weight_at_offset(w, -3), [1.0])


def test_weight_on_averages_the_target_share_over_queries_that_have_targets():
    w = np.array([[[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.5]]])[None]  # (1, 1, 3, 3)
    targets = np.zeros((1, 3, 3), dtype=bool)
    targets[0, 1, 0] = True  # query 1 should look at key 0 (it puts 0.25 there)
    targets[0, 2, [0, 1]] = True  # query 2 at keys 0 or 1 (0.2 + 0.3)
    np.testing.assert_allclose(weight_on(w, targets), [(0.25 + 0.5) / 2])  # query 0 has no target


def test_weight_at_offset_finds_the_previous_token_head():
    seq = 6
    rng = np.random.default_rng(0)
    noisy = mha.softmax(np.where(mha.causal_mask(seq), rng.standard_normal((seq, seq)), -np.inf))
    w = np.stack([previous_token_pattern(seq), noisy])
    shares = weight_at_offset(w, -1)
    assert shares[0] == 1.0
    expected_noisy = np.mean([noisy[i, i - 1] for i in range(1, seq)])
    assert shares[1] == pytest.approx(expected_noisy)


def test_statistics_accept_batched_and_single_examples_alike():
    rng = np.random.default_rng(1)
    w = mha.softmax(rng.standard_normal((3, 2, 4, 4)))  # (batch, n_heads, seq_q, seq_k)
    per_example = np.stack([head_entropy(w[b]) for b in range(3)])
    np.testing.assert_allclose(head_entropy(w), per_example.mean(axis=0))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: head_entropy(np.ones((4, 4))), ValueError, "must have shape"),
        (lambda: head_entropy(-np.ones((1, 2, 2))), ValueError, "non-negative"),
        (lambda: head_entropy(np.ones((1, 2, 2)), query_mask=np.array([1, 0])), ValueError, "query_mask"),
        (lambda: head_entropy(np.ones((1, 2, 2)), query_mask=np.zeros(2, bool)), ValueError, "no query"),
        (lambda: weight_on(np.ones((1, 2, 2)), np.ones((2, 2))), TypeError, "bool"),
        (lambda: weight_on(np.ones((1, 2, 2)), np.ones((3, 3), bool)), ValueError, "broadcast"),
        (lambda: weight_at_offset(np.ones((1, 2, 2)), 0.5), TypeError, "integer"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_strongest_connections_lists_the_heaviest_links_per_head():
    tokens = ["the", "cat", "sat"]
    w = np.zeros((2, 3, 3))
    w[0] = previous_token_pattern(3)  # the->the, cat->the, sat->cat, all 1.0
    w[1, :, 2] = [0.1, 0.2, 0.9]
    w[1, :, 0] = [0.9, 0.8, 0.1]
    links = strongest_connections(w, tokens, top=2)
    assert links[0] == [("the", "the", 1.0), ("cat", "the", 1.0)]  # ties: earlier query first
    assert links[1] == [("the", "the", 0.9), ("sat", "sat", 0.9)]
    with pytest.raises(ValueError, match="2 query and 3 key tokens"):
        strongest_connections(w, tokens[:2], tokens)


def test_head_importance_is_the_metric_increase_when_one_head_is_removed():
    cost = np.array([[0.3, 0.0], [1.5, 0.2]])  # (n_layers, n_heads): each removed head adds its cost
    calls = []

    def metric(mask):
        calls.append(mask.copy())
        return 2.0 + float(np.sum(cost * (1 - mask)))

    baseline, importance = head_importance(metric, cost.shape)
    assert baseline == 2.0
    np.testing.assert_allclose(importance, cost)
    assert len(calls) == 1 + cost.size and all(m.sum() == cost.size - 1 for m in calls[1:])


def test_pruning_curve_removes_least_important_first_and_records_every_step():
    # Heads 0 and 1 are redundant copies: either alone is enough, both gone costs 5.
    def metric(mask):
        return (5.0 if mask[0] == mask[1] == 0 else 0.0) + 0.1 * (1 - mask[2])

    baseline, importance = head_importance(metric, 3)
    np.testing.assert_allclose(importance, [0.0, 0.0, 0.1])  # alone, neither copy looks important
    curve = pruning_curve(metric, importance)
    assert curve.removed == [(0,), (1,), (2,)]
    np.testing.assert_allclose(curve.values, [0.0, 0.0, 5.0, 5.1])  # the cliff single-head ablation hides
    np.testing.assert_array_equal(curve.masks[2], [0.0, 0.0, 1.0])


def test_ablation_refuses_metrics_that_do_not_return_a_finite_number():
    with pytest.raises(TypeError, match="number"):
        head_importance(lambda m: "low", 2)
    with pytest.raises(ValueError, match="nan"):
        pruning_curve(lambda m: float("nan"), np.zeros(2))
    with pytest.raises(ValueError, match="finite score"):
        pruning_curve(lambda m: 0.0, np.array([np.nan]))
