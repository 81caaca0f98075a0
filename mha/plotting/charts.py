"""Two general charts the later chapters share: curves over one axis, and a signed matrix as a heatmap."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mha.plotting.style import MAX_WIDTH_IN, MIN_FONT_PT, SERIES_COLORS, SIGNED_CMAP, new_figure
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = ["plot_curves", "draw_curves", "describe_curves", "plot_matrix"]

#: Line styles cycled with the colours, so series stay apart in greyscale too.
LINE_STYLES = ("-", "--", "-.", ":")


def draw_curves(ax: Axes, x: ArrayLike, curves: Mapping[str, ArrayLike], *, xlabel: str, ylabel: str,
                title: str | None = None, logx: bool = False, logy: bool = False, markers: bool = False,
                legend: bool = True) -> None:
    """Draw one line per entry of ``curves`` (label -> y values over ``x``) on ``ax``."""
    x = as_float_array(x, "x")
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {x.shape}")
    if not curves:
        raise ValueError("curves is empty: give at least one label -> values entry")
    for i, (label, values) in enumerate(curves.items()):
        values = as_float_array(values, f"curves[{label!r}]")
        if values.shape != x.shape:
            raise ValueError(f"curves[{label!r}] has shape {values.shape}, x has {x.shape}")
        ax.plot(x, values, label=label, color=SERIES_COLORS[i % len(SERIES_COLORS)],
                linestyle=LINE_STYLES[i % len(LINE_STYLES)],
                marker="o" if markers else None, markersize=3)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    if legend and len(curves) > 1:
        ax.legend(fontsize="small")


def describe_curves(curves: Mapping[str, ArrayLike], *, xlabel: str, ylabel: str,
                    title: str | None = None) -> str:
    """Alt text for a line chart: what is plotted against what, and where each curve starts and ends."""
    ends = "; ".join(f"{label} from {float(np.ravel(values)[0]):.3g} to {float(np.ravel(values)[-1]):.3g}"
                     for label, values in curves.items())
    return f"{title + ': ' if title else ''}Line chart of {ylabel} against {xlabel}: {ends}."


def plot_curves(x: ArrayLike, curves: Mapping[str, ArrayLike], *, xlabel: str, ylabel: str,
                title: str | None = None, logx: bool = False, logy: bool = False, markers: bool = False,
                size: tuple[float, float] = (6.0, 3.2), alt_text: str | None = None) -> Figure:
    """Line chart of several series over a shared x axis.

    Parameters
    ----------
    x : array_like, shape (n,)
    curves : mapping of str to array_like of shape (n,)
        Label -> values; the labels go in the legend.
    xlabel, ylabel : str
    title : str, optional
    logx, logy : bool
        Logarithmic axes.
    markers : bool
        Mark every point (useful for few, integer x values).
    size : (float, float)
        Width and height in inches.
    alt_text : str, optional
        Description for readers who cannot see the figure; by default one is made from the labels and
        each curve's range.

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_curves([0, 1, 2], {"a": [0, 1, 4], "b": [0, 1, 2]}, xlabel="x", ylabel="y")
    >>> [line.get_label() for line in fig.axes[0].lines]
    ['a', 'b']
    >>> fig.describe()
    'Line chart of y against x: a from 0 to 4; b from 0 to 2.'
    """
    if alt_text is None:
        alt_text = describe_curves(curves, xlabel=xlabel, ylabel=ylabel, title=title)
    fig = new_figure(*size, alt_text=alt_text)
    draw_curves(fig.add_subplot(), x, curves, xlabel=xlabel, ylabel=ylabel, title=title, logx=logx,
                logy=logy, markers=markers)
    return fig


def plot_matrix(matrix: ArrayLike, *, xlabel: str, ylabel: str, title: str | None = None,
                colorbar_label: str = "value", annotate: bool = False, xticks: Sequence[str] | None = None,
                yticks: Sequence[str] | None = None, size: tuple[float, float] | None = None,
                alt_text: str | None = None) -> Figure:
    """Heatmap of a signed matrix on a diverging colour scale centred on zero.

    Parameters
    ----------
    matrix : array_like, shape (rows, cols)
    xlabel, ylabel : str
    title : str, optional
    colorbar_label : str
    annotate : bool
        Write each value in its cell (for small matrices, up to 16 x 16).
    xticks, yticks : sequence of str, optional
        Labels for the columns and rows.
    size : (float, float), optional
        Width and height in inches; sized from the matrix by default.
    alt_text : str, optional
        Description for readers who cannot see the figure; by default the size, axes and value range.

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_matrix(np.array([[0, 1], [-1, 0]]), xlabel="key", ylabel="query", annotate=True)
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['0', '1', '-1', '0']
    """
    matrix = as_float_array(matrix, "matrix")
    if matrix.ndim != 2:
        raise ValueError(f"matrix must be 2-D (rows, cols), got shape {matrix.shape}")
    rows, cols = matrix.shape
    if annotate and max(rows, cols) > 16:
        raise ValueError(f"annotate=True is for matrices up to 16 x 16, got {rows} x {cols}")
    if size is None:
        size = (min(9.0, 2.2 + 0.4 * cols), min(6.0, 1.6 + 0.4 * rows))
    if alt_text is None:
        alt_text = (f"{title + ': ' if title else ''}Heatmap of a {rows} x {cols} matrix, {ylabel} down and "
                    f"{xlabel} across, {colorbar_label} from {matrix.min():.3g} (blue) to "
                    f"{matrix.max():.3g} (red).")
    fig = new_figure(*size, alt_text=alt_text)
    ax = fig.add_subplot()
    limit = float(np.abs(matrix).max()) or 1.0
    image = ax.imshow(matrix, cmap=SIGNED_CMAP, vmin=-limit, vmax=limit, interpolation="nearest",
                      aspect="auto")
    if annotate:
        texts = {(r, c): f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
                 for (r, c), value in np.ndenumerate(matrix)}
        # Each value at 10 pt (mha.plotting.style) where it fits its cell; where it would not, the
        # colour and the alt text say it.
        cell = (min(size[0], MAX_WIDTH_IN) - 2.0) / cols  # inches: the plot's width over its columns
        if cell >= 0.09 * max(map(len, texts.values())):
            for (r, c), text in texts.items():
                ax.text(c, r, text, ha="center", va="center", fontsize=MIN_FONT_PT,
                        color="white" if abs(matrix[r, c]) > 0.6 * limit else "black")
    for axis, labels in ((ax.xaxis, xticks), (ax.yaxis, yticks)):
        if labels is not None:
            axis.set_ticks(range(len(labels)), labels=list(labels))
    if xticks is not None and max(map(len, xticks), default=0) > 2:
        ax.tick_params(axis="x", labelrotation=90)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    fig.colorbar(image, ax=ax, label=colorbar_label, shrink=0.85)
    return fig
