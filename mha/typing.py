"""The names the package's signatures use for arrays, seeds and dtypes.

The shapes live in each docstring (``(batch, seq, d_model)`` ...); the signatures say what kind of value
goes in and comes out, so that an editor or a type checker (``mypy``, ``pyright``) can help:

- an argument a function converts itself is :data:`ArrayLike` (a list, a NumPy array, anything
  ``np.asarray`` takes);
- what the package returns is a :data:`FloatArray` (float16, float32 or float64, following the input)
  or a :data:`BoolArray` (masks: True = may attend);
- ``rng=`` takes a :data:`Seed`: a ``numpy.random.Generator``, an integer seed or None;
- ``dtype=`` takes a :data:`DTypeLike` (``np.float32``, ``"float64"`` ...).

>>> import numpy as np
>>> from mha.typing import FloatArray
>>> def double(x: FloatArray) -> FloatArray:
...     return 2 * x
>>> double(np.ones(2, np.float32)).dtype
dtype('float32')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

__all__ = ["ArrayLike", "Attend", "BoolArray", "DTypeLike", "FloatArray", "IntArray", "Seed"]

#: An array of floats in any precision the package computes in (float16, float32, float64).
FloatArray: TypeAlias = NDArray[np.floating[Any]]
#: A boolean array, e.g. a mask (True = may attend).
BoolArray: TypeAlias = NDArray[np.bool_]
#: An array of integers, e.g. token ids or positions.
IntArray: TypeAlias = NDArray[np.integer[Any]]
#: What ``rng=`` accepts: a seeded ``numpy.random.Generator``, an integer seed, or None (fresh entropy).
# A string, so that `import mha` does not load numpy.random before anything asks for a random number.
Seed: TypeAlias = "np.random.Generator | int | None"
#: An attention step on per-head arrays, ``attend(q, k, v, mask, bias) -> (context, weights)``: the
#: weights may be None (the annex's tiles never hold them all).
Attend: TypeAlias = Callable[[FloatArray, FloatArray, FloatArray, "BoolArray | None", "FloatArray | None"],
                             tuple[FloatArray, "FloatArray | None"]]
