"""mha.lab.self_attention_one_head: every step of the walkthrough is the package's arithmetic; the plane's
weights are mha.softmax of its scores."""

import math

import numpy as np
import pytest

import mha
from mha.lab.self_attention_one_head import (
    STEPS,
    geometry_weights,
    head_walkthrough,
    key_geometry,
    soft_lookup,
)


@pytest.mark.parametrize(("sentence", "d_model", "d_k", "seed"), [
    ("the cat sat down", 4, 2, 0), ("a b", 3, 1, 5), ("one two three four five six seven eight", 6, 3, 2)])
def test_each_step_is_the_package_arithmetic(sentence, d_model, d_k, seed):
    head = head_walkthrough(sentence, d_model=d_model, d_k=d_k, rng=seed)
    seq = len(sentence.split())
    assert head.x.shape == (seq, d_model) and head.q.shape == head.k.shape == head.v.shape == (seq, d_k)
    np.testing.assert_allclose(head.q, head.x @ head.W_q)
    np.testing.assert_allclose(head.scores, head.q @ head.k.T / math.sqrt(d_k))
    np.testing.assert_allclose(head.weights, mha.softmax(head.scores))
    np.testing.assert_allclose(head.output, mha.scaled_dot_product_attention(head.q, head.k, head.v))
    i, j = seq - 1, 0
    assert math.isclose(head.score_terms(i, j).sum() / math.sqrt(d_k), head.scores[i, j])
    assert np.array_equal(head.x, np.round(head.x, 1))  # one decimal: what a cell prints is exact
    assert STEPS[0] == "embeddings" and STEPS[-1] == "weighted sum"


def test_the_walkthrough_is_deterministic_and_refuses_long_sentences():
    a, b = head_walkthrough(rng=3), head_walkthrough(rng=3)
    assert np.array_equal(a.W_q, b.W_q) and not np.array_equal(a.W_q, head_walkthrough(rng=4).W_q)
    with pytest.raises(ValueError, match="1 to 8 tokens"):
        head_walkthrough("one two three four five six seven eight nine")


def test_the_plane_holds_one_arrow_per_word_and_the_query_of_its_token():
    geometry = key_geometry("the cat saw the dog", query_token="dog")
    assert geometry.tokens == ["the", "cat", "saw", "dog"]  # "the" once
    assert geometry.keys.shape == (4, 2) and geometry.query.shape == (2,)
    with pytest.raises(ValueError, match="not a token"):
        key_geometry("the cat", query_token="dog")


@pytest.mark.parametrize("seed", range(8))
def test_a_key_bias_above_one_leaves_directions_that_score_every_key_below_zero(seed):
    """The chapter's third experiment ("point it away from every key") can be done, whatever the seed."""
    geometry = key_geometry(rng=seed)
    angles = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    directions = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (720, 2)
    assert np.all(directions @ geometry.keys.T < 0, axis=1).mean() > 1 / 8  # an arc of more than 45°
    bare = key_geometry(rng=seed, key_bias=0)
    np.testing.assert_array_equal(bare.key_bias, 0)
    np.testing.assert_allclose(geometry.keys - geometry.key_bias, bare.keys)  # the same keys, shifted
    np.testing.assert_array_equal(geometry.query, bare.query)
    for query in (geometry.query, 5 * directions[7], -geometry.key_bias):  # the bias changes no weight
        np.testing.assert_allclose(geometry_weights(query, geometry.keys), geometry_weights(query, bare.keys))


def test_the_bias_follows_the_keys_mean_and_the_longest_key():
    geometry = key_geometry("the cat saw the dog", query_token="cat", key_bias=2.0, rng=1)
    bare = key_geometry("the cat saw the dog", query_token="cat", key_bias=0, rng=1)
    longest = np.linalg.norm(bare.keys, axis=1).max()
    assert math.isclose(np.linalg.norm(geometry.key_bias), 2.0 * longest)
    mean = bare.keys.mean(axis=0)
    assert math.isclose(geometry.key_bias @ mean, np.linalg.norm(geometry.key_bias) * np.linalg.norm(mean))
    single = key_geometry("dog", query_token="dog", rng=0)  # one key: it leans along itself
    np.testing.assert_allclose(single.keys, 2.25 * (single.keys - single.key_bias))


@pytest.mark.parametrize("bias", [-0.5, float("nan"), float("inf"), "1", True, None])
def test_a_key_bias_is_a_finite_length_of_zero_or_more(bias):
    with pytest.raises(ValueError, match="key_bias is a length"):
        key_geometry(key_bias=bias)


def test_plane_weights_are_the_softmax_of_scaled_dot_products():
    rng = np.random.default_rng(0)
    keys, query = rng.normal(size=(6, 2)), rng.normal(size=2)
    np.testing.assert_allclose(geometry_weights(query, keys), mha.softmax(keys @ query / math.sqrt(2)))
    np.testing.assert_allclose(geometry_weights([0.0, 0.0], keys), 1 / 6)  # a zero query picks none


def test_a_longer_query_sharpens_the_weights_toward_the_key_it_points_at():
    angles = np.deg2rad([0, 60, 150, 250])
    keys = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (4, 2): unit keys, well apart
    direction = keys[2]
    tops = [geometry_weights(direction * length, keys)[2] for length in (0.5, 2.0, 8.0, 32.0)]
    assert geometry_weights(direction * 2.0, keys).argmax() == 2
    assert np.all(np.diff(tops) > 0) and tops[-1] > 0.99  # same direction, longer arrow: sharper
    flipped = geometry_weights(-direction * 8.0, keys)
    assert flipped[2] == flipped.min()  # pointing away: the key it left gets the least


@pytest.mark.parametrize(("query", "keys"), [([1.0], [[1.0, 0.0]]), ([1.0, 0.0], [1.0, 0.0]),
                                              ([np.nan, 0.0], [[1.0, 0.0]]), ([1.0, 0.0], np.zeros((0, 2)))])
def test_bad_plane_input_names_the_shapes_expected(query, keys):
    with pytest.raises(ValueError, match="query|finite"):
        geometry_weights(query, keys)


def _lookup_case(seed=0, seq_k=6, d_k=4, d_v=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=d_k), rng.normal(size=(seq_k, d_k)), rng.normal(size=(seq_k, d_v))


@pytest.mark.parametrize("temperature", [0.05, 0.5, 1.0, 3.0, 40.0])
def test_a_soft_lookup_is_attention_at_a_temperature_and_its_slope_is_measured(temperature):
    query, keys, values = _lookup_case()
    lookup = soft_lookup(query, keys, values, temperature)
    scores = keys @ query / (math.sqrt(4) * temperature)
    np.testing.assert_allclose(lookup.weights, mha.softmax(scores))
    np.testing.assert_allclose(lookup.soft, lookup.weights @ values)
    assert lookup.best == scores.argmax() and np.array_equal(lookup.hard, values[scores.argmax()])
    # the same as a query 1/T times longer, at T = 1
    np.testing.assert_allclose(soft_lookup(query / temperature, keys, values).weights, lookup.weights)
    step = 1e-6  # the Jacobian's norm against central differences, one query feature at a time
    columns = [(soft_lookup(query + step * e, keys, values, temperature).soft
                - soft_lookup(query - step * e, keys, values, temperature).soft) / (2 * step)
               for e in np.eye(4)]
    assert math.isclose(lookup.sensitivity, np.linalg.norm(np.stack(columns, axis=1)), rel_tol=1e-5)


def test_the_slope_vanishes_for_a_hard_and_for_an_even_lookup():
    query, keys, values = _lookup_case(1)
    slopes = [soft_lookup(query, keys, values, t).sensitivity for t in (1e-3, 1.0, 1e4)]
    assert slopes[0] < 1e-6 * slopes[1] and slopes[2] < 1e-3 * slopes[1]
    assert soft_lookup(query, keys, values, 1e-3).weights.max() > 1 - 1e-9  # as a dictionary


@pytest.mark.parametrize(("args", "message"), [
    (dict(temperature=0.0), "positive finite"), (dict(temperature=-1.0), "positive finite"),
    (dict(temperature=float("inf")), "positive finite"), (dict(temperature=True), "positive finite"),
    (dict(temperature="1"), "positive finite"), (dict(query=np.ones(5)), "one d_k"),
    (dict(values=np.ones((5, 3))), "one seq_k"),
    (dict(keys=np.ones((0, 4)), values=np.ones((0, 3))), "seq_k"),
    (dict(query=np.array([np.nan, 0, 0, 0])), "finite"),
])
def test_a_soft_lookup_refuses_what_it_cannot_compute(args, message):
    query, keys, values = _lookup_case()
    given = {"query": query, "keys": keys, "values": values, "temperature": 1.0, **args}
    with pytest.raises(ValueError, match=message):
        soft_lookup(**given)
