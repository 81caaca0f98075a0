"""Cost pictures: what a forward pass spends, item by item, and how costs grow with length or heads."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Collection, Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from mha.cost import FlopCount, MemoryCount, format_bytes, format_flops
from mha.plotting.style import MAX_WIDTH_IN, SERIES_COLORS, new_figure
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = [
    "loglog_slope",
    "plot_cost_breakdown",
    "plot_growth",
    "plot_heads_tradeoff",
    "QUADRATIC_ITEMS",
]

#: Items of :class:`mha.cost.FlopCount` and :class:`mha.cost.MemoryCount` that grow with seq_q * seq_k.
QUADRATIC_ITEMS = frozenset({"scores", "softmax", "weighted_sum"})
_LINEAR_COLOR, _QUADRATIC_COLOR = SERIES_COLORS[0], SERIES_COLORS[1]
_FLOP_ITEMS = ("q_projection", "k_projection", "v_projection", "scores", "softmax", "weighted_sum",
               "output_projection")
_BYTE_ITEMS = ("inputs", "qkv", "scores", "context", "output", "kv_cache")


def loglog_slope(x: ArrayLike, y: ArrayLike, *, last: int = 3) -> float:
    """Slope of ``log y`` against ``log x`` over the ``last`` points: the exponent ``p`` in ``y ∝ x**p``.

    Examples
    --------
    >>> n = np.array([64, 128, 256, 512])
    >>> round(loglog_slope(n, 3.0 * n**2), 6)
    2.0
    """
    x, y = as_float_array(x, "x"), as_float_array(y, "y")
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D and of equal length, got shapes {x.shape} and {y.shape}")
    if not 2 <= last <= len(x):
        raise ValueError(f"last must be between 2 and len(x) = {len(x)}, got {last}")
    if np.any(x[-last:] <= 0) or np.any(y[-last:] <= 0):
        raise ValueError("a log-log slope needs positive x and y")
    slope, _ = np.polyfit(np.log(x[-last:]), np.log(y[-last:]), 1)
    return float(slope)


def _bar_panel(ax, names, values, *, formatter, base, xlabel, limits, labels=None):
    y = np.arange(len(names))[::-1]  # first item on top
    colors = [_QUADRATIC_COLOR if name in QUADRATIC_ITEMS else _LINEAR_COLOR for name in names]
    ax.barh(y, values, color=colors, height=0.7)
    ax.set_xscale("log")
    ax.set_xlim(*limits)
    # Ticks at whole units (1 MiB, 1 GiB, ...), labelled in words: easier to read than 10^6, and much
    # cheaper to draw than matplotlib's mathtext labels (a third of a frame's time otherwise).
    first, last = (math.ceil(math.log(v, base) - 1e-9) for v in limits)
    ticks = [float(base) ** p for p in range(first, last)]
    ax.set_xticks(ticks, labels=[formatter(t) for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(y, labels=labels or [name.replace("_", " ") for name in names])
    for yi, value in zip(y, values, strict=True):
        ax.text(value * 1.15, yi, formatter(value), va="center", fontsize=8)
    ax.set_xlabel(xlabel)


def _limits(values, given):
    if given is not None:
        return given
    positive = [v for v in values if v > 0]
    return (min(positive) / 3, max(positive) * 30)


def plot_cost_breakdown(flop_count: FlopCount, memory_count: MemoryCount, *, title: str | None = None,
                        flops_range: tuple[float, float] | None = None,
                        bytes_range: tuple[float, float] | None = None) -> Figure:
    """FLOPs and activation bytes of one forward pass as two bar charts, quadratic items highlighted.

    Parameters
    ----------
    flop_count : mha.cost.FlopCount
    memory_count : mha.cost.MemoryCount
    title : str, optional
    flops_range, bytes_range : (float, float), optional
        Fixed x-axis limits (log scale), so frames of a widget can be compared; default: fit the data.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from mha import cost
    >>> fig = plot_cost_breakdown(cost.flops(1, 64, 32, 4), cost.memory_bytes(1, 64, 32, 4))
    >>> [ax.get_xlabel() for ax in fig.axes]
    ['FLOPs (log scale)', 'bytes (log scale)']
    """
    from matplotlib.patches import Patch

    flop_values = [getattr(flop_count, name) for name in _FLOP_ITEMS]
    byte_values = [getattr(memory_count, name) for name in _BYTE_ITEMS]
    # One chart under the other, as wide as the column, margins in inches for their labels (fixed
    # margins: constrained layout would cost more than the drawing); the title in as many lines as
    # the width needs, the legend under the lower chart.
    title_lines = textwrap.wrap(title, 52) if title else []
    width, panel, gap, left, bottom = MAX_WIDTH_IN, 2.2, 0.95, 1.45, 0.95
    top = 0.35 + 0.22 * max(len(title_lines), 2 if title else 0)  # frames of a widget keep one height
    height = top + 2 * panel + gap + bottom
    fig = new_figure(width, height)
    fig.set_layout_engine(None)
    fig.subplots_adjust(left=left / width, right=1 - 0.15 / width, bottom=bottom / height,
                        top=1 - top / height, hspace=gap / panel)
    ax_flops, ax_bytes = fig.subplots(2, 1)
    _bar_panel(ax_flops, _FLOP_ITEMS, flop_values, formatter=format_flops, base=1000,
               xlabel="FLOPs (log scale)", limits=_limits(flop_values, flops_range))
    ax_flops.set_title(f"compute: {format_flops(flop_count.total)} in total", fontsize=10)
    _bar_panel(ax_bytes, _BYTE_ITEMS, byte_values, formatter=format_bytes, base=1024,
               xlabel="bytes (log scale)", limits=_limits(byte_values, bytes_range),
               labels=[*_BYTE_ITEMS[:-1], "kv cache\n(decoding)"])
    ax_bytes.set_title(f"memory: {format_bytes(memory_count.peak)} at the peak", fontsize=10)
    handles = [Patch(color=_LINEAR_COLOR, label="grows like seq"),
               Patch(color=_QUADRATIC_COLOR, label="grows like seq²")]
    fig.legend(handles=handles, loc="lower center", ncols=2, frameon=False)
    if title_lines:
        fig.suptitle("\n".join(title_lines))
    return fig


def plot_growth(x: ArrayLike, panels: Mapping[str, Mapping[str, ArrayLike]], *,
                dashed: Collection[str] = (), xlabel: str = "sequence length (tokens)",
                title: str | None = None, fit_last: int = 3) -> Figure:
    """Log-log curves, one panel per quantity, each legend entry with its fitted slope.

    Parameters
    ----------
    x : array_like, shape (n,)
    panels : mapping of str to mapping of str to array_like
        Panel y-label -> {series label -> y values of shape (n,)}. Labels repeat colours across panels.
    dashed : collection of str
        Series labels drawn dashed without markers (use it for predictions; measurements are solid).
    xlabel, title : str
    fit_last : int
        Points used for the slope (see :func:`loglog_slope`): the long-length end.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> n = np.array([128, 256, 512])
    >>> fig = plot_growth(n, {"FLOPs": {"scores": n**2, "projections": 10 * n}})
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['scores (slope 2.00)', 'projections (slope 1.00)']
    """
    x = as_float_array(x, "x")
    if not panels:
        raise ValueError("panels must name at least one quantity to plot")
    labels = list(dict.fromkeys(label for series in panels.values() for label in series))
    colors = {label: SERIES_COLORS[i % len(SERIES_COLORS)] for i, label in enumerate(labels)}
    fig = new_figure(4.2 * len(panels) + 0.4, 3.6)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (ylabel, series) in zip(axes, panels.items(), strict=True):
        for label, y in series.items():
            y = as_float_array(y, label)
            slope = loglog_slope(x, y, last=fit_last)
            style = dict(linestyle="--") if label in dashed else dict(marker="o", markersize=4)
            slope = round(slope, 2) + 0.0  # never print "-0.00"
            ax.loglog(x, y, color=colors[label], label=f"{label} (slope {slope:.2f})", **style)
        _set_log2_ticks(ax, x)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return fig


def _unit(largest: float, units: Sequence[str], base: float) -> tuple[float, str]:
    """The power of ``base`` (and its unit name) that brings ``largest`` below ``base``."""
    power = 0
    while largest >= base and power < len(units) - 1:
        largest /= base
        power += 1
    return base**power, units[power]


def _set_log2_ticks(ax, x) -> None:
    """Ticks at the data's own x values, written as plain numbers (128, not 2^7; 16k for 16384)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(x, labels=[f"{v / 1024:g}k" if v >= 1024 and v % 1024 == 0 else f"{v:g}" for v in x])
    ax.minorticks_off()


def plot_heads_tradeoff(n_heads: ArrayLike, *, parameters: ArrayLike, flops: ArrayLike,
                        score_bytes: ArrayLike, seconds: ArrayLike | None = None,
                        title: str | None = None) -> Figure:
    """What changes with the number of heads at a fixed ``d_model``: one small panel per quantity.

    Parameters
    ----------
    n_heads : array_like of int, shape (n,)
    parameters, flops, score_bytes : array_like, shape (n,)
        From the cost model.
    seconds : array_like, shape (n,), optional
        Measured time per forward pass.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> h = [1, 2, 4]
    >>> fig = plot_heads_tradeoff(h, parameters=[10, 10, 10], flops=[5e9, 5e9, 6e9], score_bytes=[1, 2, 4])
    >>> [(ax.get_title(), ax.get_ylabel()) for ax in fig.axes]
    [('parameters', 'count'), ('FLOPs', 'GFLOP'), ('score memory', 'bytes')]
    """
    n_heads = as_float_array(n_heads, "n_heads")
    panels = {"parameters": (parameters, ("count", "thousands", "millions", "billions"), 1000.0),
              "FLOPs": (flops, ("FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP"), 1000.0),
              "score memory": (score_bytes, ("bytes", "KiB", "MiB", "GiB"), 1024.0)}
    if seconds is not None:
        seconds = as_float_array(seconds, "seconds")
        panels["measured time"] = (seconds * 1e3, ("ms", "s"), 1000.0)
    fig = new_figure(3.0 * len(panels), 3.0)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for i, (ax, (name, (values, units, base))) in enumerate(zip(axes, panels.items(), strict=True)):
        values = as_float_array(values, name)
        if values.shape != n_heads.shape:
            raise ValueError(f"{name} has shape {values.shape}, n_heads has {n_heads.shape}")
        scale, unit = _unit(float(values.max()), units, base)
        ax.plot(n_heads, values / scale, marker="o", color=SERIES_COLORS[i])
        # A linear x axis: on a log axis, a quantity proportional to n_heads would curve up like an
        # exponential. Ticks at the data's values, leaving out the ones crowded near the origin.
        ax.set_xticks([h for h in n_heads if h == n_heads[0] or h >= n_heads.max() / 8])
        ax.set_xlim(0, n_heads.max() * 1.05)
        ax.set_ylim(0, values.max() / scale * 1.15)  # from zero: a flat line must look flat
        ax.set_title(name)
        ax.set_ylabel(unit)
        ax.set_xlabel("n_heads (d_model fixed)")
    if title:
        fig.suptitle(title)
    return fig
