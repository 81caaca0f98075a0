"""The backward pass of the affine map ``y = x @ W + b`` (:func:`mha.module.linear`)."""

from __future__ import annotations

from mha.typing import FloatArray

__all__ = ["linear_backward"]


def linear_backward(d_y: FloatArray, x: FloatArray, W: FloatArray, b: FloatArray | None = None
                    ) -> tuple[FloatArray, FloatArray | None, FloatArray]:
    """Gradients of ``y = x @ W + b``: ``(dW, db, dx)``, summed over every token.

    ``dW = xᵀ dy`` (each weight served every token), ``db = Σ dy`` and ``dx = dy Wᵀ``.

    Parameters
    ----------
    d_y : ndarray, shape (..., d_out)
    x : ndarray, shape (..., d_in)
        The forward pass's input.
    W : ndarray, shape (d_in, d_out)
    b : ndarray, shape (d_out,), optional
        Only whether there is one matters: ``db`` is None without it.

    Returns
    -------
    dW : ndarray, shape (d_in, d_out)
    db : ndarray, shape (d_out,), or None
    dx : ndarray, shape (..., d_in)

    Examples
    --------
    >>> import numpy as np
    >>> x, W = np.ones((2, 3, 4)), np.ones((4, 5))
    >>> dW, db, dx = linear_backward(np.ones((2, 3, 5)), x, W, np.zeros(5))
    >>> dW[0, 0], db[0], dx.shape  # six tokens each contributed 1
    (np.float64(6.0), np.float64(6.0), (2, 3, 4))
    """
    d_flat = d_y.reshape(-1, d_y.shape[-1])  # (tokens, d_out)
    dW = x.reshape(-1, x.shape[-1]).T @ d_flat  # (d_in, d_out)
    db = None if b is None else d_flat.sum(axis=0)
    dx = (d_flat @ W.T).reshape(*d_y.shape[:-1], W.shape[0])  # (..., d_in)
    return dW, db, dx
