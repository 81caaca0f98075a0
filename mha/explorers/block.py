"""Widget of the transformer-block chapter: the residual stream through a deep stack of random blocks.

:func:`render_stack` is pure (usable on its own, e.g. by ``benchmarks/bench_widgets.py``); the statistics
behind it are computed once per setting and cached, so the explorer's frames share them.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["stack_statistics", "render_stack", "stack_explorer"]

#: Fixed y limits so that frames of the widget compare at a glance.
LIMITS = {"rms": (0.0, 7.0), "cosine": (-0.2, 1.05), "update": (0.0, 1.2)}


@lru_cache(maxsize=32)
def stack_statistics(n_blocks: int, norm: str, scaled_init: bool, *, d_model: int = 64, n_heads: int = 4,
                     seq_len: int = 16, seed: int = 0) -> dict[str, np.ndarray]:
    """Residual-stream statistics of ``n_blocks`` random blocks on random tokens (causal attention).

    Returns :func:`mha.block.residual_statistics` of the stack; the same seed gives the same tokens and
    the same weights for every setting, so settings differ only in what they change.

    Examples
    --------
    >>> stats = stack_statistics(4, "post", False)
    >>> stats["rms"].shape, stats["update"].shape
    ((5,), (4,))
    """
    from mha.block import build_stack, residual_statistics, residual_stream

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((seq_len, d_model))  # (seq, d_model), unit-variance tokens
    blocks = build_stack(n_blocks, d_model, n_heads, norm=norm, scaled_init=scaled_init, rng=rng)
    stats = residual_statistics(residual_stream(blocks, x, causal=True))
    for values in stats.values():
        values.setflags(write=False)  # cached: nobody may edit them
    return stats


def render_stack(n_blocks: int = 16, init: str = "standard"):
    """One frame: pre-norm and post-norm stacks of ``n_blocks`` blocks, with ``init`` "standard" or
    "scaled" (GPT-2's ``1/sqrt(2 n_blocks)`` on the projections that write into the stream).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> render_stack(4, "scaled").get_suptitle()
    '4 random blocks, scaled initialisation'
    """
    from mha.plotting.block import plot_stack_statistics

    if init not in ("standard", "scaled"):
        raise ValueError(f"init must be 'standard' or 'scaled', got {init!r}")
    stats = {f"{norm}-norm": stack_statistics(n_blocks, norm, init == "scaled") for norm in ("pre", "post")}
    return plot_stack_statistics(stats, limits=LIMITS,
                                 title=f"{n_blocks} random blocks, {init} initialisation")


def stack_explorer(depths=(4, 8, 16, 32), inits=("standard", "scaled")):
    """Sliders: depth x initialisation -> residual-stream curves for pre- and post-norm.

    Examples
    --------
    >>> sorted(stack_explorer(depths=(2,), inits=("standard", "scaled")).frames)
    [(2, 'scaled'), (2, 'standard')]
    """
    from mha.explorers._live import live_int
    from mha.widgets import frame_explorer

    return frame_explorer(
        render_stack, {"n_blocks": list(depths), "init": list(inits)},
        labels={"n_blocks": "blocks", "init": "output init"},
        title="Pre-norm or post-norm: the residual stream through a stack",
        caption="Scaled: W_o and W_2 multiplied by 1/sqrt(2 x blocks) at initialisation, as in GPT-2.",
        live={"n_blocks": live_int(1, 48, description="blocks")},
    )
