"""Sequence-to-sequence tasks whose right cross-attention is known: copy, reverse, sort, word order.

Every example records, for each target token, the source position it comes from (its *alignment*):
the diagonal for copy, the anti-diagonal for reverse, a permutation for sort, and for the toy translation a
word-for-word dictionary whose adjectives move after their noun (``the big cat`` → ``le chat grand``).
Sources end with an end token that the target's end token aligns to, so every target position has one
source position to read. Sources of different lengths are padded and carry a padding mask.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha.typing import ArrayLike, FloatArray, Seed
from mha.validation import as_generator, check_positive_int

__all__ = ["VOCABULARY", "PAD", "BOS", "EOS", "TASKS", "Seq2SeqBatch", "make_batch", "alignment_match",
           "words"]

DIGITS = [str(d) for d in range(10)]
NOUNS = {"cat": "chat", "dog": "chien", "bird": "oiseau", "house": "maison", "car": "voiture",
         "fish": "poisson"}
ADJECTIVES = {"black": "noir", "white": "blanc", "big": "grand", "small": "petit", "red": "rouge",
              "old": "vieux"}
DETERMINERS = {"the": "le", "a": "un"}
VERBS = {"sees": "voit", "likes": "aime", "eats": "mange"}
_LEXICON = {**NOUNS, **ADJECTIVES, **DETERMINERS, **VERBS}

#: One vocabulary for every task: padding, start, end, digits, English words, French words.
VOCABULARY = ["<pad>", "<s>", "</s>", *DIGITS, *_LEXICON, *_LEXICON.values()]
PAD, BOS, EOS = 0, 1, 2
_ID = {w: i for i, w in enumerate(VOCABULARY)}
TASKS = ("copy", "reverse", "sort", "translate")


@dataclass(frozen=True)
class Seq2SeqBatch:
    """A padded batch of (source, target) pairs.

    Attributes
    ----------
    source : int ndarray, shape (batch, seq_k)
        Source tokens, then ``</s>``, then padding.
    source_mask : bool ndarray, shape (batch, seq_k)
        True on real tokens (``</s>`` included), False on padding.
    tokens : int ndarray, shape (batch, seq_q)
        Decoder input: ``<s>`` then the target shifted right (teacher forcing).
    targets : int ndarray, shape (batch, seq_q)
        The target tokens, then ``</s>``, then padding.
    loss_mask : bool ndarray, shape (batch, seq_q)
        True where ``targets`` is a real token.
    alignment : int ndarray, shape (batch, seq_q)
        Source position each target token comes from; -1 on padding.
    """

    source: np.ndarray
    source_mask: np.ndarray
    tokens: np.ndarray
    targets: np.ndarray
    loss_mask: np.ndarray
    alignment: np.ndarray


def words(ids: ArrayLike) -> list[str]:
    """Token ids to their words, padding dropped.

    Examples
    --------
    >>> words([3, 4, 2, 0])
    ['0', '1', '</s>']
    """
    return [VOCABULARY[i] for i in np.asarray(ids).tolist() if i != PAD]


def _sentence(rng):
    """An English sentence ``det [adj] noun verb det [adj] noun`` and its word-order translation."""
    english, french, alignment = [], [], []

    def phrase():
        det, noun = rng.choice(list(DETERMINERS)), rng.choice(list(NOUNS))
        adj = rng.choice(list(ADJECTIVES)) if rng.random() < 0.6 else None
        start = len(english)
        english.extend([det, adj, noun] if adj else [det, noun])
        french.extend([DETERMINERS[det], NOUNS[noun]] + ([ADJECTIVES[adj]] if adj else []))
        alignment.extend([start, start + 2, start + 1] if adj else [start, start + 1])

    phrase()
    verb = rng.choice(list(VERBS))
    alignment.append(len(english))
    english.append(verb)
    french.append(VERBS[verb])
    phrase()
    return [_ID[w] for w in english], [_ID[w] for w in french], alignment


def _example(task, rng, min_len, max_len):
    if task == "translate":
        return _sentence(rng)
    n = int(rng.integers(min_len, max_len + 1))
    source = rng.choice(10, size=n, replace=False) + _ID["0"]  # distinct digits: one right alignment
    order = {"copy": np.arange(n), "reverse": np.arange(n)[::-1], "sort": np.argsort(source)}[task]
    return source.tolist(), source[order].tolist(), order.tolist()


def make_batch(task: str, batch: int, rng: Seed, *, min_len: int = 3, max_len: int = 8) -> Seq2SeqBatch:
    """A fresh padded batch of ``task`` examples (digit tasks: ``min_len`` to ``max_len`` distinct digits).

    Examples
    --------
    >>> b = make_batch("reverse", 2, rng=0, min_len=3, max_len=4)
    >>> [words(s) for s in b.source]
    [['7', '2', '3', '4', '</s>'], ['6', '9', '5', '</s>']]
    >>> [words(t) for t in b.targets]
    [['4', '3', '2', '7', '</s>'], ['5', '9', '6', '</s>']]
    >>> b.alignment.tolist()  # -1: padding
    [[3, 2, 1, 0, 4], [2, 1, 0, 3, -1]]
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    batch = check_positive_int(batch, "batch")
    if not 1 <= min_len <= max_len <= 10:
        raise ValueError(f"need 1 <= min_len <= max_len <= 10 distinct digits, got {min_len}, {max_len}")
    rng = as_generator(rng)
    examples = [_example(task, rng, min_len, max_len) for _ in range(batch)]
    seq = max(len(s) for s, _, _ in examples) + 1  # + </s>
    source = np.full((batch, seq), PAD, dtype=np.int64)
    targets = np.full((batch, seq), PAD, dtype=np.int64)
    alignment = np.full((batch, seq), -1, dtype=np.int64)
    for i, (src, tgt, align) in enumerate(examples):  # building Python lists of words: one row at a time
        source[i, :len(src) + 1] = src + [EOS]
        targets[i, :len(tgt) + 1] = tgt + [EOS]
        alignment[i, :len(align) + 1] = align + [len(src)]
    tokens = np.concatenate([np.full((batch, 1), BOS), targets[:, :-1]], axis=1)  # (batch, seq)
    tokens[tokens == EOS] = PAD  # the decoder never reads the final </s>
    return Seq2SeqBatch(source, source != PAD, tokens, targets, targets != PAD, alignment)


def alignment_match(cross: FloatArray, alignment: FloatArray) -> np.ndarray:
    """Each head's mean cross-attention weight on the source position a target token comes from.

    1 means every target token reads exactly its aligned source token; a uniform head over ``n`` source
    tokens scores ``1 / n``.

    Parameters
    ----------
    cross : ndarray, shape (batch, n_heads, seq_q, seq_k)
    alignment : int ndarray, shape (batch, seq_q)
        -1 where a target position does not count.

    Returns
    -------
    ndarray, shape (n_heads,)

    Examples
    --------
    >>> cross = np.eye(3)[None, None].repeat(2, axis=1)  # two heads reading the diagonal
    >>> alignment_match(cross, np.array([[0, 1, -1]]))
    array([1., 1.])
    """
    alignment = np.asarray(alignment)
    counted = alignment >= 0  # (batch, seq_q)
    picked = np.take_along_axis(cross, np.maximum(alignment, 0)[:, None, :, None], axis=-1)[..., 0]
    return (picked * counted[:, None]).sum(axis=(0, 2)) / counted.sum()  # (n_heads,)
