"""The loss a language model learns from, and the backward pass of its embedding table."""

from __future__ import annotations

import numpy as np

from mha.typing import ArrayLike, FloatArray
from mha.validation import as_float_array, check_bool_mask

__all__ = ["cross_entropy", "log_softmax", "embedding_backward"]


def cross_entropy(logits: ArrayLike, targets: ArrayLike, loss_mask: ArrayLike | None = None
                  ) -> tuple[float, FloatArray]:
    """Mean cross-entropy of the predicted next tokens, and its gradient with respect to the logits.

    Parameters
    ----------
    logits : ndarray, shape (..., vocab_size)
    targets : int ndarray, shape (...)
        The correct class at every position.
    loss_mask : bool ndarray, shape (...), optional
        Which positions count; the loss is the mean over them (default: all).

    Returns
    -------
    loss : float
        In nats; ``log(vocab_size)`` for a uniform guess.
    d_logits : ndarray, same shape and dtype as ``logits``

    Raises
    ------
    ValueError
        ``targets`` not integers of shape ``logits.shape[:-1]`` or outside ``[0, vocab_size)``; a
        ``loss_mask`` of another shape, or selecting no position.
    TypeError
        ``logits`` not real numbers, or a ``loss_mask`` that is not boolean.

    Examples
    --------
    >>> loss, d = cross_entropy(np.zeros((2, 4)), np.array([0, 3]))
    >>> round(loss, 4) == round(float(np.log(4)), 4), d[0]
    (True, array([-0.375,  0.125,  0.125,  0.125]))
    """
    logits = as_float_array(logits, "logits")
    targets = np.asarray(targets)
    if targets.dtype.kind not in "iu" or targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets must be integers of shape {logits.shape[:-1]}, got {targets.dtype} "
                         f"{targets.shape}")
    if targets.size and (targets.min() < 0 or targets.max() >= logits.shape[-1]):
        raise ValueError(f"targets must lie in [0, {logits.shape[-1]}), "
                         f"got [{targets.min()}, {targets.max()}]")
    if loss_mask is None:
        loss_mask = np.ones(targets.shape, dtype=bool)
    loss_mask = check_bool_mask(loss_mask, "loss_mask")
    if loss_mask.shape != targets.shape:
        raise ValueError(f"loss_mask must have shape {targets.shape}, got {loss_mask.shape}")
    count = int(loss_mask.sum())
    if count == 0:
        raise ValueError("loss_mask selects no position: the mean loss would be 0/0")
    log_probs = log_softmax(logits)  # (..., vocab_size)
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]  # (...)
    loss = -float(picked[loss_mask].sum()) / count
    d_logits = np.exp(log_probs)  # softmax probabilities
    np.put_along_axis(d_logits, targets[..., None], np.take_along_axis(d_logits, targets[..., None], -1) - 1,
                      axis=-1)
    d_logits *= (loss_mask / count).astype(d_logits.dtype)[..., None]
    return loss, d_logits


def log_softmax(logits: ArrayLike) -> FloatArray:
    """The log of :func:`mha.softmax` over the last axis, computed without taking a log of 0.

    ``log_softmax(x)_i = (x_i - m) - log Σ_j exp(x_j - m)`` with ``m`` the row's largest entry: the
    shift keeps ``exp`` from overflowing, and a class far below the others gets a large negative
    number instead of ``log(0) = -inf``.

    Parameters
    ----------
    logits : array_like of float, shape (..., n_classes)

    Returns
    -------
    ndarray, same shape and float dtype as ``logits``

    Raises
    ------
    TypeError
        If ``logits`` are not real numbers.

    Examples
    --------
    >>> log_softmax(np.array([0.0, 0.0])).round(4)
    array([-0.6931, -0.6931])
    >>> log_softmax(np.array([0.0, -1000.0]))  # log of a softmax of (1, 0) would give -inf
    array([    0., -1000.])
    """
    logits = as_float_array(logits, "logits")
    shifted = logits - logits.max(axis=-1, keepdims=True)  # (..., n_classes), the largest entry 0
    log_probs: FloatArray = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return log_probs


def embedding_backward(d_out: ArrayLike, tokens: ArrayLike, vocab_size: int) -> FloatArray:
    """Gradient of an embedding table from the gradient of its looked-up rows.

    ``table[tokens]`` copies rows, so each row's gradient is the sum of the gradients of every place it
    was copied to (a token used twice collects both).

    Parameters
    ----------
    d_out : ndarray, shape (..., d_model)
    tokens : int ndarray, shape (...)
    vocab_size : int

    Returns
    -------
    ndarray, shape (vocab_size, d_model)

    Raises
    ------
    ValueError
        ``tokens`` not integers of shape ``d_out.shape[:-1]``, or outside ``[0, vocab_size)``.
    TypeError
        ``d_out`` is not real numbers.

    Examples
    --------
    >>> embedding_backward(np.ones((1, 3, 2)), np.array([[0, 2, 0]]), 3)
    array([[2., 2.],
           [0., 0.],
           [1., 1.]])
    """
    d_out, tokens = as_float_array(d_out, "d_out"), np.asarray(tokens)
    if tokens.dtype.kind not in "iu" or d_out.shape[:-1] != tokens.shape:
        raise ValueError(f"expected integer tokens of shape {d_out.shape[:-1]} (d_out's without d_model), "
                         f"got {tokens.dtype} {tokens.shape}")
    if tokens.size and not (0 <= tokens.min() and tokens.max() < vocab_size):  # -1 would wrap round
        raise ValueError(f"tokens must lie in [0, {vocab_size}), got values from {tokens.min()} to "
                         f"{tokens.max()}")
    d_flat = d_out.reshape(-1, d_out.shape[-1])  # (tokens, d_model)
    grad = np.zeros((vocab_size, d_out.shape[-1]), dtype=d_out.dtype)
    np.add.at(grad, tokens.reshape(-1), d_flat)
    return grad
