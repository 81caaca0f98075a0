"""Survey the heads of a pretrained encoder: what kind of pattern each one draws, over many sentences.

Studies of BERT's heads found a few recurring kinds: heads that look at the previous or the next token,
heads that park their weight on the special ``[CLS]`` or ``[SEP]`` tokens (a "no-op": attention has to go
somewhere), and broad heads that spread it over the whole sentence. :func:`survey_heads` measures each of
these for every head with the statistics of :mod:`mha.lab.analysis` and names the dominant one.

Statistics are averaged over the *word* queries only (special tokens and padding are left out), so a
sentence's ``[CLS]`` row does not count as "attending to itself".

Positions are not grammar. :func:`dependency_scores` checks a grammatical relation against labels written
by hand (:data:`DETERMINER_NOUN`: every determiner and the noun it belongs to, in twenty sentences): how
often each head's most-attended word is the labelled one, next to what a head that picks a word at random
and the best fixed-offset rule ("the word two to the right") would score.
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mha.lab.analysis import head_entropy, mean_attention_distance, weight_at_offset, weight_on

if TYPE_CHECKING:  # names for the annotations only: not imported at run time
    from mha.pretrained.encodings import BatchEncoding

__all__ = ["PATTERN_SCORES", "KINDS", "HeadSurvey", "survey_heads", "DETERMINER_NOUN", "DependencyScores",
           "labelled_pairs", "dependency_scores"]

#: The scores that name a kind when a head puts at least ``threshold`` of its weight there.
PATTERN_SCORES = ("previous token", "next token", "same token", "[CLS]", "[SEP]")
#: Every kind a head can be given.
KINDS = (*PATTERN_SCORES, "broad", "mixed")


@dataclass(frozen=True)
class HeadSurvey:
    """One score per head, and the kind each head is given.

    Attributes
    ----------
    scores : dict of str to ndarray, shape (n_layers, n_heads)
        The :data:`PATTERN_SCORES` (average share of weight there, 0 to 1), ``"entropy (nats)"``,
        ``"breadth"`` (entropy over that of uniform attention: 1 for a head that looks everywhere equally)
        and ``"mean distance (tokens)"``.
    kinds : ndarray of str, shape (n_layers, n_heads)
        The pattern score at or above ``threshold`` (the largest, if several), else ``"broad"`` when
        ``breadth >= broad``, else ``"mixed"``.
    threshold, broad : float
    """

    scores: dict[str, np.ndarray]
    kinds: np.ndarray
    threshold: float
    broad: float

    def heads(self, kind: str) -> list[tuple[int, int]]:
        """The (layer, head) pairs of one kind, in order."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
        return [(int(layer), int(head)) for layer, head in zip(*np.nonzero(self.kinds == kind), strict=True)]

    def counts(self) -> dict[str, int]:
        """How many heads of each kind, every kind listed (zeros included)."""
        found = Counter(self.kinds.ravel().tolist())
        return {kind: found.get(kind, 0) for kind in KINDS}


def _check_fraction(value, name: str) -> float:
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if not real or not 0 < float(value) <= 1:
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    return float(value)


def survey_heads(batch: BatchEncoding, *, threshold: float = 0.5, broad: float = 0.8) -> HeadSurvey:
    """Score every head of an encoder on a batch of sentences, and name its kind.

    Parameters
    ----------
    batch : mha.pretrained.BatchEncoding
        From ``encoder.encode(sentences)``, with attentions of shape
        ``(batch, n_layers, n_heads, seq, seq)``. Use several sentences: one is an anecdote.
    threshold : float in (0, 1], default 0.5
        Share of weight on one pattern that names the head after it.
    broad : float in (0, 1], default 0.8
        Breadth from which a head without a pattern counts as broad.

    Returns
    -------
    HeadSurvey
    """
    threshold, broad = _check_fraction(threshold, "threshold"), _check_fraction(broad, "broad")
    attentions = getattr(batch, "attentions", None)
    if attentions is None or np.ndim(attentions) != 5:
        raise ValueError("batch must be a BatchEncoding with attentions of shape "
                         "(batch, n_layers, n_heads, seq, seq); encode with return_attentions=True")
    n_texts, n_layers, n_heads, seq, _ = attentions.shape
    weights = attentions.reshape(n_texts, n_layers * n_heads, seq, seq)  # heads of all layers side by side
    words = batch.mask & ~batch.special  # (batch, seq): the queries that count
    if not words.any():
        raise ValueError("the batch holds no word tokens (only special tokens): nothing to survey")
    if not (batch.special & batch.mask).any():
        raise ValueError("the batch marks no special tokens ([CLS], [SEP]): survey_heads needs a BERT-style "
                         "tokenizer that adds them (BatchEncoding.special)")
    position = np.arange(seq)
    cls = batch.special & (position == 0)  # (batch, seq)
    sep = batch.special & (position > 0)

    def per_head(values):  # (n_layers * n_heads,) -> (n_layers, n_heads)
        return np.asarray(values).reshape(n_layers, n_heads)

    scores = {
        "previous token": per_head(weight_at_offset(weights, -1, words)),
        "next token": per_head(weight_at_offset(weights, 1, words)),
        "same token": per_head(weight_at_offset(weights, 0, words)),
        "[CLS]": per_head(weight_on(weights, cls[:, None, :], words)),  # targets: (batch, 1, seq_k)
        "[SEP]": per_head(weight_on(weights, sep[:, None, :], words)),
    }
    scores["entropy (nats)"] = per_head(head_entropy(weights, words))
    # Entropy of uniform attention, averaged like the entropies: log(keys in the text) per word query.
    uniform = np.average(np.log(batch.mask.sum(axis=1)), weights=words.sum(axis=1))
    scores["breadth"] = scores["entropy (nats)"] / uniform
    scores["mean distance (tokens)"] = per_head(mean_attention_distance(weights, words))

    patterns = np.stack([scores[name] for name in PATTERN_SCORES])  # (n_patterns, n_layers, n_heads)
    best = np.asarray(PATTERN_SCORES)[patterns.argmax(axis=0)]  # (n_layers, n_heads)
    kinds = np.where(patterns.max(axis=0) >= threshold, best,
                     np.where(scores["breadth"] >= broad, "broad", "mixed"))
    return HeadSurvey(scores, kinds.astype(object), threshold, broad)


#: Twenty sentences, with every determiner linked by hand to the noun it belongs to. Each pair names the
#: two words as the tokenizer writes them (lower case); ``"the#2"`` is the sentence's second "the". The
#: sentences put zero to three words between a determiner and its noun, so that no fixed offset finds
#: most nouns, and every labelled word is a single word piece.
DETERMINER_NOUN = (
    ("The farmer sold a brown horse to the young baker.", ("the farmer", "a horse", "the#2 baker")),
    ("A tired old student left her bag on the long wooden bench.", ("a student", "her bag", "the bench")),
    ("The cat chased a small grey mouse under the table.", ("the cat", "a mouse", "the#2 table")),
    ("My sister painted the tall white fence with a brush.", ("my sister", "the fence", "a brush")),
    ("The busy young chef cut the bread with a very sharp knife.", ("the chef", "the#2 bread", "a knife")),
    ("A boy found an old silver coin near the river.", ("a boy", "an coin", "the river")),
    ("The angry driver hit the car in the narrow dark street.", ("the driver", "the#2 car", "the#3 street")),
    ("Their teacher read a long story to the children.", ("their teacher", "a story", "the children")),
    ("The kind old nurse gave the girl a warm blanket.", ("the nurse", "the#2 girl", "a blanket")),
    ("A wind broke the thin dry branch of the tree.", ("a wind", "the branch", "the#2 tree")),
    ("The clever little fox stole the hen from the big red farm.", ("the fox", "the#2 hen", "the#3 farm")),
    ("An old woman sold the apples at the busy village market.", ("an woman", "the apples", "the#2 market")),
    ("The happy dog carried a stick across the field.", ("the dog", "a stick", "the#2 field")),
    ("This phone has a very large bright screen.", ("this phone", "a screen")),
    ("The pilot flew the small white plane over the mountains.", ("the pilot", "the#2 plane",
                                                                  "the#3 mountains")),
    ("A careful reader found the mistake in the first short chapter.", ("a reader", "the mistake",
                                                                       "the#2 chapter")),
    ("The tired workers built a bridge over the wide cold river.", ("the workers", "a bridge",
                                                                    "the#2 river")),
    ("That brave young girl climbed the tree in the garden.", ("that girl", "the tree", "the#2 garden")),
    ("The singer wrote a sad old song about the long war.", ("the singer", "a song", "the#2 war")),
    ("Every morning the old baker made bread for the quiet little village.", ("the baker", "the#2 village")),
)


def labelled_pairs(tokens: Sequence[str], labels: Sequence[str]) -> list[tuple[int, int]]:
    """Token positions ``(dependent, head word)`` of hand-labelled pairs such as ``"the#2 baker"``.

    Parameters
    ----------
    tokens : sequence of str
        A sentence's word pieces, as the encoder returns them (``[CLS]`` first).
    labels : sequence of str
        ``"<word> <word>"`` pairs; ``word#n`` is the n-th occurrence of ``word`` (from 1), plain ``word``
        the first.

    Returns
    -------
    list of (int, int)

    Examples
    --------
    >>> labelled_pairs(["[CLS]", "the", "cat", "saw", "the", "dog", "[SEP]"], ["the cat", "the#2 dog"])
    [(1, 2), (4, 5)]
    """
    def position(word: str) -> int:
        name, _, nth = word.partition("#")
        found = [i for i, token in enumerate(tokens) if token == name]
        occurrence = int(nth) if nth else 1
        if len(found) < occurrence:
            raise ValueError(f"{word!r}: {name!r} appears {len(found)} time(s) in {list(tokens)}")
        return found[occurrence - 1]

    pairs = []
    for label in labels:
        words = label.split()
        if len(words) != 2:
            raise ValueError(f"a label names two words, '<dependent> <head>', got {label!r}")
        pairs.append((position(words[0]), position(words[1])))
    return pairs


@dataclass(frozen=True)
class DependencyScores:
    """How well each head's strongest link follows a labelled relation, with two baselines.

    Attributes
    ----------
    accuracy : ndarray, shape (n_layers, n_heads)
        Share of labelled dependents whose most-attended word (special tokens and the word itself left
        out) is their labelled head word.
    random_head : float
        What a head that picks one of the other words at random scores, on average.
    offset : int
        The fixed offset (key position minus query position) that finds the most head words ...
    offset_accuracy : float
        ... and the share it finds.
    distances : ndarray of int, shape (n_pairs,)
        Key position minus query position of every labelled pair.
    hits : ndarray of bool, shape (n_layers, n_heads, n_pairs)
        Which pairs each head gets right.
    """

    accuracy: np.ndarray
    random_head: float
    offset: int
    offset_accuracy: float
    distances: np.ndarray
    hits: np.ndarray

    def best(self) -> tuple[int, int]:
        """The (layer, head) with the highest accuracy."""
        layer, head = np.unravel_index(int(np.argmax(self.accuracy)), self.accuracy.shape)
        return int(layer), int(head)


def dependency_scores(batch: BatchEncoding, pairs: Sequence[Sequence[tuple[int, int]]]) -> DependencyScores:
    """Score every head of an encoded batch against labelled ``(dependent, head word)`` pairs.

    Parameters
    ----------
    batch : mha.pretrained.BatchEncoding
        Several sentences encoded with their attentions, ``(batch, n_layers, n_heads, seq, seq)``.
    pairs : sequence of sequence of (int, int)
        For each sentence, the token positions of its labelled pairs (see :func:`labelled_pairs`): the
        dependent is the query, the head word the key it should attend to.

    Returns
    -------
    DependencyScores
    """
    if batch.attentions is None:
        raise ValueError("the batch has no attentions: encode it with return_attentions=True")
    if len(pairs) != len(batch):
        raise ValueError(f"pairs must list one sentence's pairs per sentence: {len(batch)} sentences, "
                         f"{len(pairs)} lists")
    words = batch.mask & ~batch.special  # (batch, seq): real word pieces
    hit_rows: list[np.ndarray] = []
    pair_distances: list[int] = []
    chance: list[float] = []
    for b, sentence_pairs in enumerate(pairs):
        for query, key in sentence_pairs:
            if not (words[b, query] and words[b, key]) or query == key:
                raise ValueError(f"sentence {b}: pair ({query}, {key}) must link two different words")
            candidates = words[b].copy()  # (seq,)
            candidates[query] = False  # a word does not point at itself
            rows = np.where(candidates, batch.attentions[b, :, :, query, :], -1.0)  # (n_layers, n_heads, seq)
            hit_rows.append(rows.argmax(axis=-1) == key)
            pair_distances.append(key - query)
            chance.append(1.0 / candidates.sum())
    if not hit_rows:
        raise ValueError("no labelled pairs to score")
    hits = np.stack(hit_rows, axis=-1)  # (n_layers, n_heads, n_pairs)
    distances = np.array(pair_distances)
    offsets, counts = np.unique(distances, return_counts=True)
    best = int(np.argmax(counts))
    return DependencyScores(hits.mean(axis=-1), float(np.mean(chance)), int(offsets[best]),
                            float(counts[best] / distances.size), distances, hits)
