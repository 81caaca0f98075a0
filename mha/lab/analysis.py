"""Measure what attention heads do: how focused they are, how far and where they look, what they are worth.

Pattern statistics take per-head weights of shape ``(batch, n_heads, seq_q, seq_k)`` (or one example,
``(n_heads, seq_q, seq_k)``) and return one number per head, averaged over the batch and over the queries
selected by an optional ``query_mask`` of shape ``(batch, seq_q)``. Queries whose weights are all zero
(fully masked) never count. Positions are end-aligned like :func:`mha.causal_mask`: query ``i`` sits at
position ``seq_k - seq_q + i``.

Ablation helpers take a *metric*: a function from a head mask (1 keeps a head, 0 removes it) to a number,
for example a model's loss with those heads switched off. They never touch a model themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mha.lab.self_attention import entropy
from mha.typing import ArrayLike
from mha.validation import as_float_array, check_positive_int

__all__ = [
    "head_entropy",
    "mean_attention_distance",
    "weight_on",
    "weight_at_offset",
    "strongest_connections",
    "head_importance",
    "PruningCurve",
    "pruning_curve",
]


def _as_batched(weights) -> np.ndarray:
    weights = as_float_array(weights, "weights")
    if weights.ndim == 3:
        weights = weights[None]  # (1, n_heads, seq_q, seq_k)
    if weights.ndim != 4:
        raise ValueError(
            "weights must have shape (batch, n_heads, seq_q, seq_k) or (n_heads, seq_q, seq_k), "
            f"got {weights.shape}"
        )
    if (weights < 0).any():
        raise ValueError("weights must be non-negative attention weights (softmax outputs)")
    return weights


def _query_mask(weights: np.ndarray, query_mask) -> np.ndarray:
    """Queries that count, shape (batch, n_heads, seq_q): selected and not fully masked."""
    batch, n_heads, seq_q, _ = weights.shape
    attends = weights.sum(axis=-1) > 0  # (batch, n_heads, seq_q)
    if query_mask is None:
        return attends
    query_mask = np.asarray(query_mask)
    if query_mask.dtype != np.bool_ or query_mask.shape not in {(batch, seq_q), (seq_q,)}:
        raise ValueError(f"query_mask must be a bool array of shape (batch, seq_q) = ({batch}, {seq_q}) or "
                         f"(seq_q,), got {query_mask.dtype} {query_mask.shape}")
    return attends & np.broadcast_to(query_mask, (batch, seq_q))[:, None, :]


def _mean_per_head(values: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Average (batch, n_heads, seq_q) values over the counted queries, per head -> (n_heads,)."""
    n = counted.sum(axis=(0, 2))  # (n_heads,)
    if (n == 0).any():
        raise ValueError("no query is selected for some head: nothing to average")
    return np.where(counted, values, 0).sum(axis=(0, 2)) / n


def head_entropy(weights: ArrayLike, query_mask: ArrayLike | None = None) -> np.ndarray:
    """Mean entropy of each head's attention rows, in nats: 0 when every query looks at one key.

    Each row's entropy is :func:`mha.lab.self_attention.entropy`: a query spreading its weight evenly
    over ``n`` keys has entropy ``log(n)``, and zero weights contribute nothing (``0 log 0 = 0``).

    Parameters
    ----------
    weights : array_like, shape (batch, n_heads, seq_q, seq_k) or (n_heads, seq_q, seq_k)
    query_mask : bool array_like, shape (batch, seq_q) or (seq_q,), optional
        Queries to average over (default: all that attend somewhere).

    Returns
    -------
    ndarray, shape (n_heads,)

    Examples
    --------
    >>> w = np.stack([np.eye(4), np.full((4, 4), 0.25)])  # head 0 focused, head 1 uniform
    >>> head_entropy(w).round(4)
    array([0.    , 1.3863])
    """
    weights = _as_batched(weights)
    row_entropy = entropy(weights, axis=-1)  # (batch, n_heads, seq_q)
    return _mean_per_head(row_entropy, _query_mask(weights, query_mask))


def _offsets(seq_q: int, seq_k: int) -> np.ndarray:
    """Key position minus query position, shape (seq_q, seq_k), with end-aligned queries."""
    query_pos = np.arange(seq_q) + (seq_k - seq_q)
    return np.arange(seq_k)[None, :] - query_pos[:, None]


def mean_attention_distance(weights: ArrayLike, query_mask: ArrayLike | None = None) -> np.ndarray:
    """How far each head looks: the weighted mean of ``|key position - query position|``, in tokens.

    Parameters
    ----------
    weights : array_like, shape (batch, n_heads, seq_q, seq_k) or (n_heads, seq_q, seq_k)
    query_mask : bool array_like, shape (batch, seq_q) or (seq_q,), optional

    Returns
    -------
    ndarray, shape (n_heads,)
        Normalised by each row's total weight, so fully masked rows are skipped, not counted as 0.

    Examples
    --------
    >>> previous = np.eye(4, k=-1); previous[0, 0] = 1  # each token looks one back (the first at itself)
    >>> mean_attention_distance(previous[None])  # (0 + 1 + 1 + 1) / 4
    array([0.75])
    """
    weights = _as_batched(weights)
    distance = np.abs(_offsets(*weights.shape[-2:]))  # (seq_q, seq_k)
    total = weights.sum(axis=-1)  # (batch, n_heads, seq_q)
    row_distance = (weights * distance).sum(axis=-1) / np.where(total > 0, total, 1)
    return _mean_per_head(row_distance, _query_mask(weights, query_mask))


def weight_on(weights: ArrayLike, targets: ArrayLike, query_mask: ArrayLike | None = None) -> np.ndarray:
    """The share of each head's attention that lands on chosen keys, averaged over queries.

    Parameters
    ----------
    weights : array_like, shape (batch, n_heads, seq_q, seq_k) or (n_heads, seq_q, seq_k)
    targets : bool array_like broadcastable to (batch, seq_q, seq_k)
        True for the keys that a head *with this job* should attend to, per query: e.g. the previous
        token, or the token after an earlier copy of the current one.
    query_mask : bool array_like, shape (batch, seq_q) or (seq_q,), optional
        Queries to average over. Queries with no target key are always skipped.

    Returns
    -------
    ndarray, shape (n_heads,)
        1 for a head that puts all its weight on target keys, 0 for one that never does.

    Examples
    --------
    >>> w = np.stack([np.eye(3), np.full((3, 3), 1 / 3)])
    >>> weight_on(w, np.eye(3, dtype=bool)).round(3)  # "attend to yourself"
    array([1.   , 0.333])
    """
    weights = _as_batched(weights)
    batch, _, seq_q, seq_k = weights.shape
    targets = np.asarray(targets)
    if targets.dtype != np.bool_:
        raise TypeError("targets must be a bool array (True = a key the head should look at), "
                        f"got {targets.dtype}")
    try:
        targets = np.broadcast_to(targets, (batch, seq_q, seq_k))
    except ValueError:
        raise ValueError(f"targets of shape {targets.shape} do not broadcast to (batch, seq_q, seq_k) = "
                         f"{(batch, seq_q, seq_k)}") from None
    on_target = (weights * targets[:, None]).sum(axis=-1)  # (batch, n_heads, seq_q)
    counted = _query_mask(weights, query_mask) & np.asarray(targets.any(axis=-1))[:, None, :]
    return _mean_per_head(on_target, counted)


def weight_at_offset(weights: ArrayLike, offset: int, query_mask: ArrayLike | None = None) -> np.ndarray:
    """The share of each head's attention on the key ``offset`` positions away (-1: the previous token).

    Parameters
    ----------
    weights : array_like, shape (batch, n_heads, seq_q, seq_k) or (n_heads, seq_q, seq_k)
    offset : int
        Key position minus query position.
    query_mask : bool array_like, shape (batch, seq_q) or (seq_q,), optional

    Returns
    -------
    ndarray, shape (n_heads,)

    Examples
    --------
    >>> previous = np.eye(4, k=-1); previous[0, 0] = 1
    >>> weight_at_offset(previous[None], -1)  # the first query has no previous token: skipped
    array([1.])
    """
    weights = _as_batched(weights)
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise TypeError(f"offset must be an integer, got {type(offset).__name__}")
    targets = _offsets(*weights.shape[-2:]) == offset  # (seq_q, seq_k)
    return weight_on(weights, targets, query_mask)


def strongest_connections(weights: ArrayLike, tokens_q: Sequence[str], tokens_k: Sequence[str] | None = None,
                          *, top: int = 3) -> list[list[tuple[str, str, float]]]:
    """The ``top`` heaviest (query → key) links of each head of one example.

    Parameters
    ----------
    weights : array_like, shape (n_heads, seq_q, seq_k)
    tokens_q : sequence of str, length seq_q
    tokens_k : sequence of str, length seq_k, optional
        Defaults to ``tokens_q`` (self-attention).
    top : int, default 3

    Returns
    -------
    list (one per head) of lists of ``(query_token, key_token, weight)``, heaviest first.
    Ties keep the earlier query, then the earlier key.

    Examples
    --------
    >>> w = np.array([[[1.0, 0.0], [0.9, 0.1]]])  # one head, two tokens
    >>> strongest_connections(w, ["cat", "sat"], top=2)
    [[('cat', 'cat', 1.0), ('sat', 'cat', 0.9)]]
    """
    weights = as_float_array(weights, "weights")
    if weights.ndim != 3:
        raise ValueError(f"weights must have shape (n_heads, seq_q, seq_k) for one example, "
                         f"got {weights.shape}")
    n_heads, seq_q, seq_k = weights.shape
    tokens_q = [str(t) for t in tokens_q]
    tokens_k = tokens_q if tokens_k is None else [str(t) for t in tokens_k]
    if (len(tokens_q), len(tokens_k)) != (seq_q, seq_k):
        raise ValueError(f"got {len(tokens_q)} query and {len(tokens_k)} key tokens for weights of shape "
                         f"{weights.shape}")
    top = min(check_positive_int(top, "top"), seq_q * seq_k)
    result = []
    for head in weights:  # a handful of heads; the sort is the work
        flat = np.argsort(-head.reshape(-1), kind="stable")[:top]  # (top,) into (seq_q * seq_k)
        rows, cols = np.unravel_index(flat, head.shape)
        links = zip(rows, cols, strict=True)
        result.append([(tokens_q[i], tokens_k[j], float(head[i, j])) for i, j in links])
    return result


def _evaluate(metric: Callable[[np.ndarray], float], mask: np.ndarray) -> float:
    value = metric(mask.copy())  # a copy: the metric may not keep or edit our mask
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"metric must return a number, got {type(value).__name__}") from None
    if not np.isfinite(value):
        raise ValueError(f"metric returned {value} for head mask {mask.tolist()}")
    return value


def head_importance(metric: Callable[[np.ndarray], float],
                    shape: tuple[int, ...]) -> tuple[float, np.ndarray]:
    """How much ``metric`` (e.g. a loss) rises when each head alone is removed.

    Parameters
    ----------
    metric : callable
        ``metric(head_mask) -> float`` for a head mask of ``shape`` (1.0 keeps a head, 0.0 removes it).
    shape : int or tuple of int
        Shape of the head mask, e.g. ``n_heads`` or ``(n_layers, n_heads)``.

    Returns
    -------
    baseline : float
        ``metric`` with every head kept.
    importance : ndarray of ``shape``
        ``metric(without that head) - baseline``. With a loss, large means the head matters; near 0
        means the others cover for it (or it does nothing useful).

    Examples
    --------
    >>> cost = np.array([0.5, 0.0, 2.0])  # a made-up loss: each removed head adds its cost
    >>> head_importance(lambda m: 1.0 + float(cost @ (1 - m)), 3)
    (1.0, array([0.5, 0. , 2. ]))
    """
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    everything = np.ones(shape)
    baseline = _evaluate(metric, everything)
    importance = np.empty(shape)
    for index in np.ndindex(shape):  # one metric call per head: the metric is the expensive part
        mask = everything.copy()
        mask[index] = 0.0
        importance[index] = _evaluate(metric, mask) - baseline
    return baseline, importance


@dataclass(frozen=True)
class PruningCurve:
    """The metric as heads are removed one by one, least important first.

    Attributes
    ----------
    removed : list of tuple of int
        Head indices in the order they were removed (``removed[i]`` goes at step ``i + 1``).
    values : ndarray, shape (n_heads_total + 1,)
        ``values[n]`` is the metric with the first ``n`` heads of ``removed`` switched off.
    masks : ndarray
        The head mask behind each value: one per value, each of the importance array's shape.
    """

    removed: list[tuple[int, ...]]
    values: np.ndarray
    masks: np.ndarray


def pruning_curve(metric: Callable[[np.ndarray], float], importance: ArrayLike) -> PruningCurve:
    """Remove heads one at a time in increasing ``importance`` and record ``metric`` after each removal.

    Parameters
    ----------
    metric : callable
        ``metric(head_mask) -> float``, as for :func:`head_importance`.
    importance : array_like
        One score per head (e.g. from :func:`head_importance`); its shape is the head mask's shape. Ties
        are broken by position (earlier heads first).

    Returns
    -------
    PruningCurve

    Examples
    --------
    >>> cost = np.array([0.5, 0.0, 2.0])
    >>> curve = pruning_curve(lambda m: float(cost @ (1 - m)), cost)
    >>> curve.removed, curve.values.tolist()
    ([(1,), (0,), (2,)], [0.0, 0.0, 0.5, 2.5])
    """
    importance = as_float_array(importance, "importance")
    if importance.size == 0 or not np.isfinite(importance).all():
        raise ValueError(f"importance must hold one finite score per head, got {importance!r}")
    order = np.argsort(importance.reshape(-1), kind="stable")  # least important first
    removed = [tuple(int(i) for i in np.unravel_index(flat, importance.shape)) for flat in order]
    mask = np.ones(importance.shape)
    masks, values = [mask.copy()], [_evaluate(metric, mask)]
    for index in removed:
        mask[index] = 0.0
        masks.append(mask.copy())
        values.append(_evaluate(metric, mask))
    return PruningCurve(removed, np.array(values), np.stack(masks))
