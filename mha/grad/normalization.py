"""Backward passes of the two normalisations: layer norm (:func:`mha.layer_norm`, in every block) and RMS
normalisation (:func:`mha.rms_norm`, the norm of QK-norm and of Llama)."""

from __future__ import annotations

import numpy as np

from mha.normalization import LayerNormCache, RMSNormCache
from mha.typing import ArrayLike, FloatArray

__all__ = ["layer_norm_backward", "rms_norm_backward"]



def layer_norm_backward(d_out: FloatArray, cache: LayerNormCache
                        ) -> tuple[dict[str, FloatArray], FloatArray]:
    """Gradients of :func:`mha.layer_norm` (or ``LayerNorm.forward``): ``({"gamma": …, "beta": …}, dx)``.

    With ``n = (x − μ)/σ`` and ``dn = dy ⊙ γ``, the mean and the variance both depend on every feature,
    so ``dx = (dn − mean(dn) − n ⊙ mean(dn ⊙ n)) / σ`` (means over the features).

    Parameters
    ----------
    d_out : ndarray, shape (..., d_model)
        Gradient of the loss with respect to the norm's output.
    cache : LayerNormCache
        From ``norm.forward(x)`` or ``layer_norm(x, ..., return_cache=True)``.

    Returns
    -------
    grads : dict of str to ndarray
        ``"gamma"`` and ``"beta"``, each of shape ``(d_model,)``, summed over the leading axes.
    dx : ndarray, shape (..., d_model)

    Examples
    --------
    >>> import mha
    >>> norm = mha.LayerNorm(4)
    >>> y, cache = norm.forward(np.arange(8.0).reshape(2, 4) ** 2)
    >>> grads, dx = layer_norm_backward(np.ones_like(y), cache)
    >>> np.allclose(dx, 0)  # shifting every output alike is what beta does: x gets no gradient
    True
    """
    n = cache.normalised
    lead = tuple(range(d_out.ndim - 1))
    grads = {"gamma": np.sum(d_out * n, axis=lead), "beta": np.sum(d_out, axis=lead)}
    dn = d_out if cache.gamma is None else d_out * cache.gamma
    dx = (dn - dn.mean(axis=-1, keepdims=True) - n * np.mean(dn * n, axis=-1, keepdims=True)) * cache.inv_std
    return grads, dx


def rms_norm_backward(d_out: ArrayLike, cache: RMSNormCache,
                      ) -> tuple[FloatArray | None, FloatArray]:
    """Gradients of ``y = gain · x / rms(x)`` for the gain and for ``x``.

    With ``n = x / rms(x)`` and ``dn = d_out · gain``: ``dx = (dn - n · mean(dn · n)) / rms(x)``, the
    component of ``dn`` along ``n`` removed (scaling ``x`` changes nothing), divided by the length.

    Parameters
    ----------
    d_out : ndarray, shape (..., d)
    cache : RMSNormCache
        From ``rms_norm(x, gain, return_cache=True)``.

    Returns
    -------
    d_gain : ndarray, shape (d,), or None when the norm had no gain
    d_x : ndarray, shape (..., d)

    Examples
    --------
    >>> from mha.normalization import rms_norm
    >>> x = np.array([[3.0, 4.0]])
    >>> _, cache = rms_norm(x, np.ones(2), eps=1e-12, return_cache=True)  # eps alone keeps some length
    >>> d_gain, d_x = rms_norm_backward(x, cache)  # pushing y along x itself
    >>> bool(np.abs(d_x).max() < 1e-12)  # ... moves nothing: the norm removes the length
    True
    """
    normalised, inv_rms, gain = cache
    d_out = np.asarray(d_out, dtype=normalised.dtype)
    d_normalised = d_out if gain is None else d_out * gain
    d_gain = None if gain is None else (d_out * normalised).reshape(-1, normalised.shape[-1]).sum(axis=0)
    along = np.mean(d_normalised * normalised, axis=-1, keepdims=True)  # (..., 1)
    return d_gain, (d_normalised - normalised * along) * inv_rms
