import numpy as np
import pytest

from mha.lab.examples import SENTENCES, tokenize, toy_embeddings


def test_tokenize_keeps_contractions_and_drops_punctuation():
    assert tokenize(SENTENCES["animal"])[2] == "didn't"
    assert tokenize("Hello, world!") == ["Hello", "world"]
    assert len(tokenize(SENTENCES["fox"])) == 9


def test_tokenize_keeps_the_letters_of_every_script_and_curly_apostrophes():
    assert tokenize("I didn’t order café crème") == ["I", "didn’t", "order", "café", "crème"]
    assert tokenize("Привет, мир! 東京 2024") == ["Привет", "мир", "東京", "2024"]
    decomposed = "cafe\u0301 au lait"  # the accent typed as a combining mark after the e
    assert tokenize(decomposed) == ["café", "au", "lait"]
    assert tokenize("snake_case 🙂 x+y") == ["snake", "case", "x", "y"]


def test_toy_embeddings_give_each_word_one_vector_in_every_sentence():
    a = toy_embeddings(tokenize(SENTENCES["cat"]), 16)
    b = toy_embeddings(["mat", "The"], 16)
    np.testing.assert_array_equal(a[5], b[0])  # "mat" in both
    np.testing.assert_array_equal(a[0], a[4])  # "The" and "the"
    assert not np.allclose(a[1], a[2])
    assert not np.array_equal(toy_embeddings(["cat"], 16, seed=1), toy_embeddings(["cat"], 16))


def test_toy_embeddings_have_unit_variance_entries_and_requested_dtype():
    x = toy_embeddings([f"word{i}" for i in range(200)], 64, dtype=np.float32)
    assert x.dtype == np.float32 and x.shape == (200, 64)
    assert abs(float(x.std()) - 1.0) < 0.05 and abs(float(x.mean())) < 0.05


def test_examples_errors():
    with pytest.raises(TypeError, match="non-empty sequence of str"):
        toy_embeddings([], 4)
    with pytest.raises(TypeError, match="sentence must be a str"):
        tokenize(["a"])
