"""The residual stream through stacks of random blocks: what the transformer-block chapter measures.

:func:`build_stack` draws a stack of :class:`~mha.block.TransformerBlock` objects, :func:`residual_stream`
keeps every intermediate activation and :func:`residual_statistics` summarises them per depth
(size, direction, how much each block rewrites). :func:`stack_statistics` is the cached experiment behind
the chapter's explorer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from mha.block import TransformerBlock
from mha.typing import ArrayLike, Seed
from mha.validation import as_float_array, as_generator, check_finite, check_positive_int

__all__ = ["build_stack", "residual_stream", "residual_statistics", "stack_statistics"]


def residual_stream(blocks: Sequence[TransformerBlock], x: ArrayLike, **call_kwargs: Any) -> np.ndarray:
    """Run ``x`` through ``blocks`` in turn and keep every intermediate activation.

    Parameters
    ----------
    blocks : sequence of TransformerBlock
    x : array_like, shape (batch, seq, d_model) or (seq, d_model)
    **call_kwargs
        Passed to every block (``causal=True``, ``mask=...``).

    Returns
    -------
    ndarray, shape (len(blocks) + 1, *x.shape)
        Entry 0 is ``x``, entry ``l`` the output of block ``l``.

    Examples
    --------
    >>> blocks = [TransformerBlock(8, 2, rng=seed) for seed in range(3)]
    >>> residual_stream(blocks, np.ones((4, 8))).shape
    (4, 4, 8)
    """
    blocks = list(blocks)
    if not all(isinstance(b, TransformerBlock) for b in blocks):
        raise TypeError("blocks must be a sequence of TransformerBlock")
    x = as_float_array(x, "x")
    states = [x]
    for block in blocks:
        states.append(block(states[-1], **call_kwargs))
    return np.stack(states)


def build_stack(n_blocks: int, d_model: int, n_heads: int, *, scaled_init: bool = False, rng: Seed = None,
                **block_kwargs: Any) -> list[TransformerBlock]:
    """``n_blocks`` freshly initialised blocks, drawing their weights from one generator in turn.

    Parameters
    ----------
    n_blocks, d_model, n_heads : int
    scaled_init : bool, default False
        Multiply the two projections that write into the residual stream (``attention.W_o`` and
        ``ffn.W_2``) by ``1 / sqrt(2 n_blocks)``, as GPT-2 does, so the stream does not grow with depth.
    rng : numpy.random.Generator or int, optional
    **block_kwargs
        Passed to :class:`TransformerBlock` (``norm=``, ``d_ff=``, ``dtype=`` ...).

    Examples
    --------
    >>> blocks = build_stack(4, 8, 2, scaled_init=True, rng=0)
    >>> len(blocks), blocks[0].norm
    (4, 'pre')
    """
    n_blocks = check_positive_int(n_blocks, "n_blocks")
    rng = as_generator(rng)
    blocks = [TransformerBlock(d_model, n_heads, rng=rng, **block_kwargs) for _ in range(n_blocks)]
    if scaled_init:
        factor = 1.0 / math.sqrt(2 * n_blocks)
        for block in blocks:
            block.attention.W_o = block.attention.W_o * factor
            block.ffn.W_2 = block.ffn.W_2 * factor
    return blocks


def residual_statistics(states: ArrayLike) -> dict[str, np.ndarray]:
    """How the residual stream evolves through a stack, from :func:`residual_stream`'s output.

    Parameters
    ----------
    states : array_like, shape (n_blocks + 1, ..., seq, d_model)

    Returns
    -------
    dict of str to ndarray
        ``"rms"`` (n_blocks + 1,): root mean square of the activations after each block;
        ``"cosine"`` (n_blocks + 1,): mean cosine similarity of each token with its input vector;
        ``"update"`` (n_blocks,): mean ``|x_out - x_in| / |x_in|`` per token, how much each block rewrites.

    Examples
    --------
    >>> stats = residual_statistics(np.stack([np.ones((3, 4)), 2 * np.ones((3, 4))]))
    >>> stats["rms"], stats["cosine"], stats["update"]
    (array([1., 2.]), array([1., 1.]), array([1.]))
    """
    states = as_float_array(states, "states")
    if states.ndim < 3 or states.shape[0] < 2:
        raise ValueError("states must have shape (n_blocks + 1, ..., seq, d_model) with n_blocks >= 1, "
                         f"got {states.shape}")
    check_finite(states, "states")
    norms = np.linalg.norm(states, axis=-1)  # (n_blocks + 1, ..., seq)
    if not norms.all():
        raise ValueError("states contain an all-zero token vector: its direction (cosine) is undefined")
    depth = states.shape[0]
    per_layer = (depth, -1)  # statistics average over every token of every example
    rms = np.sqrt(np.mean(states.reshape(depth, -1) ** 2, axis=1))
    cosine = np.sum(states * states[0], axis=-1) / (norms * norms[0])  # (n_blocks + 1, ..., seq)
    update = np.linalg.norm(np.diff(states, axis=0), axis=-1) / norms[:-1]  # (n_blocks, ..., seq)
    return {"rms": rms, "cosine": cosine.reshape(per_layer).mean(axis=1),
            "update": update.reshape(depth - 1, -1).mean(axis=1)}


@lru_cache(maxsize=32)
def stack_statistics(n_blocks: int, norm: str, scaled_init: bool, *, d_model: int = 64, n_heads: int = 4,
                     seq_len: int = 16, seed: int = 0) -> dict[str, np.ndarray]:
    """Residual-stream statistics of ``n_blocks`` random blocks on random tokens (causal attention).

    Returns :func:`residual_statistics` of the stack; the same seed gives the same tokens and
    the same weights for every setting, so settings differ only in what they change.

    Examples
    --------
    >>> stats = stack_statistics(4, "post", False)
    >>> stats["rms"].shape, stats["update"].shape
    ((5,), (4,))
    """
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((seq_len, d_model))  # (seq, d_model), unit-variance tokens
    blocks = build_stack(n_blocks, d_model, n_heads, norm=norm, scaled_init=scaled_init, rng=rng)
    stats = residual_statistics(residual_stream(blocks, x, causal=True))
    for values in stats.values():
        values.setflags(write=False)  # cached: nobody may edit them
    return stats
