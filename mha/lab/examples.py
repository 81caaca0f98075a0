"""The sentences the course returns to, and deterministic toy embeddings for them.

Toy embeddings are not learned: each word gets a fixed random vector derived from the word itself, so the
same word has the same vector in every sentence and every run. They are enough to watch shapes, masks and
heads at work; the chapter on heads that learn trains real ones.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Sequence

import numpy as np

from mha.layers import MultiHeadAttention
from mha.typing import DTypeLike, FloatArray
from mha.validation import check_dtype_argument, check_positive_int

__all__ = ["SENTENCES", "PARAPHRASE_PAIRS", "LONG_TOKENS", "tokenize", "toy_embeddings", "head_weights"]

#: The course's example sentences, by a short name.
SENTENCES = {
    "animal": "The animal didn't cross the street because it was too tired",
    "telescope": "She saw the man with the telescope",
    "keys": "The keys on the table belong to Sara",
    "cat": "The cat sat on the mat",
    "fox": "The quick brown fox jumps over the lazy dog",
    "apple": "I love Apple phones",
}

#: Pairs of sentences that say the same thing in different words (for sentence embeddings: pair ``i``'s
#: two halves should be closer to each other than to any other pair's).
PARAPHRASE_PAIRS = (
    ("The cat slept on the warm windowsill.", "A cat was napping on the sunny window ledge."),
    ("The train to the city was delayed by an hour.", "Our train into town arrived sixty minutes late."),
    ("She bought fresh bread at the bakery this morning.", "This morning she got a new loaf from the baker."),
    ("The museum is closed on Mondays.", "On Mondays the museum does not open."),
    ("He forgot his umbrella and got soaked in the rain.", "He left his umbrella at home and was drenched."),
    ("The children built a sandcastle on the beach.", "On the beach, the kids made a castle out of sand."),
    ("Prices at the supermarket went up again.", "Groceries have become more expensive once more."),
    ("The old bridge was repaired last summer.", "Last summer, workers fixed the aging bridge."),
)


#: A word: letters and digits of any script, with one apostrophe (straight or curly) allowed inside.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def tokenize(sentence: str) -> list[str]:
    """Split a sentence into word tokens (apostrophes stay inside words, punctuation is dropped).

    Letters of any script count, accented ones included (the text is NFC-normalised first, so an
    accent typed as a separate combining mark stays on its letter); emoji and symbols are dropped.

    Examples
    --------
    >>> tokenize("The animal didn't cross the street.")
    ['The', 'animal', "didn't", 'cross', 'the', 'street']
    >>> tokenize("Le café n’est pas loin")
    ['Le', 'café', 'n’est', 'pas', 'loin']
    """
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    return _WORD.findall(unicodedata.normalize("NFC", sentence))


def toy_embeddings(tokens: Sequence[str], d_model: int, *, seed: int = 0,
                   dtype: DTypeLike = np.float64) -> np.ndarray:
    """One fixed random vector per word, shape (len(tokens), d_model), with unit variance per entry.

    Case is ignored ("The" and "the" share a vector), so repeated words really are identical inputs.

    Parameters
    ----------
    tokens : sequence of str
    d_model : int
    seed : int, default 0
        Changes every word's vector together.
    dtype : np.float32 or np.float64

    Examples
    --------
    >>> x = toy_embeddings(["The", "cat", "the"], 4)
    >>> x.shape, bool(np.array_equal(x[0], x[2]))
    ((3, 4), True)
    """
    d_model = check_positive_int(d_model, "d_model")
    dtype = check_dtype_argument(dtype)
    tokens = list(tokens)
    if not tokens or not all(isinstance(t, str) for t in tokens):
        raise TypeError("tokens must be a non-empty sequence of str")
    rows = []
    for token in tokens:
        word_seed = zlib.crc32(token.lower().encode("utf8"))  # stable across runs, unlike hash()
        rows.append(np.random.default_rng([seed, word_seed]).standard_normal(d_model))
    return np.stack(rows).astype(dtype)


#: 32 tokens: four of the course's sentences one after the other.
LONG_TOKENS = tuple(w for name in ("animal", "telescope", "keys", "cat") for w in tokenize(SENTENCES[name]))


def head_weights(n_heads: int, seq_len: int, *, d_model: int = 64, seed: int = 0,
                 text: str = "") -> tuple[FloatArray, list[str]]:
    """Per-head attention weights of a seeded layer on the first ``seq_len`` tokens of ``LONG_TOKENS``.

    Parameters
    ----------
    n_heads : int
        Must divide ``d_model``.
    seq_len : int
        Between 1 and ``len(LONG_TOKENS)``.
    d_model : int, default 64
    seed : int, default 0
        Seeds both the layer's weights and the toy embeddings.
    text : str, optional
        A sentence of the reader's own, used instead of ``LONG_TOKENS`` (its first ``seq_len`` words).

    Returns
    -------
    weights : ndarray, shape (n_heads, seq, seq)
        ``seq = seq_len``, or fewer when ``text`` has fewer words.
    tokens : list of str, length seq

    Examples
    --------
    >>> w, tokens = head_weights(4, 8)
    >>> w.shape, tokens[:3]
    ((4, 8, 8), ['The', 'animal', "didn't"])
    """
    seq_len = check_positive_int(seq_len, "seq_len")
    if not 1 <= seq_len <= len(LONG_TOKENS):
        raise ValueError(f"seq_len must lie in [1, {len(LONG_TOKENS)}], got {seq_len!r}")
    if text is not None and not isinstance(text, str):
        raise TypeError(f"text must be a str (a sentence), got {type(text).__name__}")
    tokens = tokenize(text)[:seq_len] if text and text.strip() else list(LONG_TOKENS[:seq_len])
    if not tokens:
        raise ValueError(f"no words in {text!r}: type a sentence with letters or digits")
    layer = MultiHeadAttention(d_model, n_heads, rng=seed)
    x = toy_embeddings(tokens, d_model, seed=seed)  # (seq_len, d_model)
    _, weights = layer(x, return_weights=True)  # weights: (n_heads, seq_len, seq_len)
    return weights, tokens
