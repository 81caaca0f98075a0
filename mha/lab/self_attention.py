"""Why attention divides its scores by ``√d_k``, measured rather than asserted.

Draw queries and keys with independent standard-normal entries, as a freshly initialised layer roughly
produces. Then a dot product ``q · k`` is a sum of ``d_k`` independent terms of variance 1, so its variance
is ``d_k``: the wider the heads, the larger the scores. Large scores push the softmax into saturation (one
weight near 1, the rest near 0), where its gradient vanishes. Dividing by ``√d_k`` brings the variance back
to 1 whatever ``d_k`` is. The functions here measure both effects; :mod:`mha.plotting.self_attention`
draws them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mha.attention import softmax
from mha.typing import ArrayLike, Seed
from mha.validation import as_float_array, as_generator, check_positive_int

__all__ = ["sample_scores", "sentence_scores", "entropy", "ScalingCurves", "scaling_curves"]

#: Queries that share one random set of keys in :func:`sample_scores`.
QUERIES_PER_KEY_SET = 20


def sample_scores(d_k: int, seq_k: int, n_queries: int, *, scaled: bool, rng: Seed) -> np.ndarray:
    """Attention scores of random standard-normal queries against random standard-normal keys.

    Parameters
    ----------
    d_k : int
        Width of queries and keys.
    seq_k : int
        Number of keys each query is scored against.
    n_queries : int
        Number of independent queries (rows).
    scaled : bool
        Divide by ``√d_k`` as scaled dot-product attention does.
    rng : numpy.random.Generator or int
        Source of the random queries and keys.

    Returns
    -------
    ndarray, shape (n_queries, seq_k), float64
        Each group of ``QUERIES_PER_KEY_SET`` consecutive rows is scored against its own keys.

    Examples
    --------
    >>> s = sample_scores(64, seq_k=8, n_queries=2000, scaled=False, rng=0)
    >>> s.shape
    (2000, 8)
    >>> bool(50 < s.var() < 80)  # about d_k = 64
    True
    >>> bool(0.8 < sample_scores(64, 8, 2000, scaled=True, rng=0).var() < 1.25)  # about 1
    True
    """
    d_k = check_positive_int(d_k, "d_k")
    seq_k = check_positive_int(seq_k, "seq_k")
    n_queries = check_positive_int(n_queries, "n_queries")
    rng = as_generator(rng)
    # A fresh set of keys for every group of queries, so the statistics average over many keys, not
    # over the accidental norms of one set of seq_k keys.
    n_groups = -(-n_queries // QUERIES_PER_KEY_SET)
    q = rng.standard_normal((n_groups, QUERIES_PER_KEY_SET, d_k))  # (n_groups, group, d_k)
    k = rng.standard_normal((n_groups, seq_k, d_k))  # (n_groups, seq_k, d_k)
    scores = (q @ k.transpose(0, 2, 1)).reshape(-1, seq_k)[:n_queries]  # (n_queries, seq_k)
    if scaled:
        scores *= 1.0 / math.sqrt(d_k)
    return scores


def sentence_scores(text: str, d_k: int, *, scaled: bool, seed: int = 0) -> np.ndarray:
    """Scores of a sentence with itself: toy embeddings projected to queries and keys of width ``d_k``.

    A seeded one-head layer projects :func:`mha.lab.examples.toy_embeddings` of the sentence's words, so
    each query and key entry has variance about 1, as in :func:`sample_scores`.

    Parameters
    ----------
    text : str
        At least two words.
    d_k : int
    scaled : bool
        Divide by ``sqrt(d_k)``.
    seed : int, default 0
        Seeds the embeddings and the projections.

    Returns
    -------
    ndarray, shape (seq, seq)
        Rows are queries, columns keys.

    Examples
    --------
    >>> sentence_scores("the cat sat on the mat", 16, scaled=True).shape
    (6, 6)
    """
    from mha.lab.examples import tokenize, toy_embeddings
    from mha.layers import MultiHeadAttention

    d_k = check_positive_int(d_k, "d_k")
    tokens = tokenize(text)
    if len(tokens) < 2:
        raise ValueError(f"the sentence needs at least two words, got {tokens}")
    x = toy_embeddings(tokens, d_k, seed=seed)  # (seq, d_k)
    q, k, _ = MultiHeadAttention(d_k, 1, rng=seed).project(x)  # (seq, d_k) each
    scores = q @ k.T  # (seq, seq)
    return scores * (1.0 / math.sqrt(d_k)) if scaled else scores


def entropy(weights: ArrayLike, axis: int = -1) -> np.ndarray:
    """Shannon entropy (in nats) of probability vectors along ``axis``; ``0 · log 0`` counts as 0.

    A uniform row over ``n`` entries has entropy ``log n``; a one-hot row has entropy 0.

    Parameters
    ----------
    weights : array_like of float, any shape
        Non-negative, summing to 1 along ``axis`` (an all-zero row, a fully masked query, gives 0).
    axis : int, default -1

    Returns
    -------
    ndarray, ``weights``' shape without ``axis``

    Examples
    --------
    >>> entropy(np.full(4, 0.25)).round(4), round(math.log(4), 4)
    (np.float64(1.3863), 1.3863)
    >>> entropy(np.array([[1.0, 0.0], [0.5, 0.5]])).round(4)
    array([0.    , 0.6931])
    """
    weights = as_float_array(weights, "weights")
    if weights.ndim == 0:
        raise ValueError("entropy needs at least one axis of probabilities, got a scalar")
    if np.isnan(weights).any() or (weights < 0).any():
        raise ValueError("weights must be non-negative probabilities without NaN")
    safe = np.where(weights > 0, weights, 1.0)  # log(1) = 0 makes 0 * log 0 vanish without a warning
    return -np.sum(weights * np.log(safe), axis=axis)


@dataclass(frozen=True)
class ScalingCurves:
    """Score statistics against ``d_k``, without and with the ``1/√d_k`` scale.

    Every array has shape ``(len(d_k),)``; ``_raw`` is ``q · k``, ``_scaled`` is ``q · k / √d_k``.

    Attributes
    ----------
    d_k : ndarray of int
    seq_k : int
        Keys per query in the softmax measurements (uniform weights would be ``1/seq_k`` each).
    variance_raw, variance_scaled : ndarray
        Variance of the scores.
    max_weight_raw, max_weight_scaled : ndarray
        Mean over queries of the largest softmax weight (``1/seq_k`` = spread out, 1 = saturated).
    entropy_raw, entropy_scaled : ndarray
        Mean over queries of the entropy of the weights, in nats (``log seq_k`` = uniform, 0 = one-hot).
    """

    d_k: np.ndarray
    seq_k: int
    variance_raw: np.ndarray
    variance_scaled: np.ndarray
    max_weight_raw: np.ndarray
    max_weight_scaled: np.ndarray
    entropy_raw: np.ndarray
    entropy_scaled: np.ndarray


def scaling_curves(d_ks: Iterable[int], *, seq_k: int = 16, n_queries: int = 2000,
                   rng: Seed) -> ScalingCurves:
    """Measure score variance and softmax saturation for each ``d_k``, with and without scaling.

    For each ``d_k`` the same random queries and keys serve both variants, so the two differ only by the
    scale.

    Parameters
    ----------
    d_ks : sequence of int
        Widths to measure, e.g. ``[1, 4, 16, 64, 256, 1024]``.
    seq_k : int, default 16
        Keys per query.
    n_queries : int, default 2000
        Random queries per width; more gives smoother curves.
    rng : numpy.random.Generator or int

    Returns
    -------
    ScalingCurves

    Examples
    --------
    >>> c = scaling_curves([4, 256], seq_k=8, n_queries=500, rng=0)
    >>> bool(c.variance_raw[1] > 50 * c.variance_raw[0])  # variance grows like d_k
    True
    >>> bool(c.max_weight_raw[1] > 0.8 > c.max_weight_scaled[1])  # unscaled: saturated
    True
    """
    widths = np.array([check_positive_int(d, "every d_k") for d in d_ks], dtype=np.int64)
    if widths.size == 0:
        raise ValueError("d_ks must hold at least one width, got an empty sequence")
    seq_k = check_positive_int(seq_k, "seq_k")
    n_queries = check_positive_int(n_queries, "n_queries")
    rng = as_generator(rng)
    stats: dict[str, list[Any]] = {name: [] for name in ("variance", "max_weight", "entropy")}
    for d_k in widths:
        raw = sample_scores(int(d_k), seq_k, n_queries, scaled=False, rng=rng)  # (n_queries, seq_k)
        for scores in (raw, raw * (1.0 / math.sqrt(d_k))):
            weights = softmax(scores)  # (n_queries, seq_k)
            stats["variance"].append(scores.var())
            stats["max_weight"].append(weights.max(axis=-1).mean())
            stats["entropy"].append(entropy(weights).mean())
    # each list alternates raw, scaled: reshape to (len(widths), 2)
    pairs = {name: np.asarray(values).reshape(len(widths), 2) for name, values in stats.items()}
    return ScalingCurves(
        d_k=widths, seq_k=seq_k,
        variance_raw=pairs["variance"][:, 0], variance_scaled=pairs["variance"][:, 1],
        max_weight_raw=pairs["max_weight"][:, 0], max_weight_scaled=pairs["max_weight"][:, 1],
        entropy_raw=pairs["entropy"][:, 0], entropy_scaled=pairs["entropy"][:, 1],
    )
