"""mha.lab.cross_attention: a hand-built cross-attention whose heads align a toy translation."""

import math

import numpy as np
import pytest

from mha.attention import softmax
from mha.lab import cross_attention as tt  # the toy translation

# Written by hand from the sentences (which English word each French word translates), not from the code.
EXPECTED_ALIGNMENTS = {
    "cat": [0, 2, 1, 3, 4, 6, 5],  # le chat noir voit le chien blanc
    "potato": [0, 1, 2, 3, 4, 5, 5, 5],  # le petit chien mange la pomme de terre
    "sleep": [0, 1, 3],  # le chien dort
    "fish": [0, 1, 3, 2, 4, 5, 6, 7],  # le gros chat blanc mange le petit poisson
}
WIDE_ENOUGH = [8, 16, 32]  # d_head at which every dictionary word gets its own direction


def _head_slice(h, d_head):
    return slice(h * d_head, (h + 1) * d_head)


def test_sentence_pairs_match_the_hand_written_alignments():
    assert set(tt.SENTENCE_PAIRS) == set(EXPECTED_ALIGNMENTS)
    for name, pair in tt.SENTENCE_PAIRS.items():
        assert list(pair.alignment) == EXPECTED_ALIGNMENTS[name]


def test_source_and_target_lengths_differ_in_some_pairs():
    lengths = {(len(p.french), len(p.english)) for p in tt.SENTENCE_PAIRS.values()}
    assert any(q > k for q, k in lengths) and any(q < k for q, k in lengths)


@pytest.mark.parametrize("d_head", WIDE_ENOUGH)
@pytest.mark.parametrize("name", sorted(EXPECTED_ALIGNMENTS))
def test_mixed_head_reads_the_translated_word(name, d_head):
    weights = tt.alignment(name, d_head)
    picked = weights[2].argmax(axis=-1)
    np.testing.assert_array_equal(picked, EXPECTED_ALIGNMENTS[name])
    rows = np.arange(len(picked))
    assert weights[2][rows, EXPECTED_ALIGNMENTS[name]].min() > 0.8  # sharp, not a narrow win


@pytest.mark.parametrize("d_head", WIDE_ENOUGH)
def test_meaning_head_cannot_tell_two_identical_words_apart(d_head):
    pair = tt.SENTENCE_PAIRS["cat"]  # "the" at source positions 0 and 4
    weights = tt.alignment(pair, d_head)[0]
    for i, word in enumerate(pair.french):
        if word == "le":
            assert weights[i, 0] == pytest.approx(weights[i, 4])
            assert weights[i, 0] + weights[i, 4] > 0.95


def test_meaning_head_ignores_word_order_and_position_head_ignores_words():
    pair, d_head = tt.SENTENCE_PAIRS["fish"], 16
    layer = tt.translation_attention(d_head)
    x_fr = tt.decoder_inputs(pair.french, d_head)
    order = np.array([3, 0, 7, 5, 1, 6, 2, 4])
    shuffled = [pair.english[j] for j in order]
    _, w = layer(x_fr, tt.encoder_inputs(pair.english, d_head), return_weights=True)
    _, w_shuffled = layer(x_fr, tt.encoder_inputs(shuffled, d_head), return_weights=True)
    # Meaning: the same words, moved, receive the same weights.
    np.testing.assert_allclose(w_shuffled[0], w[0][:, order], atol=1e-12)
    # Position: the same positions, new words, the same weights.
    np.testing.assert_allclose(w_shuffled[1], w[1], atol=1e-12)


def test_position_head_is_diagonal_where_both_sentences_have_the_position():
    pair = tt.SENTENCE_PAIRS["potato"]  # 8 French words, 6 English
    picked = tt.alignment(pair, 16)[1].argmax(axis=-1)
    np.testing.assert_array_equal(picked[:6], np.arange(6))
    assert set(picked[6:]) == {5}  # beyond the source's end: the nearest position


def test_weights_follow_the_definition_of_each_head():
    """Recompute head 0's scores from the blocks by hand: gain * (x_fr M) . (english meaning)."""
    pair, d_head = tt.SENTENCE_PAIRS["cat"], 16
    w = tt.widths(d_head)
    x_fr, x_en = tt.decoder_inputs(pair.french, d_head), tt.encoder_inputs(pair.english, d_head)
    M = tt.fit_dictionary_map(d_head)
    scores = tt.MEANING_MARGIN * (x_fr[:, :w.d_meaning_fr] @ M) @ x_en[:, :w.d_meaning_en].T
    np.testing.assert_allclose(tt.alignment(pair, d_head)[0], softmax(scores), atol=1e-12)


def test_dictionary_map_is_exact_when_french_block_is_wide_enough():
    d_head = 16
    w = tt.widths(d_head)
    assert w.d_meaning_fr >= len(tt.DICTIONARY)
    french = sorted(tt.DICTIONARY)
    x_fr = tt.decoder_inputs(french, d_head)[:, :w.d_meaning_fr]
    y_en = tt.encoder_inputs([tt.DICTIONARY[f] for f in french], d_head)[:, :w.d_meaning_en]
    np.testing.assert_allclose(x_fr @ tt.fit_dictionary_map(d_head), y_en, atol=1e-10)


def test_output_of_mixed_head_carries_the_meaning_of_the_aligned_word():
    pair, d_head = tt.SENTENCE_PAIRS["potato"], 16
    w = tt.widths(d_head)
    x_en = tt.encoder_inputs(pair.english, d_head)
    out = tt.translation_attention(d_head)(tt.decoder_inputs(pair.french, d_head), x_en)
    read = out[:, _head_slice(2, d_head)][:, :w.d_meaning_en]  # (seq_q, d_meaning_en)
    nearest = (read @ x_en[:, :w.d_meaning_en].T).argmax(axis=-1)
    # Compared as words: the two "the" carry the same meaning vector.
    assert [pair.english[j] for j in nearest] == [pair.english[j] for j in EXPECTED_ALIGNMENTS["potato"]]


def test_widths_add_up():
    for d_head in (4, 8, 16, 32, 64):
        w = tt.widths(d_head)
        assert w.d_meaning_en + w.d_position == w.kdim == d_head
        assert w.d_meaning_fr + w.d_position == w.d_model == 3 * d_head
        assert w.d_position % 2 == 0 and w.d_meaning_en >= 2


def test_position_vectors_unit_and_closer_when_nearer():
    p = tt.position_vectors(tt.POSITION_HORIZON + 1, 8)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0)
    for i in range(len(p)):
        sims = p[i] @ p.T
        distances = np.abs(np.arange(len(p)) - i)
        order = np.argsort(distances, kind="stable")
        assert np.all(np.diff(sims[order][np.diff(distances[order], prepend=-1) > 0]) < 0)
    # Same position vectors in both languages.
    en, fr = tt.encoder_inputs(["the", "cat"], 16), tt.decoder_inputs(["le", "chat"], 16)
    np.testing.assert_array_equal(en[:, -4:], fr[:, -4:])


def test_similarity_of_positions_matches_cosine_sum():
    p = tt.position_vectors(6, 4)
    omega = np.array([math.pi / tt.POSITION_HORIZON, math.pi / tt.POSITION_HORIZON / 2])
    for delta in range(6):
        assert p[0] @ p[delta] == pytest.approx(np.cos(delta * omega).mean())


def test_float32_stays_float32():
    layer = tt.translation_attention(16, dtype=np.float32)
    x_fr = tt.decoder_inputs(["le", "chat"], 16, dtype=np.float32)
    x_en = tt.encoder_inputs(["the", "cat"], 16, dtype=np.float32)
    out, weights = layer(x_fr, x_en, return_weights=True)
    assert out.dtype == weights.dtype == np.float32


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: tt.encoder_inputs(["the", "zebra"]), ValueError, "unknown English words \\['zebra'\\]"),
        (lambda: tt.decoder_inputs(["le", "zèbre"]), ValueError, "unknown French words"),
        (lambda: tt.decoder_inputs("le chat"), TypeError, "sequence of str"),
        (lambda: tt.encoder_inputs([]), ValueError, "must not be empty"),
        (lambda: tt.widths(3), ValueError, "at least 4"),
        (lambda: tt.position_vectors(3, 3), ValueError, "even"),
        (lambda: tt.alignment("dog"), ValueError, "unknown sentence pair 'dog'"),
        (lambda: tt.alignment(3), TypeError, "SentencePair or a name"),
        (lambda: tt.SentencePair(("the",), ("le", "chat"), (0,)), ValueError, "1 entries for 2"),
        (lambda: tt.SentencePair(("the",), ("le",), (1,)), ValueError, "not an index"),
        (lambda: tt.SentencePair(("the", "cat"), ("chat",), (0,)), ValueError, "translates it as 'cat'"),
    ],
)
def test_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()
