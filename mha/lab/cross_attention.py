"""A toy English→French "translation" whose cross-attention alignment is built by hand, not trained.

The decoder (French) attends to the encoder (English). Each side's vectors are two blocks side by side::

    English encoder output: [meaning (d_head - d_position) | position (d_position)], width kdim = d_head
    French decoder state:   [meaning (d_model - d_position) | position (d_position)], width d_model = 3 d_head

The meaning blocks are fixed random vectors per word (:func:`mha.lab.examples.toy_embeddings`, one seed per
language; English ones have unit length). The position blocks are the same sinusoids in both languages, so
"French word 4" and "English word 4" carry the same position vector.

Three heads look at these blocks differently (:data:`HEAD_NAMES`):

* ``meaning``: its query maps the French meaning onto the English meaning space with a linear map fitted by
  least squares over :data:`DICTIONARY` (:func:`fit_dictionary_map`); its key is the English meaning. The
  score is high exactly where the source word translates the target word.
* ``position``: query and key are the position blocks; target word ``i`` looks at source word ``i``.
* ``meaning + position``: both, with position as a weaker tie-breaker (which of two "the" a "le" translates).

The decoder side holds the French word being written at each position, as an alignment plot shows it: which
source word did the model read when it wrote this word?

Examples
--------
>>> pair = SENTENCE_PAIRS["cat"]
>>> weights = alignment(pair, d_head=16)
>>> weights.shape  # (n_heads, seq_q French words, seq_k English words)
(3, 7, 7)
>>> [pair.english[j] for j in weights[2].argmax(axis=-1)]
['the', 'cat', 'black', 'sees', 'the', 'dog', 'white']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mha.lab.examples import toy_embeddings
from mha.layers import MultiHeadAttention
from mha.typing import DTypeLike
from mha.validation import check_dtype_argument, check_positive_int

__all__ = [
    "DICTIONARY",
    "HEAD_NAMES",
    "SENTENCE_PAIRS",
    "SentencePair",
    "Widths",
    "widths",
    "position_vectors",
    "encoder_inputs",
    "decoder_inputs",
    "fit_dictionary_map",
    "translation_attention",
    "alignment",
]

#: What each of the three heads of :func:`translation_attention` compares.
HEAD_NAMES = ("meaning", "position", "meaning + position")

#: The bilingual dictionary: French word -> the English word it translates (several may share one).
DICTIONARY = {
    "le": "the", "la": "the", "chat": "cat", "chien": "dog", "poisson": "fish", "noir": "black",
    "blanc": "white", "petit": "small", "gros": "big", "voit": "sees", "mange": "eats", "dort": "sleeping",
    "pomme": "potato", "de": "potato", "terre": "potato",
}  # fmt: skip

#: Score margins (after the 1/sqrt(d_head) scale) that set the heads' sharpness: a learned model would reach
#: such sizes by growing its weights. e**8 ≈ 3000: a translation beats an unrelated word by that factor.
MEANING_MARGIN = 8.0
POSITION_MARGIN = 4.0  # position head: one step off the diagonal loses a factor e**4 ≈ 55
TIE_BREAK_MARGIN = 1.5  # mixed head: position only decides between words of equal meaning
#: Position vectors change slowly enough that similarity falls steadily up to this distance (in words).
POSITION_HORIZON = 12
_LANGUAGE_SEEDS = {"english": 1, "french": 2}


@dataclass(frozen=True)
class SentencePair:
    """A sentence, its word-for-word translation and which source word each target word translates."""

    english: tuple[str, ...]
    french: tuple[str, ...]
    alignment: tuple[int, ...]  # alignment[i] = index in `english` of the word French word i translates

    def __post_init__(self):
        if len(self.alignment) != len(self.french):
            raise ValueError(
                f"alignment has {len(self.alignment)} entries for {len(self.french)} French words")
        for i, j in enumerate(self.alignment):
            if not 0 <= j < len(self.english):
                raise ValueError(
                    f"alignment[{i}] = {j} is not an index of the {len(self.english)} English words")
            if DICTIONARY.get(self.french[i]) != self.english[j]:
                raise ValueError(f"{self.french[i]!r} is aligned to {self.english[j]!r}, but the dictionary "
                                 f"translates it as {DICTIONARY.get(self.french[i])!r}")


def _pair(english: str, french: str, alignment: list[int]) -> SentencePair:
    return SentencePair(tuple(english.split()), tuple(french.split()), tuple(alignment))


#: Four pairs: adjectives that move after the noun, one that does not, a word that becomes three, and a
#: word ("is") with no counterpart, so that source and target lengths differ.
SENTENCE_PAIRS = {
    "cat": _pair("the black cat sees the white dog", "le chat noir voit le chien blanc",
                 [0, 2, 1, 3, 4, 6, 5]),
    "potato": _pair("the small dog eats the potato", "le petit chien mange la pomme de terre",
                    [0, 1, 2, 3, 4, 5, 5, 5]),
    "sleep": _pair("the dog is sleeping", "le chien dort", [0, 1, 3]),
    "fish": _pair("the big white cat eats the small fish", "le gros chat blanc mange le petit poisson",
                  [0, 1, 3, 2, 4, 5, 6, 7]),
}


@dataclass(frozen=True)
class Widths:
    """Block widths of the construction for a given ``d_head``."""

    d_head: int
    d_position: int  # position block, both languages
    d_meaning_en: int  # English meaning block: kdim = d_meaning_en + d_position = d_head
    d_meaning_fr: int  # French meaning block: d_model = d_meaning_fr + d_position
    d_model: int  # 3 heads of d_head

    @property
    def kdim(self) -> int:
        return self.d_head


def widths(d_head: int) -> Widths:
    """Split ``d_head`` into meaning and position blocks: a quarter for position (at least 2).

    Examples
    --------
    >>> widths(16)
    Widths(d_head=16, d_position=4, d_meaning_en=12, d_meaning_fr=44, d_model=48)
    """
    d_head = check_positive_int(d_head, "d_head")
    if d_head < 4:
        raise ValueError(f"d_head must be at least 4 (2 for position, 2 for meaning), got {d_head}")
    d_position = max(2, 2 * (d_head // 8))  # even: sine and cosine pairs
    d_model = len(HEAD_NAMES) * d_head
    return Widths(d_head, d_position, d_head - d_position, d_model - d_position, d_model)


def position_vectors(seq: int, d_position: int) -> np.ndarray:
    """Unit-length sinusoidal position vectors, shape (seq, d_position).

    All frequencies stay below ``pi / POSITION_HORIZON``, so the dot product of two positions falls steadily
    with their distance (up to the horizon) and is largest for the same position.

    Examples
    --------
    >>> p = position_vectors(5, 4)
    >>> np.allclose(np.linalg.norm(p, axis=1), 1.0)
    True
    >>> bool(np.all(np.diff(p[0] @ p.T) < 0))  # similarity to position 0 falls with distance
    True
    """
    seq = check_positive_int(seq, "seq")
    d_position = check_positive_int(d_position, "d_position")
    if d_position % 2:
        raise ValueError(f"d_position must be even (sine and cosine pairs), got {d_position}")
    n_freq = d_position // 2
    omega = (math.pi / POSITION_HORIZON) / np.arange(1, n_freq + 1)  # (n_freq,)
    angles = np.arange(seq)[:, None] * omega  # (seq, n_freq)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1) / math.sqrt(n_freq)


def _check_words(tokens, vocabulary, language: str) -> list[str]:
    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"{language} tokens must be a sequence of str (split the sentence into words first)")
    tokens = list(tokens)
    if not tokens:
        raise ValueError(f"{language} tokens must not be empty")
    unknown = sorted(set(tokens) - set(vocabulary))
    if unknown:
        raise ValueError(f"unknown {language} words {unknown}; known: {sorted(vocabulary)}")
    return tokens


def _english_vocabulary() -> set[str]:
    return {word for pair in SENTENCE_PAIRS.values() for word in pair.english}


def _english_meanings(tokens, d_meaning: int) -> np.ndarray:
    meaning = toy_embeddings(tokens, d_meaning, seed=_LANGUAGE_SEEDS["english"])  # (seq, d_meaning)
    return meaning / np.linalg.norm(meaning, axis=1, keepdims=True)  # unit length: a perfect match scores 1


def encoder_inputs(english: Sequence[str], d_head: int = 16, *, dtype: DTypeLike = np.float64) -> np.ndarray:
    """English words as the encoder hands them to cross-attention: shape (seq_k, kdim = d_head).

    Examples
    --------
    >>> encoder_inputs(["the", "cat"], d_head=16).shape
    (2, 16)
    """
    w = widths(d_head)
    english = _check_words(english, _english_vocabulary(), "English")
    blocks = [_english_meanings(english, w.d_meaning_en), position_vectors(len(english), w.d_position)]
    return np.concatenate(blocks, axis=1).astype(check_dtype_argument(dtype))  # (seq_k, d_head)


def decoder_inputs(french: Sequence[str], d_head: int = 16, *, dtype: DTypeLike = np.float64) -> np.ndarray:
    """French words as decoder states that query the encoder: shape (seq_q, d_model = 3 * d_head).

    Examples
    --------
    >>> decoder_inputs(["le", "chat"], d_head=16).shape
    (2, 48)
    """
    w = widths(d_head)
    french = _check_words(french, DICTIONARY, "French")
    meaning = toy_embeddings(french, w.d_meaning_fr, seed=_LANGUAGE_SEEDS["french"])
    blocks = [meaning, position_vectors(len(french), w.d_position)]
    return np.concatenate(blocks, axis=1).astype(check_dtype_argument(dtype))  # (seq_q, d_model)


def fit_dictionary_map(d_head: int = 16) -> np.ndarray:
    """Least-squares map from French meaning vectors to the English meaning of their translation.

    Solves ``min ||X_fr @ M - Y_en||`` over the dictionary's words: row ``w`` of ``X_fr`` is French word
    ``w``'s meaning block, row ``w`` of ``Y_en`` the meaning block of its English translation. When the French
    block is at least as wide as the dictionary is long, the fit is exact.

    Returns
    -------
    ndarray, shape (d_meaning_fr, d_meaning_en)

    Examples
    --------
    >>> w = widths(16)
    >>> M = fit_dictionary_map(16)
    >>> x_chat = decoder_inputs(["chat"], 16)[:, :w.d_meaning_fr]
    >>> y_cat = encoder_inputs(["cat"], 16)[:, :w.d_meaning_en]
    >>> np.allclose(x_chat @ M, y_cat)
    True
    """
    w = widths(d_head)
    french = sorted(DICTIONARY)
    x_fr = toy_embeddings(french, w.d_meaning_fr, seed=_LANGUAGE_SEEDS["french"])  # (n_words, d_meaning_fr)
    y_en = _english_meanings([DICTIONARY[word] for word in french], w.d_meaning_en)  # (n_words, d_meaning_en)
    solution, *_ = np.linalg.lstsq(x_fr, y_en, rcond=None)
    return solution


def translation_attention(d_head: int = 16, *, dtype: DTypeLike = np.float64) -> MultiHeadAttention:
    """The three-head cross-attention layer of the construction (see the module docstring).

    ``d_model = 3 * d_head`` (French decoder), ``kdim = vdim = d_head`` (English encoder), no biases.
    Every head's key and value is the encoder vector itself (``W_k``, ``W_v`` are identities side by side),
    and ``W_o`` is the identity, so head ``i``'s output is columns ``i * d_head`` to ``(i + 1) * d_head``
    of the layer's output. The heads differ only in ``W_q``.

    Examples
    --------
    >>> layer = translation_attention(16)
    >>> layer.d_model, layer.kdim, layer.n_heads
    (48, 16, 3)
    """
    w = widths(d_head)
    layer = MultiHeadAttention(w.d_model, len(HEAD_NAMES), kdim=w.kdim, vdim=w.kdim, bias=False, dtype=dtype)
    # Sizes of the scores' dot products, before the layer divides them by sqrt(d_head).
    sqrt_d = math.sqrt(d_head)
    p = position_vectors(2, w.d_position)
    step = 1.0 - float(p[0] @ p[1])  # similarity lost by one position of distance
    meaning_gain = MEANING_MARGIN * sqrt_d  # a perfect match scores 1, an unrelated word about 0
    meaning_rows, position_rows = slice(0, w.d_meaning_fr), slice(w.d_meaning_fr, w.d_model)

    def head_columns(i, block):  # the meaning or position block inside head i's d_head columns
        start = i * d_head + (0 if block == "meaning" else w.d_meaning_en)
        return slice(start, start + (w.d_meaning_en if block == "meaning" else w.d_position))

    W_q = np.zeros((w.d_model, w.d_model))
    dictionary_map = fit_dictionary_map(d_head)
    eye = np.eye(w.d_position)
    W_q[meaning_rows, head_columns(0, "meaning")] = meaning_gain * dictionary_map
    W_q[position_rows, head_columns(1, "position")] = POSITION_MARGIN * sqrt_d / step * eye
    W_q[meaning_rows, head_columns(2, "meaning")] = meaning_gain * dictionary_map
    W_q[position_rows, head_columns(2, "position")] = TIE_BREAK_MARGIN * sqrt_d / step * eye
    layer.W_q = W_q
    identities = np.tile(np.eye(d_head), len(HEAD_NAMES))  # (d_head, 3 * d_head): every head reads it all
    layer.W_k = identities
    layer.W_v = identities
    layer.W_o = np.eye(w.d_model)
    return layer


def alignment(pair: SentencePair | str, d_head: int = 16) -> np.ndarray:
    """Cross-attention weights of :func:`translation_attention` for one sentence pair.

    Parameters
    ----------
    pair : SentencePair or str
        A pair, or the name of one in :data:`SENTENCE_PAIRS`.
    d_head : int, default 16

    Returns
    -------
    ndarray, shape (n_heads = 3, seq_q = len(pair.french), seq_k = len(pair.english))

    Examples
    --------
    >>> alignment("sleep").shape
    (3, 3, 4)
    """
    if isinstance(pair, str):
        if pair not in SENTENCE_PAIRS:
            raise ValueError(f"unknown sentence pair {pair!r}; choose one of {sorted(SENTENCE_PAIRS)}")
        pair = SENTENCE_PAIRS[pair]
    if not isinstance(pair, SentencePair):
        raise TypeError(f"pair must be a SentencePair or a name, got {type(pair).__name__}")
    layer = translation_attention(d_head)
    _, weights = layer(decoder_inputs(pair.french, d_head), encoder_inputs(pair.english, d_head),
                       return_weights=True)
    return weights
