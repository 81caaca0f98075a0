"""One head's arithmetic on a sentence small enough to read every number, and queries and keys in 2-D.

:func:`head_walkthrough` keeps every intermediate array of one head (embeddings, the three projections,
scores, weights, output), so that a figure can show each step with its numbers
(:mod:`mha.plotting.self_attention_one_head`); its output is the package's
:func:`mha.scaled_dot_product_attention`.
:func:`key_geometry` gives keys and a query two features wide, so that they can be drawn as arrows whose
dot products the reader drags (:mod:`mha.explorers.self_attention_geometry`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mha.attention import scaled_dot_product_attention, softmax
from mha.lab.examples import tokenize, toy_embeddings
from mha.typing import ArrayLike, Seed
from mha.validation import as_generator, check_positive_int

__all__ = ["STEPS", "HeadWalkthrough", "KeyGeometry", "geometry_weights", "head_walkthrough", "key_geometry"]

#: The steps of one head, in the order it computes them.
STEPS = ("embeddings", "projections", "scores", "softmax", "weighted sum")


@dataclass(frozen=True)
class HeadWalkthrough:
    """Every array one head computes on one sentence.

    Attributes
    ----------
    tokens : list of str
    x : ndarray, shape (seq, d_model)
        The embeddings.
    W_q, W_k, W_v : ndarray, shape (d_model, d_k)
    q, k, v : ndarray, shape (seq, d_k)
    scores : ndarray, shape (seq_q, seq_k)
        ``q @ k.T / sqrt(d_k)``.
    weights : ndarray, shape (seq_q, seq_k)
        Softmax of each row of the scores.
    output : ndarray, shape (seq, d_k)
        ``weights @ v``.
    """

    tokens: list
    x: np.ndarray
    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray

    @property
    def d_k(self) -> int:
        """Width of queries, keys and values."""
        return self.q.shape[-1]

    def score_terms(self, query: int, key: int) -> np.ndarray:
        """The products ``q[query, i] * k[key, i]`` whose sum, divided by √d_k, is one score."""
        return self.q[query] * self.k[key]


def head_walkthrough(sentence: str = "the cat sat down", *, d_model: int = 4, d_k: int = 2,
                     rng: Seed = 0) -> HeadWalkthrough:
    """One untrained head on ``sentence``, every step kept.

    Parameters
    ----------
    sentence : str
        A few words (the figures print every number: keep it to about 6 tokens).
    d_model, d_k : int
        Width of the embeddings and of queries, keys and values.
    rng : numpy.random.Generator or int
        Source of the projection matrices (the embeddings are :func:`mha.lab.toy_embeddings`).

    Returns
    -------
    HeadWalkthrough

    Examples
    --------
    >>> head = head_walkthrough()
    >>> head.tokens, head.x.shape, head.q.shape, head.weights.shape
    (['the', 'cat', 'sat', 'down'], (4, 4), (4, 2), (4, 4))
    >>> bool(np.allclose(head.weights.sum(axis=1), 1.0))
    True
    """
    d_model = check_positive_int(d_model, "d_model")
    d_k = check_positive_int(d_k, "d_k")
    tokens = tokenize(sentence)
    if not 1 <= len(tokens) <= 8:
        raise ValueError(f"the walkthrough prints every number: give 1 to 8 tokens, got {len(tokens)} "
                         f"({tokens})")
    rng = as_generator(rng)
    x = np.round(toy_embeddings(tokens, d_model), 1)  # (seq, d_model): one decimal, readable in a cell
    # each (d_model, d_k), scaled so that q, k and v entries have about unit variance
    W_q, W_k, W_v = np.round(rng.standard_normal((3, d_model, d_k)) / math.sqrt(d_model), 1)
    q, k, v = x @ W_q, x @ W_k, x @ W_v  # each (seq, d_k)
    scores = q @ k.T / math.sqrt(d_k)  # (seq_q, seq_k)
    weights = softmax(scores, axis=-1)  # (seq_q, seq_k)
    output = weights @ v  # (seq, d_k)
    np.testing.assert_allclose(output, scaled_dot_product_attention(q, k, v), rtol=1e-12, atol=1e-12)
    return HeadWalkthrough(tokens, x, W_q, W_k, W_v, q, k, v, scores, weights, output)


@dataclass(frozen=True)
class KeyGeometry:
    """Keys and a query two features wide: arrows in a plane.

    Attributes
    ----------
    tokens : list of str
    keys : ndarray, shape (seq, 2)
    query : ndarray, shape (2,)
    query_token : str
        The token whose query ``query`` is.
    """

    tokens: list
    keys: np.ndarray
    query: np.ndarray
    query_token: str


def key_geometry(sentence: str = "the animal crossed the street because it was tired", *,
                 query_token: str = "it", d_model: int = 16, rng: Seed = 0) -> KeyGeometry:
    """Keys and one query of width 2 from an untrained head: ``x @ W_k`` and ``x[i] @ W_q``.

    Repeated words keep their first occurrence only (one arrow per word).

    Examples
    --------
    >>> geometry = key_geometry()
    >>> geometry.keys.shape, geometry.query.shape, geometry.query_token
    ((8, 2), (2,), 'it')
    """
    tokens = tokenize(sentence)
    if query_token not in tokens:
        raise ValueError(f"query_token {query_token!r} is not a token of {tokens}")
    rng = as_generator(rng)
    x = toy_embeddings(tokens, check_positive_int(d_model, "d_model"))  # (seq, d_model)
    W_q, W_k = rng.standard_normal((2, d_model, 2)) / math.sqrt(d_model)  # each (d_model, 2)
    first = sorted({token: i for i, token in reversed(list(enumerate(tokens)))}.values())
    keys = x[first] @ W_k  # (n_words, 2)
    query = x[tokens.index(query_token)] @ W_q  # (2,)
    return KeyGeometry([tokens[i] for i in first], keys, query, query_token)


def geometry_weights(query: ArrayLike, keys: ArrayLike) -> np.ndarray:
    """What the geometry view draws: ``softmax(keys @ query / √2)``, the weights of one query.

    Parameters
    ----------
    query : array_like, shape (2,)
    keys : array_like, shape (seq_k, 2)

    Returns
    -------
    ndarray, shape (seq_k,)

    Examples
    --------
    >>> geometry_weights([1.0, 0.0], [[1.0, 0.0], [-1.0, 0.0]]).round(3)
    array([0.804, 0.196])
    """
    query, keys = np.asarray(query, dtype=np.float64), np.asarray(keys, dtype=np.float64)
    if query.shape != (2,) or keys.ndim != 2 or keys.shape[1] != 2 or not len(keys):
        raise ValueError(f"expected a query of shape (2,) and keys of shape (seq_k, 2), got {query.shape} "
                         f"and {keys.shape}")
    if not (np.isfinite(query).all() and np.isfinite(keys).all()):
        raise ValueError("query and keys must be finite")
    return softmax(keys @ query / math.sqrt(2.0))
