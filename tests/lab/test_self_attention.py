"""mha.lab.self_attention: score variance grows like d_k, 1/sqrt(d_k) undoes it, saturation follows."""

import math

import numpy as np
import pytest

from mha.lab.self_attention import QUERIES_PER_KEY_SET, entropy, sample_scores, scaling_curves
from tests.reference import softmax_row


@pytest.mark.parametrize("d_k", [1, 8, 64, 512])
def test_raw_score_variance_is_about_d_k(d_k):
    # q.k is a sum of d_k products of independent standard normals, each of variance 1.
    scores = sample_scores(d_k, seq_k=16, n_queries=4000, scaled=False, rng=np.random.default_rng(d_k))
    assert scores.var() == pytest.approx(d_k, rel=0.1)


@pytest.mark.parametrize("d_k", [1, 8, 64, 512])
def test_scaled_score_variance_is_about_one(d_k):
    scores = sample_scores(d_k, seq_k=16, n_queries=4000, scaled=True, rng=np.random.default_rng(d_k))
    assert scores.var() == pytest.approx(1.0, rel=0.1)


def test_scaled_is_raw_divided_by_sqrt_d_k_for_the_same_seed():
    raw = sample_scores(64, 8, 50, scaled=False, rng=3)
    scaled = sample_scores(64, 8, 50, scaled=True, rng=3)
    np.testing.assert_allclose(scaled, raw / 8.0)


@pytest.mark.parametrize("n_queries", [1, QUERIES_PER_KEY_SET - 1, QUERIES_PER_KEY_SET + 1, 101])
def test_sample_shape_for_any_number_of_queries(n_queries):
    assert sample_scores(4, 5, n_queries, scaled=True, rng=0).shape == (n_queries, 5)


def test_groups_of_queries_get_fresh_keys():
    # With d_k = 1 every score is q_i * k_j, so row / row[0] = k / k_0: the same for every row that
    # shares its keys, different across groups.
    scores = sample_scores(1, 4, 2 * QUERIES_PER_KEY_SET, scaled=False, rng=0)  # (2 groups, 4 keys)
    ratio_first = scores[0] / scores[0, 0]
    ratio_second = scores[QUERIES_PER_KEY_SET] / scores[QUERIES_PER_KEY_SET, 0]
    np.testing.assert_allclose(scores[1] / scores[1, 0], ratio_first)  # same group: same keys
    assert not np.allclose(ratio_second, ratio_first)


def test_sample_is_deterministic_given_a_seed():
    np.testing.assert_array_equal(sample_scores(16, 4, 30, scaled=False, rng=np.random.default_rng(7)),
                                  sample_scores(16, 4, 30, scaled=False, rng=np.random.default_rng(7)))


@pytest.mark.parametrize("bad, error", [(0, ValueError), (2.5, TypeError), ("8", TypeError)])
def test_sample_rejects_bad_widths(bad, error):
    with pytest.raises(error, match="d_k"):
        sample_scores(bad, 4, 4, scaled=True, rng=0)


# --- entropy --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_entropy_of_uniform_is_log_n(n):
    assert entropy(np.full(n, 1.0 / n)) == pytest.approx(math.log(n))


def test_entropy_matches_the_definition_row_by_row():
    rng = np.random.default_rng(0)
    weights = np.stack([softmax_row(row) for row in rng.standard_normal((6, 9)) * 3])
    expected = [-sum(p * math.log(p) for p in row if p > 0) for row in weights]
    np.testing.assert_allclose(entropy(weights), expected)


def test_entropy_of_one_hot_and_of_a_fully_masked_row_is_zero():
    rows = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(entropy(rows), [0.0, 0.0])


def test_entropy_along_another_axis():
    weights = np.array([[0.5, 1.0], [0.5, 0.0]])  # columns are distributions
    np.testing.assert_allclose(entropy(weights, axis=0), [math.log(2), 0.0])


@pytest.mark.parametrize("bad", [np.array([0.5, -0.1, 0.6]), np.array([np.nan, 1.0]), np.float64(1.0)])
def test_entropy_rejects_what_is_not_a_distribution(bad):
    with pytest.raises(ValueError):
        entropy(bad)


# --- curves ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def curves():
    return scaling_curves([1, 4, 16, 64, 256, 1024], seq_k=16, n_queries=1000, rng=0)


def test_curves_have_one_entry_per_width(curves):
    for name in ("variance", "max_weight", "entropy"):
        for variant in ("raw", "scaled"):
            assert getattr(curves, f"{name}_{variant}").shape == (6,)
    np.testing.assert_array_equal(curves.d_k, [1, 4, 16, 64, 256, 1024])


def test_raw_variance_tracks_d_k_and_scaled_stays_near_one(curves):
    np.testing.assert_allclose(curves.variance_raw / curves.d_k, 1.0, rtol=0.15)
    np.testing.assert_allclose(curves.variance_scaled, 1.0, rtol=0.15)


def test_without_scaling_the_softmax_saturates(curves):
    assert np.all(np.diff(curves.max_weight_raw) > 0)  # ever more peaked
    assert np.all(np.diff(curves.entropy_raw) < 0)
    assert curves.max_weight_raw[-1] > 0.9
    assert curves.entropy_raw[-1] < 0.2 * math.log(16)


def test_with_scaling_the_softmax_spread_does_not_depend_on_d_k(curves):
    assert np.ptp(curves.max_weight_scaled) < 0.08
    assert np.ptp(curves.entropy_scaled) < 0.2
    assert np.all(curves.entropy_scaled > 0.8 * math.log(16))


def test_at_width_one_scaling_changes_nothing(curves):
    assert curves.variance_raw[0] == curves.variance_scaled[0]
    assert curves.entropy_raw[0] == curves.entropy_scaled[0]


def test_weights_bounds_hold(curves):
    for values in (curves.max_weight_raw, curves.max_weight_scaled):
        assert np.all((values >= 1 / 16) & (values <= 1))
    for values in (curves.entropy_raw, curves.entropy_scaled):
        assert np.all((values >= 0) & (values <= math.log(16) + 1e-12))


@pytest.mark.parametrize("bad, error", [([], ValueError), ([4, 0], ValueError), ([4.0], TypeError)])
def test_curves_reject_bad_widths(bad, error):
    with pytest.raises(error):
        scaling_curves(bad, rng=0)


def test_sentence_scores_are_the_projected_words_against_each_other():
    from mha.lab.examples import tokenize, toy_embeddings
    from mha.lab.self_attention import sentence_scores
    from mha.layers import MultiHeadAttention

    text, d_k = "the cat sat on the mat", 64
    raw = sentence_scores(text, d_k, scaled=False, seed=3)
    x = toy_embeddings(tokenize(text), d_k, seed=3)  # (seq, d_k)
    q, k, _ = MultiHeadAttention(d_k, 1, rng=3).project(x)
    np.testing.assert_allclose(raw, q @ k.T)
    np.testing.assert_allclose(sentence_scores(text, d_k, scaled=True, seed=3), raw / 8.0)
    # "the" twice: the same query (to rounding: an AVX-512 BLAS may round rows of one product differently)
    np.testing.assert_allclose(raw[0], raw[4], rtol=1e-12, atol=1e-12 * np.abs(raw).max())
    assert not np.allclose(raw[0], raw[1])  # another word is another query
    with pytest.raises(ValueError, match="at least two words"):
        sentence_scores("hello", d_k, scaled=True)
