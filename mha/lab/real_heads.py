"""Survey the heads of a pretrained encoder: what kind of pattern each one draws, over many sentences.

Studies of BERT's heads found a few recurring kinds: heads that look at the previous or the next token,
heads that park their weight on the special ``[CLS]`` or ``[SEP]`` tokens (a "no-op": attention has to go
somewhere), and broad heads that spread it over the whole sentence. :func:`survey_heads` measures each of
these for every head with the statistics of :mod:`mha.lab.analysis` and names the dominant one.

Statistics are averaged over the *word* queries only (special tokens and padding are left out), so a
sentence's ``[CLS]`` row does not count as "attending to itself".
"""

from __future__ import annotations

import numbers
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mha.lab.analysis import head_entropy, mean_attention_distance, weight_at_offset, weight_on

if TYPE_CHECKING:  # names for the annotations only: not imported at run time
    from mha.pretrained.encodings import BatchEncoding

__all__ = ["PATTERN_SCORES", "KINDS", "HeadSurvey", "survey_heads"]

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
