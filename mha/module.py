"""What every layer shares: a base class, the weight attribute, the initialiser and the affine map.

:class:`Module` gives a layer its named ``parameters()``, their count and a ``copy()``; :class:`Parameter`
is the attribute that checks a weight's shape when it is assigned; :func:`glorot_uniform` draws initial
weights; :func:`linear` is the ``x @ W + b`` that every projection in the package is. Build your own layers
on them (the course's lab does) and they behave like the package's.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Generic, Self, TypeVar, cast, overload

import numpy as np

from mha.typing import ArrayLike, DTypeLike, FloatArray
from mha.validation import as_float_array, cast_finite, check_finite

__all__ = ["Module", "Parameter", "glorot_uniform", "linear"]


class Module:
    """Base of the package's layers: ``parameters()``, ``parameter_count()`` and ``copy()``, written once.

    A layer keeps its own arrays in ``self._params`` (``None`` for an absent bias) and names its
    sub-layers in :meth:`submodules`; ``parameters()`` walks both, prefixing a sub-layer's names with
    ``"<part>."``.

    Examples
    --------
    >>> class Scale(Module):  # a layer of one learned vector
    ...     w = Parameter()
    ...     def __init__(self, width):
    ...         self._params = {"w": np.ones(width)}
    >>> layer = Scale(3)
    >>> layer.w = [1.0, 2.0, 3.0]  # checked, then copied into the layer's own array
    >>> layer.parameters()["w"], layer.parameter_count()
    (array([1., 2., 3.]), 3)
    """

    _params: Mapping[str, FloatArray | None]

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        if name == "_params":  # each Parameter reads its array as a plain attribute (no Python call)
            for key, array in cast("Mapping[str, FloatArray | None]", value).items():
                if isinstance(getattr(type(self), key, None), Parameter):
                    self.__dict__[key] = array

    def submodules(self) -> dict[str, Module]:
        """The layers inside this one, by name (none by default).

        Returns
        -------
        dict of str to Module

        Examples
        --------
        >>> from mha import TransformerBlock
        >>> list(TransformerBlock(8, 2, rng=0).submodules())
        ['attention', 'ffn', 'norm1', 'norm2']
        """
        return {}

    def parameters(self) -> dict[str, FloatArray]:
        """Every learned array by name. The arrays are the layer's own: editing one edits the layer.

        Returns
        -------
        dict of str to ndarray
            A sub-layer's arrays are named ``"<part>.<array>"``; an absent bias is left out.

        Examples
        --------
        >>> from mha import MultiHeadAttention
        >>> {name: w.shape for name, w in MultiHeadAttention(8, 2, bias=False, rng=0).parameters().items()}
        {'W_q': (8, 8), 'W_k': (8, 8), 'W_v': (8, 8), 'W_o': (8, 8)}
        """
        params = {name: arr for name, arr in getattr(self, "_params", {}).items() if arr is not None}
        for part, module in self.submodules().items():
            params.update({f"{part}.{name}": arr for name, arr in module.parameters().items()})
        return params

    def parameter_count(self) -> int:
        """Number of learned numbers.

        Returns
        -------
        int

        Examples
        --------
        >>> from mha import MultiHeadAttention
        >>> MultiHeadAttention(8, 2, rng=0).parameter_count()  # 4 * 8 * 8 weights + 4 * 8 biases
        288
        """
        return sum(arr.size for arr in self.parameters().values())

    def copy(self) -> Self:
        """An independent copy: the same weights in arrays of its own (training one leaves the other).

        Returns
        -------
        Module
            Of the same class.

        Examples
        --------
        >>> from mha import MultiHeadAttention
        >>> layer = MultiHeadAttention(8, 2, rng=0)
        >>> twin = layer.copy()
        >>> twin.W_q[0, 0] = 5.0
        >>> bool(layer.W_q[0, 0] == 5.0), bool(np.array_equal(layer.W_k, twin.W_k))
        (False, True)
        """
        return copy.deepcopy(self)


_Value = TypeVar("_Value", bound="FloatArray | None")


class Parameter(Generic[_Value]):
    """A weight attribute whose assignment copies into the layer's storage after a shape check.

    Assigning (``layer.W_q = new``) writes into the existing array, so views such as the fused
    ``[W_q | W_k | W_v]`` matrix stay in sync; in-place edits (``layer.W_q[0, 0] = 1``) work the same way.
    A weight is declared ``W: Parameter[FloatArray] = Parameter()``, a bias the layer may be built without
    ``b: Parameter[FloatArray | None] = Parameter()``. Reading ``layer.W_q`` is a plain attribute lookup:
    :class:`Module` keeps each array of ``_params`` under its name too, so a forward pass a debugger steps
    through makes no call to read its weights.

    Examples
    --------
    >>> from mha import MultiHeadAttention
    >>> layer = MultiHeadAttention(8, 2, rng=0)
    >>> layer.W_q = np.eye(8)  # written into the fused [W_q | W_k | W_v] block
    >>> bool(np.array_equal(layer._W_qkv[:, :8], np.eye(8)))
    True
    >>> layer.W_q = np.eye(4)
    Traceback (most recent call last):
    ...
    ValueError: W_q must have shape (8, 8), got (4, 4)
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    if TYPE_CHECKING:  # for type checkers only: at run time the array is read from the instance itself
        @overload
        def __get__(self, layer: None, owner: type | None = None) -> Parameter[_Value]: ...
        @overload
        def __get__(self, layer: Module, owner: type | None = None) -> _Value: ...
        def __get__(self, layer: Module | None, owner: type | None = None) -> Parameter[_Value] | _Value: ...

    def __set__(self, layer: Module, value: ArrayLike | None) -> None:
        target = layer._params[self.name]
        if target is None:
            if value is None:
                return
            raise ValueError(f"{self.name} does not exist: the layer was built without it (bias=False, or "
                             "without the option that adds it, such as qk_norm=True)")
        if value is None:
            raise TypeError(f"{self.name} must be an array of shape {target.shape}, got None")
        array = as_float_array(value, self.name)
        if array.shape != target.shape:
            raise ValueError(f"{self.name} must have shape {target.shape}, got {array.shape}")
        check_finite(array, self.name)
        target[...] = cast_finite(array, target.dtype, f"{self.name} (as the layer's {target.dtype})")


def linear(x: FloatArray, W: FloatArray, b: FloatArray | None = None) -> FloatArray:
    """The affine map ``x @ W + b`` of every token: ``(..., d_in)`` to ``(..., d_out)``.

    Parameters
    ----------
    x : ndarray, shape (..., d_in)
    W : ndarray, shape (d_in, d_out)
        Weights multiply on the right, as the course writes them.
    b : ndarray, shape (d_out,), optional

    Returns
    -------
    ndarray, shape (..., d_out)

    Examples
    --------
    >>> linear(np.ones((2, 3, 4)), np.ones((4, 5)), np.arange(5.0))[0, 0]
    array([4., 5., 6., 7., 8.])
    """
    # NumPy multiplies a stack (batch, seq, d_in) @ (d_in, d_out) as `batch` separate products; one
    # (batch * seq, d_in) matrix is a single, faster BLAS call with the same numbers.
    y = (x.reshape(-1, x.shape[-1]) @ W).reshape(*x.shape[:-1], W.shape[-1])  # (..., d_out)
    if b is not None:
        y += b
    return y


def glorot_uniform(rng: np.random.Generator, fan_in: int, fan_out: int, dtype: DTypeLike) -> FloatArray:
    """A (fan_in, fan_out) weight drawn uniformly from ±√(6 / (fan_in + fan_out)) (Glorot/Xavier).

    The bound keeps the variance of activations roughly constant through the layer, forward and backward.

    Parameters
    ----------
    rng : numpy.random.Generator
    fan_in, fan_out : int
        The weight's input and output widths.
    dtype : numpy dtype
        Drawn in float64, then cast.

    Returns
    -------
    ndarray, shape (fan_in, fan_out)

    Examples
    --------
    >>> W = glorot_uniform(np.random.default_rng(0), 4, 8, np.float32)
    >>> W.shape, W.dtype, bool(np.abs(W).max() <= math.sqrt(6 / 12))
    ((4, 8), dtype('float32'), True)
    """
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(dtype)
