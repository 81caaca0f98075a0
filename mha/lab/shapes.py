"""Every intermediate array of a multi-head attention layer: its name, its formula, its shape, its memory.

:func:`trace_layer` runs a :class:`~mha.MultiHeadAttention` layer step by step with plain NumPy (fused QKV
projection, reshape + transpose into heads, batched attention, transpose + reshape back, output projection)
and records each array as a :class:`ShapeStep`. The shape table of the shapes chapter is generated from
these records, so it cannot drift from what the code does. :func:`head_assignment` pushes feature indices
through the head split, the right way or with the classic reshape-without-transpose bug.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mha.attention import softmax
from mha.layers import MultiHeadAttention
from mha.typing import ArrayLike, DTypeLike, IntArray, Seed
from mha.validation import as_float_array, as_generator, check_positive_int

__all__ = ["ShapeStep", "trace_layer", "trace_shapes", "head_assignment", "token_influence",
           "seeded_head_weights"]


@dataclass(frozen=True)
class ShapeStep:
    """One array met on the way through the layer.

    Attributes
    ----------
    name : str
        Short name, e.g. ``"q_heads"``.
    code : str
        The NumPy expression that made it.
    dims : str
        The shape in the course's vocabulary, e.g. ``"(batch, n_heads, seq, d_head)"``.
    shape : tuple of int
    strides : tuple of int
        Steps between neighbours along each axis, in elements (NumPy's byte strides / itemsize).
    contiguous : bool
        Whether the elements sit in memory in row-major order without gaps.
    view_of : str or None
        Name of the earliest step whose memory this array shares (a view), or None for a fresh array.
    array : ndarray
        The array itself (left out of ``repr`` and comparisons).
    """

    name: str
    code: str
    dims: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    contiguous: bool
    view_of: str | None
    array: np.ndarray = field(repr=False, compare=False)


def _memory_root(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (following ``.base`` through views)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class _Recorder:
    def __init__(self) -> None:
        self.steps: list[ShapeStep] = []

    def add(self, name: str, code: str, dims: str, array: np.ndarray) -> np.ndarray:
        root = _memory_root(array)
        view_of = next((s.name for s in self.steps if _memory_root(s.array) is root), None)
        self.steps.append(ShapeStep(
            name=name, code=code, dims=dims, shape=array.shape,
            strides=tuple(s // array.itemsize for s in array.strides),
            contiguous=bool(array.flags["C_CONTIGUOUS"]), view_of=view_of, array=array,
        ))
        return array


def trace_layer(layer: MultiHeadAttention, x: ArrayLike) -> list[ShapeStep]:
    """Run self-attention of ``layer`` on ``x`` step by step and record every intermediate array.

    The steps are the textbook ones (fused ``[W_q | W_k | W_v]`` projection, split into heads, attention
    per head, merge, output projection), computed with plain NumPy from the layer's public weights; the last
    step's array equals ``layer(x)``.

    Parameters
    ----------
    layer : mha.MultiHeadAttention
        Plain multi-head attention (``n_kv_heads == n_heads``, ``kdim == vdim == d_model``).
    x : array_like, shape (batch, seq, d_model)

    Returns
    -------
    list of ShapeStep
        In the order the arrays are made.

    Examples
    --------
    >>> from mha.layers import MultiHeadAttention
    >>> layer = MultiHeadAttention(8, 2, rng=0)
    >>> steps = trace_layer(layer, np.ones((1, 3, 8)))
    >>> [(s.name, s.shape) for s in steps if s.name in ("q_heads", "scores", "output")]
    [('q_heads', (1, 2, 3, 4)), ('scores', (1, 2, 3, 3)), ('output', (1, 3, 8))]
    >>> np.allclose(steps[-1].array, layer(np.ones((1, 3, 8))))
    True
    """
    from mha.layers import MultiHeadAttention

    if not isinstance(layer, MultiHeadAttention):
        raise TypeError(f"layer must be an mha.MultiHeadAttention, got {type(layer).__name__}")
    if layer.n_kv_heads != layer.n_heads or not layer.fused:
        raise ValueError("trace_layer follows plain self-attention: build the layer without n_kv_heads, "
                         f"kdim or vdim (got {layer!r})")
    x = as_float_array(x, "x")
    if x.ndim != 3 or x.shape[-1] != layer.d_model:
        raise ValueError(f"x must have shape (batch, seq, {layer.d_model}), got {x.shape}")
    batch, seq, d_model = x.shape
    n_heads, d_head = layer.n_heads, layer.d_head
    rec = _Recorder()
    rec.add("x", "x", "(batch, seq, d_model)", x)
    W_qkv = rec.add("W_qkv", "np.concatenate([W_q, W_k, W_v], axis=1)", "(d_model, 3·d_model)",
                    np.concatenate([layer.W_q, layer.W_k, layer.W_v], axis=1))
    rec.add("W_q, head 0", "W_qkv[:, :d_head]", "(d_model, d_head)", W_qkv[:, :d_head])
    qkv = x @ W_qkv  # (batch, seq, 3 * d_model)
    if layer.bias:
        qkv += np.concatenate([layer.b_q, layer.b_k, layer.b_v])
    rec.add("qkv", "x @ W_qkv + b_qkv", "(batch, seq, 3·d_model)", qkv)
    heads = {}
    columns = {"q": ":d_model", "k": "d_model:2·d_model", "v": "2·d_model:"}
    for i, part in enumerate("qkv"):
        flat = rec.add(part, f"qkv[..., {columns[part]}]", "(batch, seq, d_model)",
                       qkv[..., i * d_model:(i + 1) * d_model])
        split = flat.reshape(batch, seq, n_heads, d_head)  # (batch, seq, n_heads, d_head)
        if part == "q":
            rec.add("q_split", "q.reshape(batch, seq, n_heads, d_head)", "(batch, seq, n_heads, d_head)",
                    split)
        heads[part] = rec.add(f"{part}_heads", f"{part}.reshape(…).transpose(0, 2, 1, 3)",
                              "(batch, n_heads, seq, d_head)", split.transpose(0, 2, 1, 3))
    scores = heads["q"] @ heads["k"].swapaxes(-1, -2) * (1.0 / math.sqrt(d_head))
    rec.add("scores", "q_heads @ k_heads.swapaxes(-1, -2) / √d_head", "(batch, n_heads, seq_q, seq_k)",
            scores)
    weights = rec.add("weights", "softmax(scores, axis=-1)", "(batch, n_heads, seq_q, seq_k)",
                      softmax(scores))
    context = rec.add("context", "weights @ v_heads", "(batch, n_heads, seq, d_head)", weights @ heads["v"])
    moved = rec.add("context_t", "context.transpose(0, 2, 1, 3)", "(batch, seq, n_heads, d_head)",
                    context.transpose(0, 2, 1, 3))
    concat = rec.add("concat", "context_t.reshape(batch, seq, d_model)", "(batch, seq, d_model)",
                     moved.reshape(batch, seq, d_model))
    out = concat @ layer.W_o
    if layer.b_o is not None:
        out += layer.b_o
    rec.add("output", "concat @ W_o + b_o", "(batch, seq, d_model)", out)
    return rec.steps


def trace_shapes(batch: int, seq: int, d_model: int, n_heads: int, *, rng: Seed = 0,
                 dtype: DTypeLike = np.float64) -> list[ShapeStep]:
    """:func:`trace_layer` on a fresh seeded layer and random input of the given sizes.

    Parameters
    ----------
    batch, seq, d_model, n_heads : int
        ``n_heads`` must divide ``d_model``.
    rng : numpy.random.Generator or int, default 0
        Source of the layer's weights and of the input.
    dtype : np.float32 or np.float64

    Returns
    -------
    list of ShapeStep

    Examples
    --------
    >>> steps = trace_shapes(1, 3, 512, 8)  # the lessons' walkthrough
    >>> {s.name: s.shape for s in steps}["W_q, head 0"]
    (512, 64)
    >>> [s.name for s in steps if s.view_of == "qkv"]
    ['q', 'q_split', 'q_heads', 'k', 'k_heads', 'v', 'v_heads']
    """
    from mha.layers import MultiHeadAttention

    batch = check_positive_int(batch, "batch")
    seq = check_positive_int(seq, "seq")
    rng = as_generator(rng)
    layer = MultiHeadAttention(d_model, n_heads, rng=rng, dtype=dtype)
    x = rng.standard_normal((batch, seq, layer.d_model)).astype(dtype)  # (batch, seq, d_model)
    return trace_layer(layer, x)


def head_assignment(seq: int, d_model: int, n_heads: int, *,
                    transpose: bool = True) -> tuple[IntArray, IntArray]:
    """Where each entry of a projected ``(seq, d_model)`` matrix ends up after splitting into heads.

    The feature indices themselves are pushed through the split, so the answer is what the reshape really
    does, not a formula. ``transpose=True`` is the right split (``reshape(seq, n_heads, d_head)`` then move
    heads forward); ``transpose=False`` is the bug ``reshape(n_heads, seq, d_head)``: same shape, wrong
    contents.

    Parameters
    ----------
    seq, d_model, n_heads : int
    transpose : bool, default True

    Returns
    -------
    head : ndarray of int, shape (seq, d_model)
        The head each entry lands in.
    slot : ndarray of int, shape (seq, d_model)
        The token position it occupies inside that head.

    Examples
    --------
    >>> head, slot = head_assignment(2, 4, 2)
    >>> head  # right: features 0-1 go to head 0, features 2-3 to head 1, for every token
    array([[0, 0, 1, 1],
           [0, 0, 1, 1]])
    >>> head, slot = head_assignment(2, 4, 2, transpose=False)
    >>> head, slot  # wrong: token 0 fills head 0 entirely, token 1 fills head 1
    (array([[0, 0, 0, 0],
           [1, 1, 1, 1]]), array([[0, 0, 1, 1],
           [0, 0, 1, 1]]))
    """
    seq = check_positive_int(seq, "seq")
    d_model = check_positive_int(d_model, "d_model")
    n_heads = check_positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads} "
                         f"(d_head would be {d_model / n_heads:.4g})")
    d_head = d_model // n_heads
    index = np.arange(seq * d_model).reshape(seq, d_model)  # (seq, d_model): where each entry starts
    if transpose:
        split = index.reshape(seq, n_heads, d_head).transpose(1, 0, 2)  # (n_heads, seq, d_head)
    else:
        split = index.reshape(n_heads, seq, d_head)  # (n_heads, seq, d_head), the bug
    head = np.empty(seq * d_model, dtype=int)
    slot = np.empty(seq * d_model, dtype=int)
    head[split] = np.arange(n_heads)[:, None, None]  # scatter: entry split[i, t, j] belongs to head i
    slot[split] = np.arange(seq)[None, :, None]  # ... at token position t
    return head.reshape(seq, d_model), slot.reshape(seq, d_model)


def token_influence(fn: Callable[..., Any], x: ArrayLike, *, rng: Seed, scale: float = 1.0) -> np.ndarray:
    """How much each output token moves when one input token changes: a causality and mixing probe.

    Input token ``j`` of every example is replaced by random noise, one ``j`` at a time, and the change of
    each output token is measured. A causal layer must give zeros above the diagonal (no output depends on a
    later input); a bug that mixes tokens shows up as mass where it should not be.

    Parameters
    ----------
    fn : callable
        ``fn(x) -> output`` with ``x`` and output of shape (batch, seq, d_model).
    x : array_like, shape (batch, seq, d_model)
    rng : numpy.random.Generator or int
        Source of the replacement tokens.
    scale : float, default 1.0
        Standard deviation of the replacement tokens.

    Returns
    -------
    ndarray, shape (seq_out, seq_in)
        Mean over the batch of ``‖Δ output[i]‖``, divided by its largest entry (all zeros stay zeros).

    Examples
    --------
    >>> from mha.layers import MultiHeadAttention
    >>> layer = MultiHeadAttention(8, 2, rng=0)
    >>> x = np.random.default_rng(1).standard_normal((1, 4, 8))
    >>> influence = token_influence(lambda t: layer(t, causal=True), x, rng=2)
    >>> bool(np.all(np.triu(influence, k=1) == 0))  # nothing depends on the future
    True
    """
    x = as_float_array(x, "x")
    if x.ndim != 3:
        raise ValueError(f"x must have shape (batch, seq, d_model), got {x.shape}")
    rng = as_generator(rng)
    batch, seq, d_model = x.shape
    base = np.asarray(fn(x))
    if base.shape[:2] != (batch, seq):
        raise ValueError(f"fn(x) must return (batch, seq, ...) = ({batch}, {seq}, ...), got {base.shape}")
    influence = np.empty((seq, seq))
    for j in range(seq):  # one forward pass per input position: this is a probe, not a fast path
        changed = x.copy()
        changed[:, j] = scale * rng.standard_normal((batch, d_model))
        delta = np.asarray(fn(changed)) - base  # (batch, seq, d_out)
        influence[:, j] = np.linalg.norm(delta, axis=-1).mean(axis=0)
    top = influence.max()
    return influence / top if top > 0 else influence


def seeded_head_weights(seq: int, d_model: int, n_heads: int, *, rng: Seed = 0) -> np.ndarray:
    """Per-head attention weights of a seeded, untrained layer on random tokens (for pictures of the layer).

    Returns
    -------
    ndarray, shape (n_heads, seq, seq)
        Each row sums to 1.

    Examples
    --------
    >>> seeded_head_weights(3, 16, 4).shape
    (4, 3, 3)
    """
    from mha.layers import MultiHeadAttention

    rng = as_generator(rng)
    x = rng.standard_normal((seq, d_model))  # (seq, d_model): random tokens
    _, weights = MultiHeadAttention(d_model, n_heads, rng=rng)(x, return_weights=True)
    return weights  # (n_heads, seq, seq)
