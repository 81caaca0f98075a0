"""Fewer key/value heads: turn a multi-head layer into a grouped-query (or multi-query) one.

A decoder caches every token's keys and values, ``n_kv_heads * d_head`` numbers each, per layer.
Grouped-query attention (GQA) lets ``n_heads / n_kv_heads`` query heads share one key/value head, which
divides the cache by that factor; multi-query attention (MQA) is the extreme, one key/value head.

An already trained multi-head layer can be converted: average the key and value projections of the
heads in each group (``pool_kv_heads``), then, if the approximation is not good enough, fit the new
layer to the old one's outputs for a while (``fit_to_teacher``). The GQA paper (Ainslie et al., 2023)
calls these two steps mean-pooling and uptraining.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mha.fast import blas_threads
from mha.grad import multi_head_backward
from mha.lab.training import Adam
from mha.layers import MultiHeadAttention
from mha.typing import ArrayLike, Seed
from mha.validation import as_float_array, as_generator, check_positive_int

__all__ = ["pool_kv_heads", "relative_error", "fit_to_teacher"]


def pool_kv_heads(layer: MultiHeadAttention, n_kv_heads: int) -> MultiHeadAttention:
    """A copy of ``layer`` with ``n_kv_heads`` key/value heads, each the mean of the heads it replaces.

    Query and output projections are copied unchanged. Query head ``i`` keeps reading the key/value
    head of its group, ``i // (n_heads // n_kv_heads)``, which is now an average over that group.

    Parameters
    ----------
    layer : MultiHeadAttention
        Any layer; its ``n_kv_heads`` must be a multiple of the new ``n_kv_heads``.
    n_kv_heads : int

    Returns
    -------
    MultiHeadAttention
        A new layer; ``layer`` is not modified.

    Examples
    --------
    >>> teacher = MultiHeadAttention(16, 4, rng=0)
    >>> same = pool_kv_heads(teacher, 4)  # nothing to pool: an exact copy
    >>> x = np.ones((3, 16))
    >>> np.allclose(same(x), teacher(x))
    True
    >>> pool_kv_heads(teacher, 1).W_k.shape  # multi-query: one key head of d_head = 4
    (16, 4)
    """
    if not isinstance(layer, MultiHeadAttention):
        raise TypeError(f"layer must be a MultiHeadAttention, got {type(layer).__name__}")
    n_kv_heads = check_positive_int(n_kv_heads, "n_kv_heads")
    if layer.n_kv_heads % n_kv_heads:
        raise ValueError(f"the layer has {layer.n_kv_heads} key/value heads, which cannot be pooled into "
                         f"n_kv_heads={n_kv_heads} equal groups")
    student = MultiHeadAttention(layer.d_model, layer.n_heads, kdim=layer.kdim, vdim=layer.vdim,
                                 bias=layer.bias, n_kv_heads=n_kv_heads, rng=0, dtype=layer.dtype)
    factor, d_head = layer.n_kv_heads // n_kv_heads, layer.d_head
    for name, arr in layer.parameters().items():
        if name in {"W_k", "W_v"}:
            grouped = arr.reshape(arr.shape[0], n_kv_heads, factor, d_head)  # (in, n_kv, factor, d_head)
            arr = grouped.mean(axis=2).reshape(arr.shape[0], n_kv_heads * d_head)
        elif name in {"b_k", "b_v"}:
            arr = arr.reshape(n_kv_heads, factor, d_head).mean(axis=1).reshape(-1)  # (n_kv * d_head,)
        setattr(student, name, arr)
    return student


def relative_error(output: ArrayLike, reference: ArrayLike) -> float:
    """``‖output − reference‖ / ‖reference‖`` over all entries (Frobenius norms).

    Examples
    --------
    >>> round(relative_error(np.array([1.0, 2.0]), np.array([1.0, 1.0])), 4)  # 1 / sqrt(2)
    0.7071
    """
    output = as_float_array(output, "output")
    reference = as_float_array(reference, "reference")
    if output.shape != reference.shape:
        raise ValueError(f"output {output.shape} and reference {reference.shape} must have the same shape")
    norm = float(np.linalg.norm(reference))
    if norm == 0:
        raise ValueError("reference is all zeros: a relative error is undefined")
    return float(np.linalg.norm(output - reference)) / norm


def fit_to_teacher(student: MultiHeadAttention, teacher: MultiHeadAttention,
                   sample_inputs: Callable[[np.random.Generator], ArrayLike], *, steps: int, rng: Seed,
                   lr: float = 1e-3, causal: bool = False) -> np.ndarray:
    """Train ``student`` (all its weights) to reproduce ``teacher``'s outputs: mean squared error, Adam.

    Parameters
    ----------
    student, teacher : MultiHeadAttention
        Same ``d_model`` (and input widths); ``student`` is updated in place, ``teacher`` is only read.
    sample_inputs : callable
        ``sample_inputs(rng) -> ndarray (batch, seq, d_model)``: fresh inputs for each step.
    steps : int
    rng : numpy.random.Generator or int
    lr : float, default 1e-3
    causal : bool, default False
        Fit the layers as causal self-attention (as used when decoding).

    Returns
    -------
    ndarray, shape (steps,)
        The mean squared error at each step, before that step's update.

    Examples
    --------
    >>> teacher = MultiHeadAttention(8, 2, rng=0)
    >>> student = pool_kv_heads(teacher, 1)
    >>> inputs = lambda rng: rng.standard_normal((4, 6, 8))
    >>> losses = fit_to_teacher(student, teacher, inputs, steps=100, rng=1, lr=3e-3)
    >>> bool(losses[-10:].mean() < losses[:10].mean())
    True
    """
    if student.d_model != teacher.d_model:
        raise ValueError(f"student d_model={student.d_model} differs from teacher d_model={teacher.d_model}")
    steps = check_positive_int(steps, "steps")
    rng = as_generator(rng)
    optimizer = Adam(student.parameters(), lr=lr)
    losses = np.empty(steps)
    with blas_threads(1):  # small matrices: one thread is faster
        for step in range(steps):
            x = np.asarray(sample_inputs(rng), dtype=student.dtype)  # (batch, seq, d_model)
            target = teacher(x, causal=causal)
            out, cache = student.forward(x, causal=causal)
            diff = out - target  # (batch, seq, d_model)
            losses[step] = float(np.mean(diff**2))
            grads, _, _, _ = multi_head_backward(diff * diff.dtype.type(2.0 / diff.size), cache)
            optimizer.step(grads)
    return losses
