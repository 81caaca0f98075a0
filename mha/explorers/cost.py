"""Cost widget: FLOPs and bytes of one forward pass, item by item, by heads, sequence length and width."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import partial

import numpy as np
from matplotlib.figure import Figure

from mha import cost
from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.explorers.live import live_int
from mha.plotting.cost import plot_cost_breakdown
from mha.typing import DTypeLike

__all__ = ["render_cost", "cost_explorer"]


def render_cost(n_heads: int, seq_len: int, d_model: int, *, batch: int = 1, dtype: DTypeLike = np.float32,
                flops_range: tuple[float, float] | None = None,
                bytes_range: tuple[float, float] | None = None) -> Figure:
    """One frame: :func:`mha.plotting.cost.plot_cost_breakdown` of the cost model at these sizes.

    Examples
    --------
    >>> fig = render_cost(8, 1024, 512)
    >>> fig.axes[0].get_title()
    'compute: 4.34 GFLOP in total'
    """
    flop_count = cost.flops(batch, seq_len, d_model, n_heads)
    memory_count = cost.memory_bytes(batch, seq_len, d_model, n_heads, dtype=dtype)
    title = (f"{n_heads} heads of d_head = {d_model // n_heads}, {seq_len} tokens, d_model = {d_model} "
             f"({np.dtype(dtype).name})")
    return plot_cost_breakdown(flop_count, memory_count, title=title, flops_range=flops_range,
                               bytes_range=bytes_range)


#: Largest values of the live sliders (a running kernel).
LIVE_MAX = {"n_heads": 64, "seq_len": 32768, "d_model": 8192}


def _common_ranges(n_heads, seq_len, d_model, batch, dtype):
    """Axis limits that hold every frame, so that bars can be compared across slider positions."""
    flop_values, byte_values = [], []
    for h, n, d in itertools.product(n_heads, seq_len, d_model):
        flop_values += [v for k, v in cost.flops(batch, n, d, h).as_dict().items() if k != "total"]
        memory = cost.memory_bytes(batch, n, d, h, dtype=dtype).as_dict()
        byte_values += [v for k, v in memory.items() if k != "peak"]
    return (min(flop_values) / 2, max(flop_values) * 40), (min(byte_values) / 2, max(byte_values) * 40)


def cost_explorer(n_heads: Sequence[int] = (1, 8, 64), seq_len: Sequence[int] = (256, 1024, 4096, 16384),
                  d_model: Sequence[int] = (512, 4096), *, batch: int = 1,
                  dtype: DTypeLike = np.float32) -> FrameExplorer:
    """Sliders for heads, sequence length and ``d_model`` over :func:`render_cost` frames (shared axes).

    Every ``d_model`` must be divisible by every ``n_heads``.

    Examples
    --------
    >>> explorer = cost_explorer(n_heads=[1, 8], seq_len=[128], d_model=[512])
    >>> sorted(explorer.frames)
    [(1, 128, 512), (8, 128, 512)]
    """
    n_heads = slider_values("n_heads", n_heads)
    seq_len = slider_values("seq_len", seq_len)
    d_model = slider_values("d_model", d_model)
    bad = [(h, d) for h in n_heads for d in d_model if d % h]
    if bad:
        raise ValueError(
            f"every d_model must be divisible by every n_heads; not so for (n_heads, d_model) {bad}")
    live = {"n_heads": live_int(1, LIVE_MAX["n_heads"], description="heads"),
            "seq_len": live_int(16, LIVE_MAX["seq_len"], step=16, description="sequence length"),
            "d_model": live_int(64, LIVE_MAX["d_model"], step=64, description="d_model")}
    # Axes hold every frame and every live value (the smallest and largest sizes the live sliders reach).
    extremes = [(*values, low, LIVE_MAX[name]) for name, values, low in
                (("n_heads", n_heads, 1), ("seq_len", seq_len, 16), ("d_model", d_model, 64))]
    flops_range, bytes_range = _common_ranges(extremes[0], extremes[1], extremes[2], batch, dtype)
    render = partial(render_cost, batch=batch, dtype=dtype, flops_range=flops_range, bytes_range=bytes_range)
    return frame_explorer(
        render, {"n_heads": list(n_heads), "seq_len": list(seq_len), "d_model": list(d_model)},
        labels={"n_heads": "heads", "seq_len": "sequence length", "d_model": "d_model"},
        initial={name: values[len(values) // 2] for name, values in
                 (("n_heads", n_heads), ("seq_len", seq_len), ("d_model", d_model))},
        title="Where one forward pass spends its FLOPs and bytes (the cost model)",
        caption="Orange items grow with the square of the sequence length. Axes are shared by all frames.",
        live=live,
    )
