"""Input checks shared by the package's public functions, and by code built on it.

Every public entry point validates its arguments once, with these helpers, and raises an error a learner
can act on: it names the argument, what was expected and what arrived. They are public so that code built
on the package (the course's lab, its plots, your own layers) refuses bad input the same way.

>>> check_positive_int(8, "n_heads")
8
>>> check_positive_int(0, "n_heads")
Traceback (most recent call last):
...
ValueError: n_heads must be >= 1, got 0
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any, Protocol, SupportsIndex, TypeVar, cast

import numpy as np

from mha.typing import ArrayLike, BoolArray, DTypeLike, FloatArray, Seed

FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))

_Array = TypeVar("_Array", bound="np.ndarray[Any, Any]")


class AttentionWidths(Protocol):
    """What :func:`check_layer_inputs` reads from a layer: its widths, whether it is fused, its dtype.

    Parameters
    ----------
    *args, **kwargs
        Refused: a protocol describes other classes (:class:`mha.MultiHeadAttention` is one).

    Raises
    ------
    TypeError
        On any attempt to instantiate the protocol itself.

    Examples
    --------
    >>> from mha import MultiHeadAttention
    >>> layer: AttentionWidths = MultiHeadAttention(8, 2, kdim=6, rng=0)
    >>> layer.d_model, layer.kdim, layer.vdim, layer.fused
    (8, 6, 8, False)
    """

    @property
    def d_model(self) -> int: """Width of the queries and of the output."""
    @property
    def kdim(self) -> int: """Width of the key input."""
    @property
    def vdim(self) -> int: """Width of the value input."""
    @property
    def fused(self) -> bool: """True when ``kdim == vdim == d_model``: it can attend to its own input."""
    @property
    def dtype(self) -> np.dtype[np.floating[Any]]: """The weights' dtype, float32 or float64."""


def as_float_array(x: ArrayLike, name: str) -> FloatArray:
    """Return ``x`` as a floating-point ndarray without copying when it already is one.

    Integer arrays become float64 (like NumPy's true division); anything else that is not a real number
    (bool, complex, strings, objects, ragged lists) is refused.

    Parameters
    ----------
    x : array_like
    name : str
        What the error message calls ``x``.

    Returns
    -------
    ndarray
        ``x`` itself when it is a float16, float32 or float64 array; a float64 copy of integers.

    Raises
    ------
    TypeError
        ``x`` is ragged, holds booleans, complex numbers, strings or objects, or is a long double.

    Examples
    --------
    >>> as_float_array([1, 2], "x").dtype
    dtype('float64')
    """
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested lists
        raise TypeError(f"{name} must be a rectangular numeric array; NumPy said: {exc}") from None
    kind = arr.dtype.kind
    if kind == "f":
        if arr.dtype.itemsize > 8:  # long double: NumPy's finfo and BLAS do not serve it alike
            raise TypeError(f"{name} must be float16, float32 or float64, got {arr.dtype}: "
                            f"convert it with .astype(np.float64)")
        return arr
    if kind in "iu":
        return arr.astype(np.float64)
    what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes", "O": "Python objects"}
    got = what.get(kind, f"dtype {arr.dtype}")
    raise TypeError(f"{name} must be a real floating-point array, got {got} (dtype {arr.dtype})")


def check_finite(arr: FloatArray, name: str, *, allow_neg_inf: bool = False) -> None:
    """Raise ``ValueError`` if ``arr`` holds NaN or infinities (``-inf`` optionally allowed).

    Parameters
    ----------
    arr : ndarray of float
    name : str
        What the error message calls ``arr``.
    allow_neg_inf : bool, default False
        Accept ``-inf`` (a masked score); NaN and ``+inf`` are still refused.

    Raises
    ------
    ValueError
        ``arr`` holds NaN or infinities the call does not allow; the message counts each.

    Examples
    --------
    >>> check_finite(np.array([0.0, -np.inf]), "bias", allow_neg_inf=True)  # passes: returns None
    """
    if allow_neg_inf:
        bad = bool(np.isnan(arr).any() or np.isposinf(arr).any())
        allowed = "finite values or -inf"
    else:
        bad = not bool(np.isfinite(arr).all())
        allowed = "finite values"
    if bad:
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(f"{name} must hold {allowed}, got {n_nan} NaN and {n_inf} infinite entries")


def cast_finite(arr: FloatArray, dtype: DTypeLike, name: str, *, allow_neg_inf: bool = False) -> FloatArray:
    """``arr`` in ``dtype``; a narrowing cast that makes values infinite (a float64 1e39 in float32) is
    refused, naming ``name``. ``arr`` itself is expected checked already.

    Parameters
    ----------
    arr : ndarray of float
    dtype : data-type
    name : str
        What the error message calls ``arr``.
    allow_neg_inf : bool, default False
        Accept ``-inf`` in the result.

    Returns
    -------
    ndarray
        ``arr`` itself when no cast is needed.

    Raises
    ------
    ValueError
        The cast to a narrower dtype overflows some value to infinity.

    Examples
    --------
    >>> cast_finite(np.array([1.0, -2.5]), np.float32, "bias")
    array([ 1. , -2.5], dtype=float32)
    """
    dtype = np.dtype(dtype)
    if arr.dtype.itemsize <= dtype.itemsize:
        return arr.astype(dtype, copy=False)
    with np.errstate(over="ignore"):
        cast = arr.astype(dtype)
    check_finite(cast, name, allow_neg_inf=allow_neg_inf)
    return cast


def check_score_maxima(row_max: FloatArray) -> None:
    """Raise ``ValueError`` if a row of attention scores peaks at ``+inf`` or NaN: ``q · k`` overflowed.

    Finite inputs can still do it: float32 queries and keys of about 1e20 give products beyond float32's
    largest number, and a softmax of them would be NaN everywhere. The softmax computes each row's maximum
    anyway, so the check costs a comparison per row, not a pass over the scores.

    Parameters
    ----------
    row_max : ndarray of float
        Each row's largest score; ``-inf`` (a fully masked row) is fine.

    Raises
    ------
    ValueError
        Some maximum is ``+inf`` or NaN.

    Examples
    --------
    >>> check_score_maxima(np.array([[3.0], [-np.inf]]))  # passes: returns None
    """
    if not (row_max < np.inf).all():  # False for +inf and NaN; -inf (a fully masked row) is fine
        info = np.finfo(row_max.dtype)
        wider = ", or compute in float64" if row_max.dtype != np.float64 else ""
        raise ValueError(f"attention scores overflowed {row_max.dtype}: some q · k is inf or NaN, beyond the "
                         f"largest {row_max.dtype} ({info.max:.2e}). Scale the queries and keys down (or the "
                         f"inputs and weights that make them){wider}.")


def check_ndim(arr: np.ndarray[Any, Any], name: str, *, min_ndim: int, shape_hint: str) -> None:
    """Raise ``ValueError`` unless ``arr`` has at least ``min_ndim`` dimensions.

    Parameters
    ----------
    arr : ndarray
    name : str
        What the error message calls ``arr``.
    min_ndim : int
    shape_hint : str
        The shape expected, as the message shows it, e.g. ``"(..., seq_q, d_head)"``.

    Raises
    ------
    ValueError
        ``arr.ndim < min_ndim``.

    Examples
    --------
    >>> check_ndim(np.ones(4), "q", min_ndim=2, shape_hint="(..., seq_q, d_head)")
    Traceback (most recent call last):
    ValueError: q must have shape (..., seq_q, d_head), got shape (4,)
    """
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have shape {shape_hint}, got shape {arr.shape}")


def check_flag(value: object, name: str) -> bool:
    """``value`` as a bool, refusing anything else: ``causal="no"`` would otherwise count as True.

    Parameters
    ----------
    value : object
    name : str
        What the error message calls ``value``.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        ``value`` is not a bool (Python's or NumPy's), e.g. ``1`` or ``"no"``.

    Examples
    --------
    >>> check_flag(np.True_, "causal")
    True
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def is_int(value: object) -> bool:
    """Whether ``value`` is an integer (Python's or NumPy's), not a bool and not a float like 2.0.

    Parameters
    ----------
    value : object

    Returns
    -------
    bool

    Examples
    --------
    >>> is_int(3), is_int(np.int64(3)), is_int(True), is_int(2.0)
    (True, True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(value: object, name: str) -> int:
    """Return ``value`` as a Python int, or raise ``TypeError`` if it is not an integer (1.7 is no index).

    Parameters
    ----------
    value : object
    name : str
        What the error message calls ``value``.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        ``value`` is not an integer: a float (even 2.0), a bool, a string.

    Examples
    --------
    >>> check_int(np.int32(4), "seq_len")
    4
    """
    if not is_int(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    return operator.index(cast(SupportsIndex, value))


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= ``minimum``.

    Parameters
    ----------
    value : object
    name : str
        What the error message calls ``value``.
    minimum : int, default 1

    Returns
    -------
    int

    Raises
    ------
    TypeError
        ``value`` is not an integer.
    ValueError
        ``value < minimum``.

    Examples
    --------
    >>> check_positive_int(0, "seq_len", minimum=0)
    0
    """
    if type(value) is int and value >= minimum:  # the usual case, settled without another call
        return value
    value = check_int(value, name)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_positive_real(value: object, name: str) -> float:
    """Return ``value`` as a float, or raise unless it is a finite real number > 0 (a bool is refused).

    Parameters
    ----------
    value : object
    name : str
        What the error message calls ``value``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``value`` is not a real number, is a bool, is not finite or is not > 0.

    Examples
    --------
    >>> check_positive_real(50, "softcap")
    50.0
    >>> check_positive_real(float("inf"), "softcap")
    Traceback (most recent call last):
    ...
    ValueError: softcap must be a finite number > 0, got inf
    """
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number > 0:
            return number
    raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def check_bool_mask(mask: ArrayLike, name: str = "mask") -> BoolArray:
    """Return ``mask`` as a boolean array, refusing 0/1 or additive float masks.

    Float masks are refused on purpose: their polarity is ambiguous (1 = keep? 1 = block?) and additive
    ``-1e9`` masks turn a fully masked row into uniform attention over padding.

    Parameters
    ----------
    mask : array_like of bool
    name : str, default "mask"
        What the error message calls ``mask``.

    Returns
    -------
    ndarray of bool

    Raises
    ------
    TypeError
        ``mask`` is not boolean (0/1 integers, a float mask).

    Examples
    --------
    >>> check_bool_mask([[True, False]]).dtype
    dtype('bool')
    """
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise TypeError(
            f"{name} must be a boolean array (True = may attend), got dtype {arr.dtype}; "
            f"convert a 0/1 mask with `{name}.astype(bool)` after checking its polarity"
        )
    return arr


def check_broadcastable(arr: _Array, target_shape: tuple[int, ...], name: str = "mask") -> _Array:
    """Return ``arr`` unchanged if it broadcasts to ``target_shape`` without growing it, else raise.

    The array itself is returned, not a broadcast view, so that callers can negate or cast the small
    original instead of materialising the full (..., seq_q, seq_k) shape.

    Parameters
    ----------
    arr : ndarray
    target_shape : tuple of int
        The scores' shape, e.g. ``(batch, n_heads, seq_q, seq_k)``.
    name : str, default "mask"
        What the error message calls ``arr``.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        ``arr`` does not broadcast to ``target_shape``, or would grow it.

    Examples
    --------
    >>> check_broadcastable(np.ones((3, 5), dtype=bool), (2, 4, 3, 5)).shape
    (3, 5)
    """
    try:
        ok = np.broadcast_shapes(arr.shape, target_shape) == tuple(target_shape)
    except ValueError:
        ok = False
    if not ok:
        target = tuple(target_shape)
        heads = len(target) == 4 and arr.ndim == 3 and arr.shape[0] in (1, target[0]) \
            and arr.shape[1:] == target[2:]
        hint = f": a (batch, seq_q, seq_k) {name} needs an axis for the heads, {name}[:, None]" \
            if heads else ""
        raise ValueError(f"{name} of shape {arr.shape} cannot be broadcast to the scores' shape {target} "
                         f"(..., seq_q, seq_k){hint}")
    return arr


def check_score_bias(bias: ArrayLike | None, scores_shape: tuple[int, ...], dtype: DTypeLike
                     ) -> FloatArray | None:
    """Validate an additive score bias (finite or -inf, broadcastable, at most 4-D) and cast it.

    Parameters
    ----------
    bias : array_like of float, or None
    scores_shape : tuple of int
        The scores' shape, e.g. ``(batch, n_heads, seq_q, seq_k)``.
    dtype : data-type
        The dtype of the scores.

    Returns
    -------
    ndarray or None
        ``bias`` in ``dtype``; None when ``bias`` is None.

    Raises
    ------
    ValueError
        NaN or ``+inf``, a shape that does not broadcast to ``scores_shape`` or has more dimensions, or
        values that overflow ``dtype``.
    TypeError
        ``bias`` is not an array of real numbers.

    Examples
    --------
    >>> check_score_bias([[0.0, -np.inf]], (1, 2, 1, 2), np.float32).dtype
    dtype('float32')
    """
    if bias is None:
        return None
    bias = as_float_array(bias, "bias")
    check_finite(bias, "bias", allow_neg_inf=True)
    check_broadcastable(bias, scores_shape, name="bias")
    if bias.ndim > len(scores_shape):
        raise ValueError(f"bias must have at most {len(scores_shape)} dimensions, got shape {bias.shape}")
    return cast_finite(bias, dtype, f"bias (as {np.dtype(dtype)})", allow_neg_inf=True)


def check_features(x: ArrayLike, name: str, d_model: int) -> FloatArray:
    """``x`` as a float array of shape ``(..., d_model)`` with finite entries, or a clear error.

    Parameters
    ----------
    x : array_like, shape (..., d_model)
    name : str
        What the error message calls ``x``.
    d_model : int

    Returns
    -------
    ndarray, shape (..., d_model)

    Raises
    ------
    ValueError
        A last axis other than ``d_model``, a scalar, NaN or infinities.
    TypeError
        ``x`` is not an array of real numbers.

    Examples
    --------
    >>> check_features([[1, 2]], "x", 2)
    array([[1., 2.]])
    """
    x = as_float_array(x, name)
    if x.ndim < 1 or x.shape[-1] != d_model:
        raise ValueError(f"{name} must have shape (..., {d_model}), got {x.shape}")
    check_finite(x, name)
    return x


def promote(x: FloatArray, dtype: DTypeLike) -> FloatArray:
    """``x`` in NumPy's promotion of its dtype with ``dtype``: float32 input and weights stay float32.

    Parameters
    ----------
    x : ndarray of float
    dtype : data-type

    Returns
    -------
    ndarray
        ``x`` itself when it has the promoted dtype already.

    Examples
    --------
    >>> promote(np.ones(2, dtype=np.float32), np.float32).dtype, promote(np.ones(2), np.float32).dtype
    (dtype('float32'), dtype('float64'))
    """
    return x.astype(np.result_type(x, dtype), copy=False)


def check_attention_mask(mask: ArrayLike | None, scores_shape: tuple[int, ...]) -> BoolArray | None:
    """``mask`` as a boolean array broadcastable to ``scores_shape`` with at most 4 dimensions, or None.

    Parameters
    ----------
    mask : array_like of bool, or None
    scores_shape : tuple of int
        The scores' shape, ``(batch, n_heads, seq_q, seq_k)``.

    Returns
    -------
    ndarray of bool or None
        ``mask`` itself, not broadcast.

    Raises
    ------
    TypeError
        ``mask`` is not boolean.
    ValueError
        ``mask`` does not broadcast to ``scores_shape`` or has more than 4 dimensions.

    Examples
    --------
    >>> check_attention_mask(np.tril(np.ones((3, 3), dtype=bool)), (2, 4, 3, 3)).shape
    (3, 3)
    """
    if mask is None:
        return None
    mask = check_broadcastable(check_bool_mask(mask), scores_shape)
    if mask.ndim > 4:
        raise ValueError(f"mask must have at most 4 dimensions, got shape {mask.shape}")
    return mask


def check_head_mask(head_mask: ArrayLike | None, n_heads: int, dtype: DTypeLike) -> FloatArray | None:
    """``head_mask`` as a finite ``(n_heads,)`` array of ``dtype``, or None.

    Parameters
    ----------
    head_mask : array_like, shape (n_heads,), or None
    n_heads : int
    dtype : data-type

    Returns
    -------
    ndarray, shape (n_heads,), or None

    Raises
    ------
    ValueError
        A shape other than ``(n_heads,)``, NaN or infinities.
    TypeError
        ``head_mask`` is not an array of real numbers.

    Examples
    --------
    >>> check_head_mask([1, 0], 2, np.float32)
    array([1., 0.], dtype=float32)
    """
    if head_mask is None:
        return None
    head_mask = as_float_array(head_mask, "head_mask")
    if head_mask.shape != (n_heads,):
        raise ValueError(f"head_mask must have shape (n_heads,) = ({n_heads},), got {head_mask.shape}")
    check_finite(head_mask, "head_mask")
    return head_mask.astype(dtype, copy=False)


def result_float_dtype(*arrays: FloatArray) -> np.dtype[np.floating[Any]]:
    """The floating dtype NumPy would compute in for these arrays (float32 stays float32).

    Parameters
    ----------
    *arrays : ndarray of float

    Returns
    -------
    numpy.dtype

    Examples
    --------
    >>> result_float_dtype(np.ones(2, dtype=np.float32), np.ones(2))
    dtype('float64')
    """
    return np.result_type(*arrays)


def check_dtype_argument(dtype: DTypeLike) -> np.dtype[np.floating[Any]]:
    """Validate a ``dtype=`` argument: float32 or float64 (float16 is too coarse to learn with).

    Parameters
    ----------
    dtype : data-type

    Returns
    -------
    numpy.dtype

    Raises
    ------
    TypeError
        ``dtype`` is not a dtype, or is one other than float32 and float64.

    Examples
    --------
    >>> check_dtype_argument("float32")
    dtype('float32')
    """
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dtype!r}") from None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dt}")
    return cast("np.dtype[np.floating[Any]]", dt)


def as_generator(rng: Seed) -> np.random.Generator:
    """Accept a ``numpy.random.Generator``, an integer seed, or None (fresh, unseeded entropy).

    Parameters
    ----------
    rng : numpy.random.Generator, int or None

    Returns
    -------
    numpy.random.Generator
        ``rng`` itself when it is one.

    Raises
    ------
    TypeError
        ``rng`` is anything else (a bool, a float, a legacy ``RandomState``).

    Examples
    --------
    >>> float(as_generator(0).random()) == float(np.random.default_rng(0).random())
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(
        f"rng must be a numpy.random.Generator, an integer seed or None, got {type(rng).__name__}"
    )


def check_layer_inputs(layer: AttentionWidths, query: ArrayLike, key: ArrayLike | None,
                       value: ArrayLike | None
                       ) -> tuple[FloatArray, FloatArray | None, FloatArray | None, bool]:
    """Validate an attention layer's inputs: ``(query, key, value, unbatched)``, batched and promoted.

    Parameters
    ----------
    layer : AttentionWidths
        Tells the widths (``d_model``, ``kdim``, ``vdim``), whether it can attend to its own input
        (``fused``: ``kdim == vdim == d_model``) and its ``dtype``.
    query : array_like, shape (batch, seq_q, d_model) or (seq_q, d_model)
    key, value : array_like, shapes (batch, seq_k, kdim) and (batch, seq_k, vdim) or unbatched, or None
        None for self-attention; ``value`` None reuses ``key``.

    Returns
    -------
    query, key, value : ndarray, batched and in one dtype, or None
        ``key`` and ``value`` come back None for self-attention.
    unbatched : bool
        The inputs were ``(seq, dim)`` and got a batch axis of 1.

    Raises
    ------
    ValueError
        ``value`` without ``key``, no ``key`` for a layer that is not fused, a shape or width that does not
        fit, NaN or infinities, inputs batched and unbatched at once, or batches that differ.
    TypeError
        An input that is not an array of real numbers.

    Examples
    --------
    >>> from mha import MultiHeadAttention
    >>> q, k, v, unbatched = check_layer_inputs(MultiHeadAttention(8, 2, rng=0), np.ones((3, 8)), None, None)
    >>> q.shape, k, unbatched
    ((1, 3, 8), None, True)
    """
    if key is None and value is not None:
        raise ValueError("value was given without key; pass key too (or neither for self-attention)")
    query = _check_layer_input(query, "query", layer.d_model)
    unbatched = query.ndim == 2
    if key is None and not layer.fused:
        raise ValueError(f"this layer expects keys of width kdim={layer.kdim} and values of width "
                         f"vdim={layer.vdim}: pass key and value (self-attention needs kdim == vdim == "
                         "d_model)")
    if key is None:
        return promote(query[None] if unbatched else query, layer.dtype), None, None, unbatched
    same = value is None or value is key
    key = _check_layer_input(key, "key", layer.kdim)
    value = key if value is None or same else _check_layer_input(value, "value", layer.vdim)
    if same and layer.kdim != layer.vdim:
        raise ValueError(f"value must be given: kdim={layer.kdim} differs from vdim={layer.vdim}")
    for name, arr in (("key", key), ("value", value)):
        if (arr.ndim == 2) != unbatched:
            raise ValueError(f"query has shape {query.shape} but {name} has shape {arr.shape}: pass all "
                             "inputs batched (batch, seq, dim) or all unbatched (seq, dim)")
    if key.shape[:-1] != value.shape[:-1]:
        raise ValueError(f"key {key.shape} and value {value.shape} must share (batch, seq_k)")
    if not unbatched and key.shape[0] != query.shape[0]:
        raise ValueError(f"query has batch {query.shape[0]} but key has batch {key.shape[0]}")
    if unbatched:
        query, key, value = query[None], key[None], value[None]
    # One dtype for all three, by NumPy's promotion with the weights: a float64 key makes a float32 layer
    # compute in float64 throughout, so its output and its weights agree.
    dtype = np.result_type(query, key, value, layer.dtype)
    query, key = query.astype(dtype, copy=False), key.astype(dtype, copy=False)
    return query, key, key if same else value.astype(dtype, copy=False), unbatched


def _check_layer_input(x: ArrayLike, name: str, dim: int) -> FloatArray:
    x = as_float_array(x, name)
    if x.ndim not in (2, 3) or x.shape[-1] != dim or x.shape[-2] == 0:
        raise ValueError(f"{name} must have shape (batch, seq, {dim}) or (seq, {dim}) with seq >= 1, "
                         f"got {x.shape}")
    check_finite(x, name)
    return x
