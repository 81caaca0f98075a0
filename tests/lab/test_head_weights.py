"""mha.lab.examples.head_weights: the per-head maps of a seeded layer on the course's sentences."""

import numpy as np
import pytest

from mha.lab.examples import LONG_TOKENS, head_weights, toy_embeddings
from mha.layers import MultiHeadAttention
from tests.reference import multi_head_loop


@pytest.mark.parametrize("n_heads, seq_len", [(1, 4), (2, 8), (8, 5)])
def test_weights_match_a_head_by_head_reference(n_heads, seq_len):
    weights, tokens = head_weights(n_heads, seq_len, d_model=16, seed=3)
    assert tokens == list(LONG_TOKENS[:seq_len])
    layer = MultiHeadAttention(16, n_heads, rng=3)
    x = toy_embeddings(tokens, 16, seed=3)
    _, expected = multi_head_loop(x, {"key": x, "value": x}, layer.parameters(), n_heads)
    np.testing.assert_allclose(weights, expected, atol=1e-12)


def test_more_heads_regroup_the_same_projections():
    # Same seed, same d_model: W_q and W_k are identical, so 1 head's scores are the sum of 2 heads'
    # scores (each scaled by its own sqrt(d_head)). Compare through the log-weights, which are the
    # scores up to a per-row constant.
    one, tokens = head_weights(1, 6, d_model=8, seed=0)
    layer = MultiHeadAttention(8, 2, rng=0)
    x = toy_embeddings(tokens, 8, seed=0)
    q, k = x @ layer.W_q, x @ layer.W_k  # (seq, d_model) each
    scores_per_head = [q[:, h * 4:(h + 1) * 4] @ k[:, h * 4:(h + 1) * 4].T for h in range(2)]
    combined = sum(scores_per_head) / np.sqrt(8)  # the single head's scaled scores
    log_w = np.log(one[0])
    np.testing.assert_allclose(log_w - log_w[:, :1], combined - combined[:, :1], atol=1e-10)


@pytest.mark.parametrize("seq_len", [0, len(LONG_TOKENS) + 1])
def test_sequence_length_out_of_range_is_refused(seq_len):
    with pytest.raises(ValueError, match="seq_len"):
        head_weights(2, seq_len)


def test_heads_that_do_not_divide_d_model_are_refused():
    with pytest.raises(ValueError, match="divisible"):
        head_weights(3, 4, d_model=64)


def test_the_readers_sentence_replaces_the_long_tokens():
    from mha.lab.examples import head_weights, tokenize, toy_embeddings
    from mha.layers import MultiHeadAttention

    text = "Seven sleepy otters floated down the river"
    weights, tokens = head_weights(4, 5, text=text, seed=2)
    assert tokens == tokenize(text)[:5]
    _, expected = MultiHeadAttention(64, 4, rng=2)(toy_embeddings(tokens, 64, seed=2), return_weights=True)
    np.testing.assert_allclose(weights, expected)
    assert head_weights(2, 32, text="two words")[0].shape == (2, 2, 2)  # shorter than seq_len: all its words
    with pytest.raises(ValueError, match="no words"):
        head_weights(2, 4, text="?!")


def test_a_sentence_that_is_not_text_or_has_no_words_is_refused_clearly():
    with pytest.raises(TypeError, match="text must be a str.*got int"):
        head_weights(2, 8, text=5)
    with pytest.raises(ValueError, match="no words in '🙂 !': type a sentence with letters"):
        head_weights(2, 8, text="🙂 !")


def test_a_length_that_is_not_a_whole_number_is_refused():
    with pytest.raises(TypeError, match="seq_len must be an integer, got float 4.0"):
        head_weights(2, 4.0)
