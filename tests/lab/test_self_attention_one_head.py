"""mha.lab.self_attention_one_head: every step of the walkthrough is the package's arithmetic; the plane's
weights are mha.softmax of its scores."""

import math

import numpy as np
import pytest

import mha
from mha.lab.self_attention_one_head import STEPS, geometry_weights, head_walkthrough, key_geometry


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
