"""Checks for the chapter "Multi-head attention" (``chapters/multi_head.md``).

What a learner finds here: :func:`check_multi_head`, which compares your whole layer (a function, a
class or a built object) with :class:`mha.MultiHeadAttention` and names the step that went wrong, with
the pipeline that recomputes each wrong step; then the chapter's exercises, :func:`check_einsum_layer`
and :func:`check_parameter_formula`. The split and merge checks are in ``shapes.py``, with their chapter.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from mha import attention, cost, layers
from mha.checks.machinery import Checker, Mistake, NotDone, accepts, learner_check, placeholder
from mha.checks.questions import Choice, Option, check_function
from mha.checks.shared import (
    BATCH,
    D_HEAD,
    D_MODEL,
    FLOAT32_ADVICE,
    MERGE_MISTAKES,
    N_HEADS,
    NAMES,
    SEQ,
    SPLIT_MISTAKES,
    expect_value,
    input_rng,
    merge_no_transpose,
    output_and_weights,
    split_no_transpose,
)


@dataclass(frozen=True)
class _Weights:
    W_q: np.ndarray  # noqa: N815 - the lessons' names
    W_k: np.ndarray  # noqa: N815
    W_v: np.ndarray  # noqa: N815
    W_o: np.ndarray  # noqa: N815
    b_q: np.ndarray
    b_k: np.ndarray
    b_v: np.ndarray
    b_o: np.ndarray

    def astype(self, dtype) -> _Weights:
        return _Weights(**{k: v.astype(dtype) for k, v in vars(self).items()})


def _layer_output(x, w: _Weights, n_heads, *, split=None, merge=None, scale=None, axis=-1,
                  project=True) -> np.ndarray:
    """Multi-head self-attention from the package's pieces, with one step optionally wrong."""
    split, merge = split or attention.split_heads, merge or attention.merge_heads
    q, k, v = (split(x @ W + b, n_heads) for W, b in ((w.W_q, w.b_q), (w.W_k, w.b_k),
                                                       (w.W_v, w.b_v)))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    heads = attention.softmax(q @ np.swapaxes(k, -1, -2) * scale, axis=axis) @ v  # (b, h, seq, d_head)
    merged = merge(heads)  # (batch, seq, d_model)
    return merged @ w.W_o + w.b_o if project else merged


def _layer_mistakes(x, w: _Weights) -> list[Mistake]:
    mistakes = [Mistake(m, lambda f=f: _layer_output(x, w, N_HEADS, split=f))
                for f, m in SPLIT_MISTAKES.items()]
    mistakes += [Mistake(m, lambda f=f: _layer_output(x, w, N_HEADS, merge=f))
                 for f, m in MERGE_MISTAKES.items()]
    mistakes.append(Mistake(
        "you reshaped without transposing both when splitting and when merging the heads: the shapes "
        "work out, but each 'head' holds a slice of the *sequence* instead of a slice of the features, "
        "so the numbers are wrong. Split with reshape(batch, seq, n_heads, d_head).transpose(0, 2, 1, 3) "
        "and undo that transpose before merging.",
        lambda: _layer_output(x, w, N_HEADS, split=split_no_transpose, merge=merge_no_transpose)))
    transposed = _Weights(w.W_q.T, w.W_k.T, w.W_v.T, w.W_o.T, w.b_q, w.b_k, w.b_v, w.b_o)
    return mistakes + [
        Mistake(f"the scores were not scaled: divide them by √d_head = √{D_HEAD}.",
                lambda: _layer_output(x, w, N_HEADS, scale=1.0)),
        Mistake(f"you scaled by √d_model = √{D_MODEL}; each head's dot products have d_head = "
                f"{D_HEAD} terms, so the scale is √d_head.",
                lambda: _layer_output(x, w, N_HEADS, scale=1 / math.sqrt(D_MODEL))),
        Mistake("softmax over the wrong axis (axis=-2): normalise each query's scores over the "
                "keys, axis=-1.", lambda: _layer_output(x, w, N_HEADS, axis=-2)),
        Mistake("the output projection is missing: multiply the merged heads by W_o (and add "
                "b_o).", lambda: _layer_output(x, w, N_HEADS, project=False)),
        Mistake(f"you computed a single head of size d_model: split into n_heads = {N_HEADS} "
                f"heads of d_head = {D_HEAD}.", lambda: _layer_output(x, w, 1)),
        Mistake("you multiplied by the transposed weights: this course multiplies on the right, "
                "x @ W_q with W_q of shape (d_model, d_model).",
                lambda: _layer_output(x, transposed, N_HEADS)),
    ]


def _reference(x, w: _Weights) -> tuple[np.ndarray, np.ndarray]:
    layer = layers.MultiHeadAttention(D_MODEL, N_HEADS, dtype=w.W_q.dtype)
    for name, value in vars(w).items():
        setattr(layer, name, value)
    return layer(x, return_weights=True)


def _random_weights(rng, biases: bool) -> _Weights:
    matrices = (rng.normal(size=(D_MODEL, D_MODEL)) / math.sqrt(D_MODEL) for _ in range(4))
    vectors = (rng.normal(size=D_MODEL) if biases else np.zeros(D_MODEL) for _ in range(4))
    return _Weights(*matrices, *vectors)


def _has_biases(check: Checker, layer) -> bool:
    """Check the layer exposes W_q..W_o of shape (d_model, d_model); say whether it has biases."""
    for name in ("W_q", "W_k", "W_v", "W_o"):
        shape = np.shape(cast(Any, getattr(layer, name, None)))
        if shape != (D_MODEL, D_MODEL):
            found = "no such attribute" if not hasattr(layer, name) else f"shape {shape}"
            check.fail(f"the check needs arrays W_q, W_k, W_v, W_o of shape (d_model, d_model) = "
                       f"({D_MODEL}, {D_MODEL}) on your layer; {name}: {found}.")
    return all(getattr(layer, name, None) is not None for name in ("b_q", "b_k", "b_v", "b_o"))


@learner_check
def check_multi_head(cls_or_fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                     quiet: bool = False) -> None:
    """Check your multi-head self-attention against :class:`mha.MultiHeadAttention`.

    Parameters
    ----------
    cls_or_fn : function, class or layer object
        * a function ``fn(x, W_q, W_k, W_v, W_o, n_heads)`` (no biases), or
        * a class built as ``cls(d_model, n_heads)`` (``rng=`` passed if it accepts one), or an
          object already built; either way with arrays ``W_q, W_k, W_v, W_o`` (each
          (d_model, d_model), used as ``x @ W_q``), optional ``b_q, b_k, b_v, b_o``, and called
          as ``layer(x)``.

        It returns (batch, seq, d_model), or ``(output, weights)`` with weights
        (batch, n_heads, seq, seq).

    Examples
    --------
    >>> import mha
    >>> def layer(x, W_q, W_k, W_v, W_o, n_heads):
    ...     q, k, v = (mha.split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))
    ...     return mha.merge_heads(mha.scaled_dot_product_attention(q, k, v)) @ W_o
    >>> check_multi_head(layer)
    ✔ check_multi_head passed: matches mha.MultiHeadAttention, in float64 and float32.
    """
    rng = input_rng(rng)
    name = getattr(cls_or_fn, "__name__", type(cls_or_fn).__name__)
    check = Checker("check_multi_head", cls_or_fn, "multi-head attention")
    x: np.ndarray = rng.normal(size=(BATCH, SEQ, D_MODEL))
    case = f"x {x.shape} = (batch, seq, d_model), n_heads = {N_HEADS}"
    is_function = inspect.isfunction(cls_or_fn) or inspect.ismethod(cls_or_fn)
    if is_function:
        w = _random_weights(rng, biases=False)

        def run(x, w, case):
            return check.call(x, w.W_q, w.W_k, w.W_v, w.W_o, N_HEADS, case=case)
    else:
        def build(**dtype):
            kwargs = {"rng": rng} if accepts(cls_or_fn, "rng") else {}
            return check.call(D_MODEL, N_HEADS, case=f"{name}({D_MODEL}, {N_HEADS})", **kwargs, **dtype)

        # a class that takes dtype= (as mha.MultiHeadAttention does) is built per dtype
        layers_by_dtype: dict[type[np.floating[Any]], Any] = {}
        if inspect.isclass(cls_or_fn):
            layers_by_dtype[np.float64] = build()
            if accepts(cls_or_fn, "dtype"):
                layers_by_dtype[np.float32] = build(dtype=np.float32)
        layer = layers_by_dtype.get(np.float64, cls_or_fn)
        biases = _has_biases(check, layer)
        w = _random_weights(rng, biases)

        def run(x, w, case):
            target = layers_by_dtype.get(x.dtype.type, layer)
            for attribute, value in vars(w).items():
                if biases or attribute.startswith("W_"):
                    setattr(target, attribute, value)
            return Checker("check_multi_head", target, "layer").call(x, case=case)
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    # An object built in float32 (say with dtype=np.float32) casts whatever it is given to float32:
    # check it in float32 only, where its answers can match.
    only_float32 = not (is_function or inspect.isclass(cls_or_fn)) and _holds_float32(layer, w)
    if only_float32:
        x, w, case = x32, w32, f"{case}, float32"
    expected, weights = _reference(x, w)
    out, got_weights = output_and_weights(check, run(x, w, case), case)
    check.compare(out, expected, case=case, names=NAMES, mistakes=_layer_mistakes(x, w))
    if got_weights is not None:
        check.compare(got_weights, weights, case=case + ", the weights", names=NAMES)
    if not only_float32:
        out, _ = output_and_weights(check, run(x32, w32, "float32 inputs"), "float32 inputs")
        check.compare(out, _reference(x32, w32)[0], case="float32 inputs", names=NAMES)
    # A layer that stores its weights in its own precision (a float64 layer object, given float32
    # weights) may fairly answer in that precision: only a layer holding float32 weights must keep it.
    if is_function or _holds_float32(layers_by_dtype.get(np.float32, layer), w32):
        check.check_dtype(out, np.float32, "float32 inputs", FLOAT32_ADVICE)
    check.passed("matches mha.MultiHeadAttention, in float32 (your layer holds float32 weights)."
                 if only_float32 else "matches mha.MultiHeadAttention, in float64 and float32.", quiet)


def _holds_float32(layer, w) -> bool:
    """Whether ``layer`` keeps ``w.W_q`` (assigned to it here) as float32."""
    layer.W_q = w.W_q
    return np.asarray(layer.W_q).dtype == np.float32


@learner_check
def check_einsum_layer(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                       quiet: bool = False) -> None:
    """Check ``mha_einsum(x, layer)``: multi-head self-attention of an unbatched ``x``
    (seq, d_model) written with reshapes and ``np.einsum``, equal to ``layer(x)``."""
    rng = input_rng(rng)
    check = Checker("check_einsum_layer", fn, "mha_einsum")
    layer = layers.MultiHeadAttention(12, 3, rng=rng)
    for name in ("b_q", "b_k", "b_v", "b_o"):  # non-zero biases, so a forgotten one shows
        setattr(layer, name, rng.normal(size=12))
    x = rng.normal(size=(5, 12))
    case = "x (5, 12) = (seq, d_model), 3 heads with biases"
    no_bias_out = layers.MultiHeadAttention(12, 3, rng=0, bias=False)
    for name in ("W_q", "W_k", "W_v", "W_o"):
        setattr(no_bias_out, name, getattr(layer, name))
    check.compare(check.call(x, layer, case=case), layer(x), case=case, mistakes=[
        Mistake("the biases are missing: add b_q, b_k, b_v after the projections and b_o at the "
                "end.", lambda: no_bias_out(x)),
        Mistake("the output bias b_o is missing.", lambda: layer(x) - cast(Any, layer.b_o)),
    ])
    check.passed("equal to layer(x), biases included.", quiet)


@learner_check
def check_parameter_formula(fn: Callable[..., Any], *, quiet: bool = False) -> None:
    """Check ``parameter_formula(d_model, n_heads)``: the learned numbers of a multi-head
    attention layer with biases, against :func:`mha.cost.parameter_count`."""
    check = Checker("check_parameter_formula", fn, "parameter_formula")
    for d_model, n_heads in ((64, 1), (64, 8), (512, 8), (96, 12)):
        case = f"d_model = {d_model}, n_heads = {n_heads}"
        got = check.call(d_model, n_heads, case=case)
        if placeholder(got):
            raise NotDone(check.name)
        hints = {4 * d_model**2: "the four bias vectors (4 · d_model numbers) are missing.",
                 4 * d_model**2 + 4 * d_model * n_heads: "a bias has d_model numbers whatever "
                 "the number of heads.",
                 n_heads * (4 * d_model**2 + 4 * d_model): "heads split W_q, W_k, W_v, W_o "
                 "into blocks; they do not add matrices."}
        expect_value(check, got, cost.parameter_count(d_model, n_heads), f"on {case}", hints,
                     rel=0)
    check.passed("4·d_model² + 4·d_model, whatever the number of heads.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
HEAD_SWAP = Choice("check_head_swap", (
    "You swap heads 0 and 2 by moving their columns of `W_q`, `W_k`, `W_v` (and the biases), but leave "
    "`W_o` as it is. What happens to the layer's output?"), [
    Option("Nothing: heads have no order.",
           hint="heads have no order only if the rows of `W_o` move with them. Head i's output fills slot i "
                "of the concatenation, and slot i meets rows i\u00b7d_head \u2026 of `W_o`."),
    Option("It changes: each moved head's output now meets the rows of `W_o` made for the other head.",
           explains="Concat(…) W_o is a sum over heads of head_i times its own rows of `W_o`; move a "
                    "head without its rows and it is multiplied by the wrong ones."),
    Option("NumPy raises an error: the shapes no longer fit.",
           hint="every head has the same width, so every shape still fits. The bug is silent."),
    Option("The attention maps change, the output does not.",
           hint="each head's map comes from its own columns of `W_q` and `W_k`, so the maps are the "
                "same maps in a new order; it is the output that changes, through `W_o`."),
])

check_head_swap = check_function(HEAD_SWAP, __name__, "Grade your answer to “Heads have no order”: a letter.")
