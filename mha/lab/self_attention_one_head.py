"""One head's arithmetic on a sentence small enough to read every number, and queries and keys in 2-D.

:func:`head_walkthrough` keeps every intermediate array of one head (embeddings, the three projections,
scores, weights, output), so that a figure can show each step with its numbers
(:mod:`mha.plotting.self_attention_one_head`); its output is the package's
:func:`mha.scaled_dot_product_attention`.
:func:`key_geometry` gives keys and a query two features wide, so that they can be drawn as arrows whose
dot products the reader drags (:mod:`mha.explorers.self_attention_geometry`). :func:`soft_lookup` reads
one query's attention as a dictionary lookup at a temperature, hard and soft side by side
(:mod:`mha.explorers.self_attention_one_head`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mha.attention import scaled_dot_product_attention, softmax
from mha.lab.examples import tokenize, toy_embeddings
from mha.typing import ArrayLike, Seed
from mha.validation import as_generator, check_positive_int

__all__ = ["STEPS", "HeadWalkthrough", "KeyGeometry", "SoftLookup", "geometry_weights", "head_walkthrough",
           "key_geometry", "soft_lookup"]

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
        Bias included.
    query : ndarray, shape (2,)
    query_token : str
        The token whose query ``query`` is.
    key_bias : ndarray, shape (2,)
        The bias added to every key (zeros for none).
    """

    tokens: list
    keys: np.ndarray
    query: np.ndarray
    query_token: str
    key_bias: np.ndarray = field(default_factory=lambda: np.zeros(2))


def key_geometry(sentence: str = "the animal crossed the street because it was tired", *,
                 query_token: str = "it", d_model: int = 16, key_bias: float = 1.25,
                 rng: Seed = 0) -> KeyGeometry:
    """Keys and one query of width 2 from an untrained head: ``x @ W_k + b_k`` and ``x[i] @ W_q``.

    Repeated words keep their first occurrence only (one arrow per word): a repeated word has the same key,
    and in the head it gets its weight once per occurrence.

    Parameters
    ----------
    sentence : str
    query_token : str
        The token whose query is drawn.
    d_model : int
        Width of the toy embeddings.
    key_bias : float
        Length of the key bias ``b_k``, in units of the longest key without it; ``b_k`` points along the
        keys' mean. Above 1, every key leans to the side of ``b_k``, so that a query pointing away from
        ``b_k`` scores every key below zero; 0 leaves the keys as ``x @ W_k`` (random directions all round).
        A bias moves every score of a query by the same ``q · b_k``, so it never changes the weights.
    rng : int or numpy.random.Generator
        Draws ``W_q`` and ``W_k``.

    Examples
    --------
    >>> geometry = key_geometry()
    >>> geometry.keys.shape, geometry.query.shape, geometry.query_token
    ((8, 2), (2,), 'it')
    >>> bool(np.all(geometry.keys @ -geometry.key_bias < 0))  # pointing away from b_k: every score < 0
    True
    """
    tokens = tokenize(sentence)
    if query_token not in tokens:
        raise ValueError(f"query_token {query_token!r} is not a token of {tokens}")
    if isinstance(key_bias, bool) or not isinstance(key_bias, int | float) or not 0 <= key_bias < math.inf:
        raise ValueError(f"key_bias is a length in units of the longest key, 0 or more; got {key_bias!r}")
    rng = as_generator(rng)
    x = toy_embeddings(tokens, check_positive_int(d_model, "d_model"))  # (seq, d_model)
    W_q, W_k = rng.standard_normal((2, d_model, 2)) / math.sqrt(d_model)  # each (d_model, 2)
    first = sorted({token: i for i, token in reversed(list(enumerate(tokens)))}.values())
    keys = x[first] @ W_k  # (n_words, 2)
    mean = keys.mean(axis=0)  # (2,)
    direction = mean / np.linalg.norm(mean) if np.linalg.norm(mean) > 0 else np.array([1.0, 0.0])
    bias = key_bias * np.linalg.norm(keys, axis=1).max() * direction  # (2,)
    query = x[tokens.index(query_token)] @ W_q  # (2,)
    return KeyGeometry([tokens[i] for i in first], keys + bias, query, query_token, bias)


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


@dataclass(frozen=True)
class SoftLookup:
    """One query's lookup at temperature ``T``: what the softmax returns, and what a dictionary would.

    Attributes
    ----------
    temperature : float
    weights : ndarray, shape (seq_k,)
        ``softmax(keys @ query / sqrt(d_k) / T)``.
    soft : ndarray, shape (d_v,)
        ``weights @ values``: attention's answer.
    best : int
        The key with the largest score: the one a hard lookup returns.
    hard : ndarray, shape (d_v,)
        ``values[best]``: the dictionary's answer, the same at every temperature.
    sensitivity : float
        How far the soft answer moves per unit the query moves: the Frobenius norm of its Jacobian with
        respect to the query. The hard answer's is 0 (it does not move until another key takes the lead).
    """

    temperature: float
    weights: np.ndarray
    soft: np.ndarray
    best: int
    hard: np.ndarray
    sensitivity: float


def soft_lookup(query: ArrayLike, keys: ArrayLike, values: ArrayLike, temperature: float = 1.0) -> SoftLookup:
    """Attention of one query as a soft dictionary lookup at temperature ``T``.

    ``T`` divides the scaled scores (``T < 1`` sharpens, like a longer query: ``T = 0.1`` is the query ten
    times longer). The Jacobian of the answer with respect to the query is
    ``values.T @ (diag(w) - w wᵀ) @ keys / (T √d_k)``: it vanishes as ``T → 0`` (the softmax saturates
    into the hard lookup) and as ``T → ∞`` (every key gets the same weight, whatever the query).

    Parameters
    ----------
    query : array_like, shape (d_k,)
    keys : array_like, shape (seq_k, d_k)
    values : array_like, shape (seq_k, d_v)
    temperature : float
        Positive and finite.

    Returns
    -------
    SoftLookup

    Examples
    --------
    >>> keys, values = np.eye(2), np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> sharp = soft_lookup([4.0, 0.0], keys, values, temperature=0.1)
    >>> sharp.best, sharp.weights.round(3), sharp.sensitivity < 1e-9
    (0, array([1., 0.]), True)
    >>> soft_lookup([4.0, 0.0], keys, values).weights.round(3)
    array([0.944, 0.056])
    """
    query, keys, values = (np.asarray(a, dtype=np.float64) for a in (query, keys, values))
    if query.ndim != 1 or keys.ndim != 2 or values.ndim != 2 or not (
            keys.shape[1] == query.size and len(keys) == len(values) > 0):
        raise ValueError(f"expected query (d_k,), keys (seq_k, d_k) and values (seq_k, d_v) with one seq_k "
                         f"and one d_k; got {query.shape}, {keys.shape}, {values.shape}")
    if isinstance(temperature, bool) or not isinstance(temperature, int | float | np.floating) or not (
            0 < temperature < math.inf):
        raise ValueError(f"temperature must be a positive finite number, got {temperature!r}")
    if not all(np.isfinite(a).all() for a in (query, keys, values)):
        raise ValueError("query, keys and values must be finite")
    scale = math.sqrt(query.size) * float(temperature)
    scores = keys @ query / scale  # (seq_k,)
    weights = softmax(scores)  # (seq_k,)
    jacobian = values.T @ (np.diag(weights) - np.outer(weights, weights)) @ keys / scale  # (d_v, d_k)
    best = int(np.argmax(scores))
    return SoftLookup(float(temperature), weights, weights @ values, best, values[best].copy(),
                      float(np.linalg.norm(jacobian)))
