"""Layer normalisation: each token's features rescaled to mean 0 and variance 1, then scaled and shifted;
and RMS normalisation, its centring-free variant (Llama's norm, and QK-norm's).

The variance is computed from centred values (two passes over the features): the one-pass shortcut
``mean(x²) - mean(x)²`` cancels catastrophically in float32 when the features share a large offset.
"""

from __future__ import annotations

import math
import numbers
from typing import Literal, NamedTuple, overload

import numpy as np

from mha.module import Module, Parameter
from mha.typing import ArrayLike, DTypeLike, FloatArray
from mha.validation import (
    as_float_array,
    check_dtype_argument,
    check_features,
    check_finite,
    check_positive_int,
    promote,
)

__all__ = ["layer_norm", "LayerNorm", "LayerNormCache", "rms_norm", "RMSNormCache"]


class LayerNormCache(NamedTuple):
    """What :func:`mha.grad.layer_norm_backward` needs from a forward pass.

    Parameters
    ----------
    normalised : ndarray, shape (..., d_model)
        ``(x - mean) / std``, before ``gamma`` and ``beta``.
    inv_std : ndarray, shape (..., 1)
        ``1 / sqrt(var + eps)``.
    gamma : ndarray, shape (d_model,), or None
        None for a scale of 1.

    Examples
    --------
    >>> _, cache = layer_norm(np.array([[1.0, 3.0]]), return_cache=True)
    >>> cache.normalised.round(3), cache.gamma is None
    (array([[-1.,  1.]]), True)
    """

    normalised: FloatArray  # (..., d_model): (x - mean) / std, before gamma and beta
    inv_std: FloatArray  # (..., 1): 1 / sqrt(var + eps)
    gamma: FloatArray | None  # (d_model,), or None for a scale of 1


def _check_eps(eps: object) -> float:
    number = float(eps) if isinstance(eps, numbers.Real) and not isinstance(eps, bool) else math.nan
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps!r}")
    return number


@overload
def layer_norm(x: ArrayLike, gamma: ArrayLike | None = ..., beta: ArrayLike | None = ..., *, eps: float = ...,
               return_cache: Literal[False] = ...) -> FloatArray: ...
@overload
def layer_norm(x: ArrayLike, gamma: ArrayLike | None = ..., beta: ArrayLike | None = ..., *, eps: float = ...,
               return_cache: Literal[True]) -> tuple[FloatArray, LayerNormCache]: ...
@overload
def layer_norm(x: ArrayLike, gamma: ArrayLike | None = ..., beta: ArrayLike | None = ..., *, eps: float = ...,
               return_cache: bool) -> FloatArray | tuple[FloatArray, LayerNormCache]: ...
def layer_norm(x: ArrayLike, gamma: ArrayLike | None = None, beta: ArrayLike | None = None, *,
               eps: float = 1e-5, return_cache: bool = False
               ) -> FloatArray | tuple[FloatArray, LayerNormCache]:
    """Normalise each token's features to mean 0 and variance 1, then scale and shift.

    ``y = gamma * (x - mean) / sqrt(var + eps) + beta``, statistics over the last axis. The variance is
    computed from the centred values (two passes), not as ``mean(x²) - mean(x)²``: in float32 that
    shortcut cancels catastrophically when the features share a large offset.

    Parameters
    ----------
    x : array_like, shape (..., d_model)
    gamma, beta : array_like, shape (d_model,), optional
        Scale (default 1) and shift (default 0).
    eps : float, default 1e-5
        Keeps a constant row (variance 0) finite: it comes out as ``beta``.
    return_cache : bool, default False
        Also return what the backward pass needs (:func:`mha.grad.layer_norm_backward`).

    Returns
    -------
    y : ndarray, shape (..., d_model), dtype of ``x`` promoted with ``gamma``/``beta``
    cache : LayerNormCache
        Only with ``return_cache=True``.

    Raises
    ------
    ValueError
        ``x`` a scalar or of width 0, NaN or infinities in any input, ``gamma`` or ``beta`` not of shape
        ``(d_model,)``, or ``eps`` not a finite number > 0 (or 0 in ``x``'s dtype).
    TypeError
        An input that is not real numbers.

    Examples
    --------
    >>> y = layer_norm(np.array([[1.0, 2.0, 3.0, 6.0]]))
    >>> y.mean().round(6), y.var().round(4)
    (np.float64(0.0), np.float64(1.0))
    """
    x = as_float_array(x, "x")
    check_finite(x, "x")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have shape (..., d_model) with d_model >= 1, got {x.shape}")
    eps = _check_eps(eps)
    if x.dtype.type(eps) == 0:  # a constant row would then be 0 / 0
        raise ValueError(f"eps = {eps!r} is 0 in {x.dtype}: "
                         f"use at least {np.finfo(x.dtype).smallest_subnormal:.1e}")
    if gamma is not None:
        gamma = check_features(gamma, "gamma", x.shape[-1])
    if beta is not None:
        beta = check_features(beta, "beta", x.shape[-1])
    y, cache = _layer_norm(x, gamma, beta, eps)
    return (y, cache) if return_cache else y


def _layer_norm(x: FloatArray, gamma: FloatArray | None, beta: FloatArray | None, eps: float
                ) -> tuple[FloatArray, LayerNormCache]:
    """:func:`layer_norm`'s formula on checked arrays, and its cache (what :class:`LayerNorm` runs)."""
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is caught below, and taken the long way
        mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
        centred = x - mean
        var = np.mean(centred * centred, axis=-1, keepdims=True)  # (..., 1)
    if np.isfinite(var).all():
        inv_std = 1.0 / np.sqrt(var + x.dtype.type(eps))  # (..., 1)
        normalised = centred * inv_std
    else:  # sums or squares beyond the dtype (|x| over 1e154 in float64, 1.8e19 in float32): the same
        # steps on each row divided by its peak, within [-1, 1] (layer norm ignores a row's scale but eps)
        peak = np.abs(x).max(axis=-1, keepdims=True)  # (..., 1)
        peak[peak == 0] = 1
        unit = x / peak
        unit = unit - unit.mean(axis=-1, keepdims=True)  # within [-2, 2]
        with np.errstate(over="ignore", under="ignore"):  # eps / peak² may underflow to 0: negligible there
            rms = np.sqrt(np.mean(unit * unit, axis=-1, keepdims=True) + x.dtype.type(eps) / (peak * peak))
            rms[rms == 0] = 1  # a constant row whose eps / peak² underflowed: its zeros stay zeros
            inv_std = 1.0 / (peak * rms)  # underflows to 0 for the largest rows: only the cache sees it
        normalised = unit / rms
    y = normalised if gamma is None else normalised * gamma
    if beta is not None:
        y = y + beta
    return y, LayerNormCache(normalised, inv_std, gamma)


class LayerNorm(Module):
    """Layer normalisation with a learned scale ``gamma`` (ones) and shift ``beta`` (zeros).

    Parameters
    ----------
    d_model : int
    eps : float, default 1e-5
    dtype : np.float32 or np.float64, default np.float64
        Of ``gamma`` and ``beta``; a float32 input to a float32 norm stays float32.

    Raises
    ------
    ValueError
        ``d_model`` below 1, or ``eps`` not a finite number > 0 (or 0 in ``dtype``).
    TypeError
        ``d_model`` not an integer, or a ``dtype`` other than float32 or float64.

    Examples
    --------
    >>> norm = LayerNorm(4, dtype=np.float32)
    >>> norm(np.ones((2, 3, 4), dtype=np.float32)).dtype
    dtype('float32')
    """

    gamma: Parameter[FloatArray] = Parameter()
    beta: Parameter[FloatArray] = Parameter()

    def __init__(self, d_model: int, *, eps: float = 1e-5, dtype: DTypeLike = np.float64) -> None:
        self.d_model = check_positive_int(d_model, "d_model")
        self.eps = _check_eps(eps)
        self.dtype = check_dtype_argument(dtype)
        if self.dtype.type(self.eps) == 0:  # a constant row would then be 0 / 0 (forward checks no more)
            raise ValueError(f"eps = {self.eps!r} is 0 in {self.dtype}: "
                             f"use at least {np.finfo(self.dtype).smallest_subnormal:.1e}")
        self._params = {"gamma": np.ones(d_model, dtype=self.dtype),
                        "beta": np.zeros(d_model, dtype=self.dtype)}

    def __call__(self, x: ArrayLike) -> FloatArray:
        """Normalise every token's features, then scale by ``gamma`` and shift by ``beta``.

        Parameters
        ----------
        x : array_like, shape (..., d_model)

        Returns
        -------
        ndarray, the shape of ``x``, in ``x``'s dtype promoted with the norm's

        Raises
        ------
        ValueError
            ``x``'s last axis is not ``d_model``, or ``x`` holds NaN or infinities.
        TypeError
            ``x`` is not real numbers.

        Examples
        --------
        >>> LayerNorm(3)(np.array([[1.0, 2.0, 6.0]])).round(3)
        array([[-0.926, -0.463,  1.389]])
        """
        return self.forward(x)[0]

    def forward(self, x: ArrayLike) -> tuple[FloatArray, LayerNormCache]:
        """Normalise ``x`` of shape ``(..., d_model)``, keeping what the backward pass needs.

        Parameters
        ----------
        x : array_like, shape (..., d_model)

        Returns
        -------
        y : ndarray, the shape of ``x``, in ``x``'s dtype promoted with the norm's
        cache : LayerNormCache
            For :func:`mha.grad.layer_norm_backward`.

        Raises
        ------
        ValueError
            ``x``'s last axis is not ``d_model``, or ``x`` holds NaN or infinities.
        TypeError
            ``x`` is not real numbers.

        Examples
        --------
        >>> norm = LayerNorm(3)
        >>> y, cache = norm.forward(np.array([[1.0, 2.0, 6.0]]))
        >>> np.allclose(y, norm(np.array([[1.0, 2.0, 6.0]]))), cache.inv_std.shape
        (True, (1, 1))
        """
        return self._forward(promote(check_features(x, "x", self.d_model), self.dtype))

    def _forward(self, x: FloatArray) -> tuple[FloatArray, LayerNormCache]:
        """:meth:`forward` on checked input (the blocks check theirs once)."""
        return _layer_norm(x, self.gamma, self.beta, self.eps)

    def __repr__(self) -> str:
        return f"LayerNorm({self.d_model}, eps={self.eps}, dtype={self.dtype.name})"


class RMSNormCache(NamedTuple):
    """What :func:`mha.grad.rms_norm_backward` needs from a forward pass of :func:`rms_norm`.

    Parameters
    ----------
    normalised : ndarray, shape (..., d)
        ``x / rms(x)``, before the gain.
    inv_rms : ndarray, shape (..., 1)
        ``1 / sqrt(mean(x²) + eps)``.
    gain : ndarray, shape (d,), or None
        None for a gain of 1.

    Examples
    --------
    >>> _, cache = rms_norm(np.array([[3.0, 4.0]]), np.full(2, 2.0), return_cache=True)
    >>> cache.inv_rms.round(4), cache.gain
    (array([[0.2828]]), array([2., 2.]))
    """

    normalised: FloatArray  # (..., d): x / rms(x), before the gain
    inv_rms: FloatArray  # (..., 1): 1 / sqrt(mean(x²) + eps)
    gain: FloatArray | None  # (d,), or None for a gain of 1


@overload
def rms_norm(x: ArrayLike, gain: ArrayLike | None = ..., *, eps: float = ...,
             return_cache: Literal[False] = ...) -> FloatArray: ...
@overload
def rms_norm(x: ArrayLike, gain: ArrayLike | None = ..., *, eps: float = ...,
             return_cache: Literal[True]) -> tuple[FloatArray, RMSNormCache]: ...
def rms_norm(x: ArrayLike, gain: ArrayLike | None = None, *, eps: float = 1e-6, return_cache: bool = False,
             ) -> FloatArray | tuple[FloatArray, RMSNormCache]:
    """Divide each vector by its root mean square, then scale: ``y = gain · x / √(mean(x²) + eps)``.

    Layer norm without the centring and the shift (Zhang and Sennrich, 2019). Applied to each head's
    queries and keys it is *QK-norm*: every query and key then has length about ``√d``, so a score
    ``q · k / √d`` can never exceed ``√d · max|gain_q| · max|gain_k|``, however large the projections grow.

    Parameters
    ----------
    x : array_like, shape (..., d)
    gain : array_like, shape (d,), optional
        Learned scale (default 1).
    eps : float, default 1e-6
        Keeps an all-zero vector at zero instead of 0 / 0.
    return_cache : bool, default False
        Also return what the backward pass needs (:func:`mha.grad.rms_norm_backward`).

    Returns
    -------
    y : ndarray, shape (..., d), dtype of ``x`` promoted with ``gain``
    cache : RMSNormCache
        Only with ``return_cache=True``.

    Raises
    ------
    ValueError
        ``x`` a scalar or of width 0, NaN or infinities in ``x`` or ``gain``, ``gain`` not of shape
        ``(d,)``, or ``eps`` not a finite number > 0.
    TypeError
        ``x`` or ``gain`` not real numbers.

    Examples
    --------
    >>> y = rms_norm(np.array([[3.0, 4.0], [30.0, 40.0]]))
    >>> y.round(4)  # the same direction, the same size: the length no longer matters
    array([[0.8485, 1.1314],
           [0.8485, 1.1314]])
    >>> np.sqrt((y ** 2).mean(axis=-1)).round(4)
    array([1., 1.])
    """
    x = as_float_array(x, "x")
    check_finite(x, "x")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have shape (..., d) with d >= 1, got {x.shape}")
    eps = _check_eps(eps)
    if gain is not None:
        gain = check_features(gain, "gain", x.shape[-1])
    y, cache = _rms_norm(x, gain, eps)
    return (y, cache) if return_cache else y


def _rms_norm(x: FloatArray, gain: FloatArray | None, eps: float) -> tuple[FloatArray, RMSNormCache]:
    """:func:`rms_norm`'s formula on checked arrays, and its cache (QK-norm inside a layer runs it)."""
    # The largest |x| of each vector divides first, so that squares cannot overflow (|x| of 1e20 in float32).
    peak = np.abs(x).max(axis=-1, keepdims=True)  # (..., 1)
    peak[peak == 0] = 1
    unit = x / peak  # within [-1, 1]
    with np.errstate(over="ignore", under="ignore"):  # eps / peak² may round to 0: negligible then
        rms = peak * np.sqrt(np.mean(unit * unit, axis=-1, keepdims=True) + x.dtype.type(eps) / (peak * peak))
    inv_rms = 1.0 / rms  # (..., 1)
    normalised = x * inv_rms
    y = normalised if gain is None else normalised * gain
    return y, RMSNormCache(normalised, inv_rms, gain)
