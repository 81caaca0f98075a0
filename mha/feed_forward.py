"""The position-wise feed-forward network of a transformer block, and its activations.

``FeedForward(x) = act(x @ W_1 + b_1) @ W_2 + b_2``, applied to every token on its own. The activations
are ReLU (the 2017 paper's) and GELU, in the tanh form GPT-2 uses and in its exact form ``x Φ(x)`` that
BERT uses, computed with one approximation of ``erf`` (Abramowitz & Stegun 7.1.26), forward and backward.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from mha.module import Module, Parameter, glorot_uniform, linear
from mha.typing import ArrayLike, DTypeLike, FloatArray, Seed
from mha.validation import (
    as_float_array,
    as_generator,
    check_dtype_argument,
    check_features,
    check_positive_int,
    promote,
)

__all__ = ["relu", "gelu", "erf", "gelu_exact", "ACTIVATIONS", "FeedForward", "FeedForwardCache"]


def relu(x: ArrayLike) -> FloatArray:
    """``max(0, x)``, element-wise.

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    ndarray, the shape of ``x``; float32 stays float32, integers become float64

    Raises
    ------
    TypeError
        ``x`` is not real numbers (booleans, complex numbers, strings).

    Examples
    --------
    >>> relu(np.array([-1.0, 0.5]))
    array([0. , 0.5])
    """
    x = as_float_array(x, "x")  # integers become float64, as every activation here returns floats
    return np.maximum(x, 0)


def gelu(x: ArrayLike) -> FloatArray:
    """GELU in its tanh form (GPT-2's): ``x/2 * (1 + tanh(√(2/π) (x + 0.044715 x³)))``.

    Within 5e-4 of the exact :func:`gelu_exact`.

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    ndarray, the shape of ``x``; float32 stays float32, integers become float64

    Raises
    ------
    TypeError
        ``x`` is not real numbers (booleans, complex numbers, strings).

    Examples
    --------
    >>> gelu(np.array([-3.0, 0.0, 1.0, 3.0])).round(4)
    array([-0.0036,  0.    ,  0.8412,  2.9964])
    """
    x = as_float_array(x, "x")
    with np.errstate(over="ignore"):  # x³ = inf far out: tanh(±inf) = ±1, the right limits
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + np.tanh(inner))


# Abramowitz & Stegun, Handbook of Mathematical Functions, formula 7.1.26: |error| < 1.5e-7 for every x.
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def erf(x: ArrayLike) -> FloatArray:
    """The error function to within 1.5e-7 everywhere (NumPy has none); float32 stays float32.

    A rational function of ``t = 1 / (1 + p|x|)`` times ``exp(-x²)``, made odd with the sign of ``x``
    (Abramowitz & Stegun 7.1.26): below float32's resolution of a GELU output, one ``exp`` per element.

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    ndarray, the shape of ``x``; float32 stays float32, integers become float64

    Raises
    ------
    TypeError
        ``x`` is not real numbers (booleans, complex numbers, strings).

    Examples
    --------
    >>> erf(np.array([-1.0, 0.0, 0.5, 3.0])).round(6)
    array([-0.842701,  0.      ,  0.5205  ,  0.999978])
    """
    x = as_float_array(x, "x")  # integers become float64; booleans and complex numbers are refused
    t = 1.0 / (1.0 + _ERF_P * np.abs(x))  # Python floats keep x's dtype (NEP 50)
    a1, a2, a3, a4, a5 = _ERF_A
    polynomial = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5))))  # Horner's rule
    with np.errstate(over="ignore"):  # x² = inf far out: exp(-inf) = 0, the right limit
        return np.sign(x) * (1.0 - polynomial * np.exp(-x * x))


def gelu_exact(x: ArrayLike) -> FloatArray:
    """GELU as defined, ``x Φ(x) = x/2 * (1 + erf(x / √2))``: BERT's activation; float32 stays float32.

    With :func:`erf` to within 1.5e-7, the result is within ``7.5e-8 · |x|`` of the exact function.

    Parameters
    ----------
    x : array_like, any shape

    Returns
    -------
    ndarray, the shape of ``x``; float32 stays float32, integers become float64

    Raises
    ------
    TypeError
        ``x`` is not real numbers (booleans, complex numbers, strings).

    Examples
    --------
    >>> gelu_exact(np.array([-3.0, 0.0, 1.0, 3.0])).round(4)
    array([-0.004 ,  0.    ,  0.8413,  2.996 ])
    """
    x = as_float_array(x, "x")
    return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))


#: Activations a :class:`FeedForward` accepts, by name: "gelu" is the tanh form (GPT-2), "gelu_exact"
#: the erf form (BERT). Their derivatives are :func:`mha.grad.activation_backward`.
ACTIVATIONS: dict[str, Callable[[ArrayLike], FloatArray]] = {
    "gelu": gelu, "gelu_exact": gelu_exact, "relu": relu}


class FeedForwardCache(NamedTuple):
    """What :func:`mha.grad.feed_forward_backward` needs from a forward pass.

    Parameters
    ----------
    ffn : FeedForward
    x : ndarray, shape (..., d_model)
        The input.
    hidden, activated : ndarray, shape (..., d_ff)
        The hidden layer before and after the activation.

    Examples
    --------
    >>> _, cache = FeedForward(4, 16, activation="relu", rng=0).forward(np.ones((2, 4)))
    >>> cache.hidden.shape, bool((cache.activated >= 0).all())
    ((2, 16), True)
    """

    ffn: FeedForward
    x: FloatArray
    hidden: FloatArray
    activated: FloatArray


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

    Raises
    ------
    ValueError
        A width below 1, or an unknown ``activation``.
    TypeError
        A width that is not an integer, a ``dtype`` other than float32 or float64, or a bad ``rng``.

    Examples
    --------
    >>> ffn = FeedForward(8, 32, rng=0)
    >>> ffn(np.ones((2, 5, 8))).shape
    (2, 5, 8)
    """

    W_1: Parameter[FloatArray] = Parameter()
    b_1: Parameter[FloatArray | None] = Parameter()
    W_2: Parameter[FloatArray] = Parameter()
    b_2: Parameter[FloatArray | None] = Parameter()

    def __init__(self, d_model: int, d_ff: int, *, activation: str = "gelu", bias: bool = True,
                 rng: Seed = None, dtype: DTypeLike = np.float64) -> None:
        self.d_model = check_positive_int(d_model, "d_model")
        self.d_ff = check_positive_int(d_ff, "d_ff")
        if not isinstance(activation, str) or activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.activation = activation
        self.dtype = check_dtype_argument(dtype)
        rng = as_generator(rng)

        def glorot(fan_in: int, fan_out: int) -> FloatArray:
            return glorot_uniform(rng, fan_in, fan_out, self.dtype)

        def zeros(n: int) -> FloatArray | None:
            return np.zeros(n, dtype=self.dtype) if bias else None

        self._params = {"W_1": glorot(d_model, d_ff), "b_1": zeros(d_ff),
                        "W_2": glorot(d_ff, d_model), "b_2": zeros(d_model)}

    def __call__(self, x: ArrayLike) -> FloatArray:
        """Apply the network to every token of ``x``, each on its own.

        Parameters
        ----------
        x : array_like, shape (..., d_model)

        Returns
        -------
        ndarray, the shape of ``x``

        Raises
        ------
        ValueError
            ``x``'s last axis is not ``d_model``, or ``x`` holds NaN or infinities.
        TypeError
            ``x`` is not real numbers.

        Examples
        --------
        >>> ffn = FeedForward(4, 16, rng=0)
        >>> x = np.ones((2, 3, 4))
        >>> bool(np.allclose(ffn(x)[0, 0], ffn(x[0, 0])))  # token by token
        True
        """
        return self.forward(x)[0]

    def forward(self, x: ArrayLike) -> tuple[FloatArray, FeedForwardCache]:
        """The output and what the backward pass needs (:func:`mha.grad.feed_forward_backward`).

        Parameters
        ----------
        x : array_like, shape (..., d_model)

        Returns
        -------
        output : ndarray, shape (..., d_model)
        cache : FeedForwardCache

        Raises
        ------
        ValueError
            ``x``'s last axis is not ``d_model``, or ``x`` holds NaN or infinities.
        TypeError
            ``x`` is not real numbers.

        Examples
        --------
        >>> ffn = FeedForward(4, 16, rng=0)
        >>> out, cache = ffn.forward(np.ones((3, 4)))
        >>> out.shape, cache.hidden.shape
        ((3, 4), (3, 16))
        """
        return self._forward(promote(check_features(x, "x", self.d_model), self.dtype))

    def _forward(self, x: FloatArray) -> tuple[FloatArray, FeedForwardCache]:
        """:meth:`forward` on checked input (the blocks check theirs once)."""
        hidden = linear(x, self.W_1, self.b_1)  # (..., d_ff)
        activated = ACTIVATIONS[self.activation](hidden)  # (..., d_ff)
        out = linear(activated, self.W_2, self.b_2)  # (..., d_model)
        return out, FeedForwardCache(self, x, hidden, activated)

    def __repr__(self) -> str:
        return (f"FeedForward({self.d_model}, {self.d_ff}, activation={self.activation!r}, "
                f"dtype={self.dtype.name})")
