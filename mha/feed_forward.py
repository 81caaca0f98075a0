"""The position-wise feed-forward network of a transformer block, and its activations."""

from __future__ import annotations

import functools
import math

import numpy as np

from mha._features import check_features, linear, promote
from mha._kernels import filled_vector
from mha._parameters import Module, Parameter, glorot_uniform
from mha._threads import elementwise_inplace
from mha._validation import as_float_array, as_generator, check_dtype_argument, check_positive_int

__all__ = ["relu", "gelu", "erf", "gelu_exact", "relu_inplace", "gelu_inplace", "gelu_exact_inplace",
           "ACTIVATIONS", "INPLACE_ACTIVATIONS", "FeedForward"]


def _as_fresh_float(x) -> tuple[np.ndarray, tuple]:
    """A float copy of ``x`` that an in-place activation may overwrite, at least 1-D, and ``x``'s shape.

    :func:`~mha._validation.as_float_array` decides what counts as a number (integers become float64,
    float32 stays float32; strings, complex numbers and booleans get a clear ``TypeError``). 0-d input is
    lifted to 1-D because NumPy turns 0-d ufunc results into scalars, which ``out=`` cannot write into.
    """
    x = as_float_array(x, "x")
    return np.array(x, ndmin=1, copy=True), x.shape


def relu_inplace(x: np.ndarray) -> np.ndarray:
    """:func:`relu` overwriting a float array ``x``; returns ``x``."""
    return np.maximum(x, _zeros_like_row(x), out=x)


#: Rows up to this length are compared with a row of zeros, not the scalar 0 (see _zeros_like_row).
_ZERO_ROW_MAX = 8192


def _zeros_like_row(x: np.ndarray):
    """Zeros to compare ``x`` with: a cached row of ``x``'s last-axis length, or the scalar 0.

    NumPy 2.4's ``maximum`` against a scalar runs about three times slower than against a row it
    broadcasts (measured: 618 against 199 µs on 1024 x 2048 float32 values; a multiply takes 68), so a
    cached read-only row is used when the last axis is not too long to keep. Same results, NaN included.
    """
    if x.ndim and 0 < x.shape[-1] <= _ZERO_ROW_MAX:
        return filled_vector(x.shape[-1], 0.0, x.dtype)
    return x.dtype.type(0.0)


def relu(x: np.ndarray) -> np.ndarray:
    """``max(0, x)``, element-wise.

    Examples
    --------
    >>> relu(np.array([-1.0, 0.5]))
    array([0. , 0.5])
    """
    x = as_float_array(x, "x")  # integers become float64, as every activation here returns floats
    return np.maximum(x, _zeros_like_row(x))


_TANH_SCALE = math.sqrt(2.0 / math.pi)
_TANH_CUBIC = 0.044715


def gelu_inplace(x: np.ndarray) -> np.ndarray:
    """:func:`gelu` (the tanh form) overwriting a float array ``x``; returns ``x``, the same numbers.

    A large array goes through in cache-sized blocks, spread over the package's threads
    (:func:`mha._threads.elementwise_inplace`): each element's result is the same either way.
    """
    return elementwise_inplace(_gelu_tanh_chain, x)


def _gelu_tanh_chain(x: np.ndarray) -> None:
    real = x.dtype.type
    inner = x * x  # the only temporary: x², then x³, then the tanh term
    inner *= x
    inner *= real(_TANH_CUBIC)
    inner += x
    inner *= real(_TANH_SCALE)  # √(2/π) (x + 0.044715 x³)
    np.tanh(inner, out=inner)
    inner += real(1.0)
    x *= real(0.5)
    x *= inner


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU in its tanh form (GPT-2's): ``x/2 * (1 + tanh(√(2/π) (x + 0.044715 x³)))``.

    Within 1e-3 of the exact ``x Φ(x)`` (NumPy has no ``erf``); float32 stays float32.

    Examples
    --------
    >>> gelu(np.array([-3.0, 0.0, 1.0, 3.0])).round(4)
    array([-0.0036,  0.    ,  0.8412,  2.9964])
    """
    work, shape = _as_fresh_float(x)
    return gelu_inplace(work).reshape(shape)


# Abramowitz & Stegun, Handbook of Mathematical Functions, formula 7.1.26: |error| < 1.5e-7 for x >= 0.
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, to within 1.5e-7 everywhere; float32 stays float32.

    NumPy has no ``erf``. This is a rational approximation in ``t = 1 / (1 + p|x|)`` times ``exp(-x²)``
    (Abramowitz & Stegun 7.1.26), made odd with the sign of ``x``: far below float32's resolution of
    a GELU output, and one ``exp`` per element instead of a Python call per element with ``math.erf``.

    Examples
    --------
    >>> erf(np.array([-1.0, 0.0, 0.5, 3.0])).round(6)
    array([-0.842701,  0.      ,  0.5205  ,  0.999978])
    """
    x = as_float_array(x, "x")  # integers become float64; booleans and complex numbers are refused
    shape = x.shape
    x = np.atleast_1d(x)  # 0-d ufunc results are scalars
    a = np.abs(x)
    t = _ERF_P * a  # Python floats keep x's dtype (NEP 50); in-place steps from here: few temporaries
    t += 1.0
    np.reciprocal(t, out=t)  # t = 1 / (1 + p|x|)
    a1, a2, a3, a4, a5 = _ERF_A
    poly = t * a5  # Horner: ((((a5 t + a4) t + a3) t + a2) t + a1) t
    for coefficient in (a4, a3, a2, a1):
        poly += coefficient
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)  # a = exp(-x²)
    poly *= a
    np.subtract(1.0, poly, out=poly)  # erf(|x|)
    return np.copysign(poly, x, out=poly).reshape(shape)


# Φ(x) = (1 + tanh(x R(x²))) / 2 holds for one smooth function R (atanh(2 Φ(x) - 1) is odd in x): the tanh
# GELU above takes R(s) = √(2/π) (1 + 0.044715 s), a first-degree polynomial. These are the seven
# coefficients of a sixth-degree R fitted to the exact function on |x| <= 6 (weighted minimax of the error in
# x Φ(x); tools/fit_gelu.py refits them). This R has no real root, so it stays positive however far out x
# lies: tanh goes to ±1 and x Φ(x) to x or 0, as it should. For |x| beyond about 1e4 (float32) R overflows
# to inf on the way (x² itself beyond 1.8e19), which gives the same limits and is not worth a warning.
_GELU_R = (0.7978848152106356, 0.036333795269348976, -3.338206418516515e-05, -5.501533639217162e-05,
           3.918269629898687e-06, -1.291972120539343e-07, 1.690774110576946e-09)


def gelu_exact_inplace(x: np.ndarray) -> np.ndarray:
    """:func:`gelu_exact` overwriting a float array ``x``; returns ``x``.

    Like :func:`gelu_inplace`, a large array goes through in cache-sized blocks over the package's threads.
    """
    return elementwise_inplace(_gelu_exact_chain, x)


@functools.lru_cache(maxsize=4)
def _gelu_coefficients(dtype: np.dtype) -> tuple:
    """R's coefficients as scalars of ``dtype``, highest first (one conversion per dtype, not per call)."""
    return tuple(dtype.type(c) for c in reversed(_GELU_R))


def _gelu_exact_chain(x: np.ndarray) -> None:
    real = x.dtype.type
    highest, *lower = _gelu_coefficients(x.dtype)
    with np.errstate(over="ignore"):  # x² or R(x²) = inf far out: the right limits (see _GELU_R)
        square = x * x  # the one other temporary is the polynomial
        poly = square * highest  # Horner in x²
        for coefficient in lower[:-1]:
            poly += coefficient
            poly *= square
        poly += lower[-1]
        poly *= x  # x R(x²)
    np.tanh(poly, out=poly)
    poly *= real(0.5)
    poly += real(0.5)  # Φ(x)
    x *= poly


def gelu_exact(x: np.ndarray) -> np.ndarray:
    """GELU as defined, ``x Φ(x) = x/2 * (1 + erf(x / √2))``: BERT's activation; float32 stays float32.

    Computed as the tanh form :func:`gelu` is, ``x/2 * (1 + tanh(x R(x²)))``, with a polynomial ``R`` of
    degree 6 in place of its degree 1: the error is below 7.1e-8 · max(1, |x|) (float64), under float32's
    own rounding of the result, for a cheap ``tanh`` and 17 passes of arithmetic.

    Examples
    --------
    >>> gelu_exact(np.array([-3.0, 0.0, 1.0, 3.0])).round(4)
    array([-0.004 ,  0.    ,  0.8413,  2.996 ])
    """
    work, shape = _as_fresh_float(x)
    return gelu_exact_inplace(work).reshape(shape)


#: Activations a :class:`FeedForward` accepts, by name. "gelu" is the tanh form (GPT-2), "gelu_exact"
#: the erf form (BERT). Each returns a new array and leaves its input alone.
ACTIVATIONS = {"gelu": gelu, "gelu_exact": gelu_exact, "relu": relu}
#: The same activations overwriting a float array they are given (and returning it): the layers apply
#: them to the hidden array they have just made, saving a copy and a pass.
INPLACE_ACTIVATIONS = {"gelu": gelu_inplace, "gelu_exact": gelu_exact_inplace, "relu": relu_inplace}


class FeedForward(Module):
    """The position-wise feed-forward network: ``act(x @ W_1 + b_1) @ W_2 + b_2``, token by token.

    Parameters
    ----------
    d_model : int
    d_ff : int
        Hidden width, usually ``4 * d_model``.
    activation : {"gelu", "gelu_exact", "relu"}, default "gelu"
    bias : bool, default True
    rng : numpy.random.Generator or int, optional
        Source of the Glorot-uniform initial weights.
    dtype : np.float32 or np.float64

    Attributes
    ----------
    W_1 : ndarray, shape (d_model, d_ff)
    b_1 : ndarray, shape (d_ff,) or None
    W_2 : ndarray, shape (d_ff, d_model)
    b_2 : ndarray, shape (d_model,) or None

    Examples
    --------
    >>> ffn = FeedForward(8, 32, rng=0)
    >>> ffn(np.ones((2, 5, 8))).shape
    (2, 5, 8)
    """

    W_1 = Parameter()
    b_1 = Parameter()
    W_2 = Parameter()
    b_2 = Parameter()

    def __init__(self, d_model: int, d_ff: int, *, activation: str = "gelu", bias: bool = True, rng=None,
                 dtype=np.float64):
        self.d_model = check_positive_int(d_model, "d_model")
        self.d_ff = check_positive_int(d_ff, "d_ff")
        if not isinstance(activation, str) or activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.activation = activation
        self.dtype = check_dtype_argument(dtype)
        rng = as_generator(rng)

        def glorot(fan_in, fan_out):
            return glorot_uniform(rng, fan_in, fan_out, self.dtype)

        zeros = (lambda n: np.zeros(n, dtype=self.dtype)) if bias else (lambda n: None)
        self._params = {"W_1": glorot(d_model, d_ff), "b_1": zeros(d_ff),
                        "W_2": glorot(d_ff, d_model), "b_2": zeros(d_model)}

    def __call__(self, x) -> np.ndarray:
        """Apply the network to every token of ``x``, shape ``(..., d_model)``."""
        x = promote(check_features(x, "x", self.d_model), self.dtype)
        hidden = linear(x, self.W_1, self.b_1)  # (..., d_ff), a fresh array: activated in place
        return linear(INPLACE_ACTIVATIONS[self.activation](hidden), self.W_2, self.b_2)  # (..., d_model)

    def __repr__(self) -> str:
        return (f"FeedForward({self.d_model}, {self.d_ff}, activation={self.activation!r}, "
                f"dtype={self.dtype.name})")
