"""mha.lab.positions: what a relative bias and ALiBi do to attention."""

import numpy as np

import mha
from mha.lab.examples import toy_embeddings
from mha.lab.positions import BIAS_HEADS, alibi_weights, relative_bias_weights
from mha.positions import alibi_bias


def test_relative_bias_widget_heads_do_what_their_titles_say():
    weights, tokens = relative_bias_weights(8.0, 12)
    assert weights.shape == (len(BIAS_HEADS), 12, 12) and len(tokens) == 12
    np.testing.assert_array_equal(weights[0, 1:].argmax(axis=1), np.arange(11))  # previous token
    np.testing.assert_array_equal(weights[1].argmax(axis=1), np.arange(12))  # itself
    np.testing.assert_array_equal(weights[2, :-1].argmax(axis=1), np.arange(1, 12))  # next token
    unbiased, _ = relative_bias_weights(0.0, 12)
    layer = mha.MultiHeadAttention(32, 4, rng=0)
    x = toy_embeddings(tokens, 32, seed=0)
    np.testing.assert_allclose(unbiased, layer(x, return_weights=True)[1], rtol=1e-12)


def test_alibi_widget_weights_equal_a_softmax_of_the_bias_alone():
    weights = alibi_weights(4, 6)
    bias = alibi_bias(4, 6)
    for h in range(4):
        for i in range(6):
            allowed = bias[h, i, : i + 1]  # causal: keys 0..i
            expected = np.exp(allowed - allowed.max()) / np.exp(allowed - allowed.max()).sum()
            np.testing.assert_allclose(weights[h, i, : i + 1], expected, rtol=1e-12)
            assert not weights[h, i, i + 1:].any()
