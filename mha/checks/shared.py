"""What the checks of several chapters share, kept once so that no chapter's module imports another.

- :func:`input_rng`, where a check draws its inputs from, and :func:`output_and_weights`, how it reads
  an answer that may come with its attention weights;
- :data:`FLOAT32_ADVICE`, the NEP 50 advice of every check that feeds float32 inputs;
- :func:`number`, :func:`expect_value`, :func:`expect_values`, :func:`expect_shapes`: the comparisons
  for answers that are a number, a list of counts or a dict of shapes (the predict-and-count exercises);
- the head layout that both the multi-head and the shapes checks test (the sizes, and the wrong ways
  to split and merge heads in :data:`SPLIT_MISTAKES` and :data:`MERGE_MISTAKES`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from mha import attention
from mha.checks.machinery import Checker, NotDone, placeholder

#: The advice of every check that feeds float32 inputs (NEP 50's promotion).
FLOAT32_ADVICE = (
    "Keep float32 as float32: under NumPy 2 (NEP 50) a float32 array combined with a float64 "
    "*array or NumPy scalar* becomes float64, e.g. `scores / np.sqrt(d_k)`. Use a Python float "
    "(`math.sqrt(d_k)`) or cast: `scores / np.sqrt(d_k).astype(scores.dtype)`."
)


def input_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """The generator a check draws its inputs from: ``rng``, or one seeded with 0."""
    if rng is None:
        return np.random.default_rng(0)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def output_and_weights(check: Checker, result: Any, case: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Accept ``output`` or ``(output, weights)``."""
    if isinstance(result, tuple | list) and len(result) == 2:
        return check.as_array(result[0], case), check.as_array(result[1], case)
    return check.as_array(result, case), None


# ------------------------------------------------------------- answers that are numbers or shapes


def number(check: Checker, got: Any, what: str) -> float:
    """The learner's answer as a float, or a failure saying what type came instead."""
    if placeholder(got):
        raise NotDone(check.name)
    if isinstance(got, bool):
        check.fail(f"{what} should be a number, got {got!r}.")
    try:
        return float(got)
    except (TypeError, ValueError):
        check.fail(f"{what} should be a number, got {type(got).__name__} {got!r}.")


def expect_value(check: Checker, got: Any, expected: float, what: str,
                 hints: Mapping[Any, str] | None = None, *, rel: float = 1e-3) -> None:
    """Fail unless ``got`` is ``expected`` (to ``rel``); add the hint of a known wrong value."""
    value = number(check, got, what)
    if math.isclose(value, expected, rel_tol=rel, abs_tol=1e-12):
        return
    message = f"{what}: expected {expected:.6g}, got {value:.6g}."
    for wrong, hint in (hints or {}).items():
        if math.isclose(value, wrong, rel_tol=rel, abs_tol=1e-12):
            message += " " + hint
            break
    check.fail(message)


def expect_values(check: Checker, got: Any, expected: list[int], what: str,
                  hints: dict[tuple, str] | None = None) -> None:
    """Like :func:`expect_value` for a list of whole numbers (one per case)."""
    if placeholder(got) or (isinstance(got, list | tuple) and any(map(placeholder, got))):
        raise NotDone(check.name)
    if not isinstance(got, list | tuple | np.ndarray) or len(got) != len(expected):
        check.fail(f"{what}: expected a list of {len(expected)} numbers, got {got!r}.")
    numbers = [number(check, g, what) for g in got]
    fractional = [v for v in numbers if not (math.isfinite(v) and v.is_integer())]
    if fractional:  # 6.86 sequences do not fit: 6 do (a float like 6.0 is fine)
        check.fail(f"{what}: expected whole numbers, got {fractional[0]:.6g}. A count is whole: round down "
                   "with // (floor division), as only complete ones fit.")
    values = tuple(int(v) for v in numbers)
    if values == tuple(expected):
        return
    message = f"{what}: expected {list(expected)}, got {list(values)}."
    if hints and values in hints:
        message += " " + hints[values]
    check.fail(message)


def expect_shapes(check: Checker, predicted: Any, expected: dict[str, tuple],
                  why: dict[str, str]) -> None:
    """Compare a dict of predicted shapes with ``expected``, naming the first wrong one."""
    if placeholder(predicted):
        raise NotDone(check.name)
    if not isinstance(predicted, dict):
        check.fail(f"expected a dict of shapes, got {type(predicted).__name__}.")
    if any(placeholder(predicted.get(name)) for name in expected):
        raise NotDone(check.name)
    for name, shape in expected.items():
        if name not in predicted:
            check.fail(f"your dict has no {name!r} key; expected the keys {list(expected)}.")
        got = tuple(predicted[name])
        if got != shape:
            reason = f" ({why[name]})" if name in why else ""
            check.fail(f"{name}: expected {shape}, got {got}{reason}.")


# ------------------------------------------------------------------------------- the head layout

#: The sizes the head-layout checks test with: all different, so a swapped axis shows.
BATCH, SEQ, N_HEADS, D_HEAD = 2, 5, 3, 4
#: ``N_HEADS * D_HEAD``.
D_MODEL = N_HEADS * D_HEAD
#: Each size's name, to say which axis a wrong shape holds.
NAMES = {BATCH: "batch", SEQ: "seq", N_HEADS: "n_heads", D_HEAD: "d_head", D_MODEL: "d_model"}


def split_no_transpose(x: np.ndarray, n_heads: int) -> np.ndarray:
    """The split without the transpose: the sequence, not the features, cut into heads."""
    batch, seq, d_model = x.shape
    return x.reshape(batch, n_heads, seq, d_model // n_heads)  # (batch, n_heads, seq, d_head)?!


def _split_interleaved(x, n_heads):
    batch, seq, d_model = x.shape
    # (batch, seq, d_head, n_heads) -> (batch, n_heads, seq, d_head)
    return x.reshape(batch, seq, d_model // n_heads, n_heads).transpose(0, 3, 1, 2)


def merge_no_transpose(x: np.ndarray) -> np.ndarray:
    """The merge without the transpose: positions mixed."""
    batch, n_heads, seq, d_head = x.shape
    return x.reshape(batch, seq, n_heads * d_head)  # heads not moved back next to d_head


def _merge_interleaved(x):
    batch, n_heads, seq, d_head = x.shape
    # (batch, seq, d_head, n_heads) -> (batch, seq, d_model)
    return x.transpose(0, 2, 3, 1).reshape(batch, seq, n_heads * d_head)


def _merge_reversed(x):
    return attention.merge_heads(x[:, ::-1])


#: The wrong ways to split heads, by the message that names each.
SPLIT_MISTAKES = {
    split_no_transpose: "you reshaped straight to (batch, n_heads, seq, d_head) without "
    "transposing: that cuts the *sequence* into heads. Reshape to (batch, seq, n_heads, d_head), "
    "then swap axes 1 and 2.",
    _split_interleaved: "you split the features as (d_head, n_heads), so each head gets every "
    "n_heads-th feature. Head i owns the contiguous block i*d_head:(i+1)*d_head: reshape to "
    "(batch, seq, n_heads, d_head).",
}
#: The wrong ways to merge heads, by the message that names each.
MERGE_MISTAKES = {
    merge_no_transpose: "you reshaped (batch, n_heads, seq, d_head) straight to (batch, seq, "
    "d_model) without transposing: that mixes positions. Move the heads axis next to d_head first "
    "(transpose(0, 2, 1, 3)), then reshape.",
    _merge_reversed: "the heads are concatenated in reverse order: head 0 must fill features "
    "0..d_head-1, head 1 the next d_head, and so on.",
    _merge_interleaved: "the heads are interleaved feature by feature instead of concatenated "
    "block by block: transpose to (batch, seq, n_heads, d_head), then reshape.",
}
