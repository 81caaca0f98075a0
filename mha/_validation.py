"""Input checks shared by the public functions.

Every public entry point validates its arguments once, here, and raises an error a learner can act on:
it names the argument, what was expected and what arrived. The fast paths behind the checks trust them.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def as_float_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a floating-point ndarray without copying when it already is one.

    Integer arrays become float64 (like NumPy's true division); anything else that is not a real number
    (bool, complex, strings, objects, ragged lists) raises a ``TypeError`` naming ``name``.
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


def check_finite(arr: np.ndarray, name: str, *, allow_neg_inf: bool = False) -> None:
    """Raise ``ValueError`` if ``arr`` holds NaN or infinities (``-inf`` optionally allowed)."""
    if allow_neg_inf:
        bad = np.isnan(arr).any() or np.isposinf(arr).any()
        allowed = "finite values or -inf"
    else:
        bad = not np.isfinite(arr).all()
        allowed = "finite values"
    if bad:
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(f"{name} must hold {allowed}, got {n_nan} NaN and {n_inf} infinite entries")


def cast_finite(arr: np.ndarray, dtype, name: str, *, allow_neg_inf: bool = False) -> np.ndarray:
    """``arr`` in ``dtype``; a narrowing cast that makes values infinite (a float64 1e39 in float32) is
    refused, naming ``name``. ``arr`` itself is expected checked already."""
    dtype = np.dtype(dtype)
    if arr.dtype.itemsize <= dtype.itemsize:
        return arr.astype(dtype, copy=False)
    with np.errstate(over="ignore"):
        cast = arr.astype(dtype)
    check_finite(cast, name, allow_neg_inf=allow_neg_inf)
    return cast


def check_score_maxima(row_max: np.ndarray) -> None:
    """Raise ``ValueError`` if a row of attention scores peaks at ``+inf`` or NaN: ``q · k`` overflowed.

    Finite inputs can still do it: float32 queries and keys of about 1e20 give products beyond float32's
    largest number, and a softmax of them would be NaN everywhere. The softmax computes each row's maximum
    anyway, so the check costs a comparison per row, not a pass over the scores.
    """
    if not (row_max < np.inf).all():  # False for +inf and NaN; -inf (a fully masked row) is fine
        info = np.finfo(row_max.dtype)
        raise ValueError(f"attention scores overflowed {row_max.dtype}: some q · k is inf or NaN, beyond the "
                         f"largest {row_max.dtype} ({info.max:.2e}). Scale the queries and keys down (or the "
                         f"inputs and weights that make them), or compute in float64.")


def check_ndim(arr: np.ndarray, name: str, *, min_ndim: int, shape_hint: str) -> None:
    """Raise ``ValueError`` unless ``arr`` has at least ``min_ndim`` dimensions."""
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have shape {shape_hint}, got shape {arr.shape}")


def check_flag(value, name: str) -> bool:
    """``value`` as a bool, refusing anything else: ``causal="no"`` would otherwise count as True."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def is_int(value) -> bool:
    """Whether ``value`` is an integer (Python's or NumPy's), not a bool and not a float like 2.0."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(value, name: str) -> int:
    """Return ``value`` as a Python int, or raise ``TypeError`` if it is not an integer (1.7 is no index)."""
    if not is_int(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    return operator.index(value)


def check_positive_int(value, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= ``minimum``."""
    value = check_int(value, name)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """Return ``mask`` as a boolean array, refusing 0/1 or additive float masks.

    Float masks are refused on purpose: their polarity is ambiguous (1 = keep? 1 = block?) and additive
    ``-1e9`` masks turn a fully masked row into uniform attention over padding.
    """
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise TypeError(
            f"{name} must be a boolean array (True = may attend), got dtype {arr.dtype}; "
            f"convert a 0/1 mask with `{name}.astype(bool)` after checking its polarity"
        )
    return arr


def check_broadcastable(arr: np.ndarray, target_shape: tuple[int, ...], name: str = "mask") -> np.ndarray:
    """Return ``arr`` unchanged if it broadcasts to ``target_shape`` without growing it, else raise.

    The array itself is returned, not a broadcast view, so that callers can negate or cast the small
    original instead of materialising the full (..., seq_q, seq_k) shape.
    """
    try:
        ok = np.broadcast_shapes(arr.shape, target_shape) == tuple(target_shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{name} of shape {arr.shape} cannot be broadcast to the scores' shape {tuple(target_shape)} "
            "(..., seq_q, seq_k)"
        )
    return arr


def check_score_bias(bias, scores_shape: tuple[int, ...], dtype) -> np.ndarray | None:
    """Validate an additive score bias (finite or -inf, broadcastable, at most 4-D) and cast it."""
    if bias is None:
        return None
    bias = as_float_array(bias, "bias")
    check_finite(bias, "bias", allow_neg_inf=True)
    check_broadcastable(bias, scores_shape, name="bias")
    if bias.ndim > len(scores_shape):
        raise ValueError(f"bias must have at most {len(scores_shape)} dimensions, got shape {bias.shape}")
    return cast_finite(bias, dtype, f"bias (as {np.dtype(dtype)})", allow_neg_inf=True)


def result_float_dtype(*arrays: np.ndarray) -> np.dtype:
    """The floating dtype NumPy would compute in for these arrays (float32 stays float32)."""
    return np.result_type(*arrays)


def check_dtype_argument(dtype) -> np.dtype:
    """Validate a ``dtype=`` argument: float32 or float64 (float16 is too coarse to learn with)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dtype!r}") from None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dt}")
    return dt


def as_generator(rng) -> np.random.Generator:
    """Accept a ``numpy.random.Generator``, an integer seed, or None (fresh, unseeded entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(
        f"rng must be a numpy.random.Generator, an integer seed or None, got {type(rng).__name__}"
    )
