"""Widget of the transformer-block chapter: the residual stream through a deep stack of random blocks.

:func:`render_stack` is pure (usable on its own, e.g. by ``benchmarks/bench_widgets.py``); the statistics
behind it (:func:`mha.lab.transformer_block.stack_statistics`) are cached, so the frames share them.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.explorers.live import live_int
from mha.lab.transformer_block import stack_statistics
from mha.plotting.transformer_block import plot_stack_statistics

__all__ = ["render_stack", "stack_explorer"]

#: Fixed y limits so that frames of the widget compare at a glance.
LIMITS = {"rms": (0.0, 7.0), "cosine": (-0.2, 1.05), "update": (0.0, 1.2)}


def render_stack(n_blocks: int = 16, init: str = "standard") -> Figure:
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
    if init not in ("standard", "scaled"):
        raise ValueError(f"init must be 'standard' or 'scaled', got {init!r}")
    stats = {f"{norm}-norm": stack_statistics(n_blocks, norm, init == "scaled") for norm in ("pre", "post")}
    return plot_stack_statistics(stats, limits=LIMITS,
                                 title=f"{n_blocks} random blocks, {init} initialisation")


def stack_explorer(depths: Sequence[int] = (4, 8, 16, 32),
                   inits: Sequence[str] = ("standard", "scaled")) -> FrameExplorer:
    """Sliders: depth x initialisation -> residual-stream curves for pre- and post-norm.

    Examples
    --------
    >>> sorted(stack_explorer(depths=(2,), inits=("standard", "scaled")).frames)
    [(2, 'scaled'), (2, 'standard')]
    """
    depths, inits = slider_values("depths", depths), slider_values("inits", inits)
    return frame_explorer(
        render_stack, {"n_blocks": list(depths), "init": list(inits)},
        labels={"n_blocks": "blocks", "init": "output init"},
        title="Pre-norm or post-norm: the residual stream through a stack",
        caption="Scaled: W_o and W_2 multiplied by 1/sqrt(2 x blocks) at initialisation, as in GPT-2.",
        live={"n_blocks": live_int(1, 48, description="blocks")},
    )
