"""Attention weights as heatmaps: one head, or every head side by side."""

from __future__ import annotations

import math
import numbers
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from mha.plotting.style import MAX_WIDTH_IN, WEIGHTS_CMAP, CourseFigure, new_figure
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = ["plot_attention", "plot_heads", "draw_weights", "HeadPanel"]

#: Above this many tokens, tick labels would overlap: positions are shown instead of words.
MAX_LABELLED_TOKENS = 40
#: Per-head panels are small: beyond this many tokens they show positions, not words.
MAX_HEAD_LABELS = 16
#: The width of a character of 10-pt text, in inches (the hand-made layout of plot_heads).
CHAR_IN = 0.085
#: The colour scale right of the panels, in inches: a gap, the bar, its values at 10 pt (as wide as the
#: widest, see _values_width) and its label turned upright (0.165 in), with a little room around.
SCALE_GAP_IN, SCALE_BAR_IN, SCALE_LABEL_IN = 0.2, 0.15, 0.19
#: A suptitle's line at 12 pt (matplotlib's "large"): about this many inches a character, and its height.
TITLE_CHAR_IN, TITLE_LINE_IN = 0.095, 0.22


def check_weights(weights: ArrayLike, ndim: int, shape_hint: str) -> np.ndarray:
    """``weights`` as a float array of ``ndim`` dimensions, or a ValueError naming ``shape_hint``."""
    weights = as_float_array(weights, "weights")
    if weights.ndim != ndim:
        raise ValueError(f"weights must have shape {shape_hint}, got {weights.shape}")
    return weights


@overload
def check_tokens(tokens: Sequence[str], size: int, name: str, role: str = ...) -> list[str]: ...
@overload
def check_tokens(tokens: None, size: int, name: str, role: str = ...) -> None: ...
@overload
def check_tokens(tokens: Sequence[str] | None, size: int, name: str,
                  role: str = ...) -> list[str] | None: ...
def check_tokens(tokens: Sequence[str] | None, size: int, name: str,
                  role: str = "queries") -> list[str] | None:
    """``tokens`` as a list of str, one per query (or key) of the weights, or a clear error."""
    if tokens is None:
        return None
    labels = [str(t) for t in tokens]
    if len(labels) != size:
        raise ValueError(f"{name} has {len(labels)} tokens but the weights have {size} {role}")
    return labels


def draw_weights(ax: Axes, weights: np.ndarray, tokens_q: Sequence[str] | None,
                 tokens_k: Sequence[str] | None, *, title: str | None = None, vmax: float | None = None,
                 show_ylabels: bool = True) -> AxesImage:
    """Draw one (seq_q, seq_k) weight matrix on ``ax``: queries down, keys across. Returns the image."""
    seq_q, seq_k = weights.shape
    image = ax.imshow(weights, cmap=WEIGHTS_CMAP, vmin=0.0, vmax=vmax if vmax else 1.0,
                      interpolation="nearest", aspect="auto")
    for axis, tokens, size in ((ax.xaxis, tokens_k, seq_k), (ax.yaxis, tokens_q, seq_q)):
        if tokens is not None and size <= MAX_LABELLED_TOKENS:
            axis.set_ticks(range(size), labels=tokens)
        else:
            step = max(1, size // 8)
            axis.set_ticks(range(0, size, step))
    if tokens_k is not None and seq_k <= MAX_LABELLED_TOKENS:
        ax.tick_params(axis="x", labelrotation=90)
    if not show_ylabels:
        ax.tick_params(axis="y", labelleft=False)
    ax.set_xlabel("key (attended to)")
    if show_ylabels:
        ax.set_ylabel("query (attending)")
    if title:
        ax.set_title(title)
    return image


def plot_attention(weights: ArrayLike, tokens_q: Sequence[str] | None = None,
                   tokens_k: Sequence[str] | None = None, *, title: str = "Attention weights") -> Figure:
    """Heatmap of one attention matrix, with a colour bar.

    Parameters
    ----------
    weights : array_like, shape (seq_q, seq_k)
        Rows are queries, columns keys; each row sums to 1 (or 0 if fully masked).
    tokens_q, tokens_k : sequence of str, optional
        Labels; ``tokens_k`` defaults to ``tokens_q`` for self-attention.
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_attention(np.eye(3), ["a", "b", "c"])
    >>> fig.axes[0].get_title(), fig.axes[0].get_xlabel()
    ('Attention weights', 'key (attended to)')
    """
    weights = check_weights(weights, 2, "(seq_q, seq_k)")
    seq_q, seq_k = weights.shape
    tokens_k = tokens_q if tokens_k is None and seq_q == seq_k else tokens_k
    tokens_q = check_tokens(tokens_q, seq_q, "tokens_q")
    tokens_k = check_tokens(tokens_k, seq_k, "tokens_k", "keys")
    side = min(8.0, 2.0 + 0.3 * max(seq_q, seq_k))
    fig = new_figure(side + 1.0, side, alt_text=(
        f"{title}: heatmap of attention weights, {seq_q} queries down and {seq_k} keys across; "
        f"brighter cells carry more weight{_strongest(weights, tokens_q, tokens_k)}."))
    ax = fig.add_subplot()
    image = draw_weights(ax, weights, tokens_q, tokens_k, title=title)
    fig.colorbar(image, ax=ax, label="weight", shrink=0.8)
    return fig


@dataclass
class HeadPanel:
    """Where one head's map sits on a :func:`plot_heads` figure, and what was drawn there.

    The panels share one canvas Axes whose data coordinates are inches from the figure's bottom-left
    corner (one Axes for all heads: every matplotlib Axes is slow to build, and a live widget redraws the
    whole figure on every slider move).

    Attributes
    ----------
    ax : matplotlib.axes.Axes
        The canvas shared by every panel.
    extent : tuple of float
        ``(left, right, bottom, top)`` of the map, in inches.
    shape : tuple of int
        ``(seq_q, seq_k)`` of the map.
    image : matplotlib.image.AxesImage
        The map; ``image.get_array()`` is this head's weights.
    title : matplotlib.text.Text
    lines : list of matplotlib.lines.Line2D
        Marks added with :meth:`plot`.
    """

    ax: Any
    extent: tuple[float, float, float, float]
    shape: tuple[int, int]
    image: Any = None
    title: Any = None
    lines: list = field(default_factory=list)

    def to_canvas(self, keys: ArrayLike, queries: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Canvas coordinates (inches) of the centres of cells ``(query, key)``; queries run down."""
        left, right, bottom, top = self.extent
        seq_q, seq_k = self.shape
        x = left + (np.asarray(keys, dtype=float) + 0.5) * (right - left) / seq_k
        y = top - (np.asarray(queries, dtype=float) + 0.5) * (top - bottom) / seq_q
        return x, y

    def plot(self, keys: ArrayLike, queries: ArrayLike, **style: Any) -> Line2D:
        """Draw marks at cells ``(query, key)`` of this panel (``Axes.plot`` style); returns the line."""
        (line,) = self.ax.plot(*self.to_canvas(keys, queries), **style)
        self.lines.append(line)
        return line


def plot_heads(weights: ArrayLike, tokens_q: Sequence[str] | None = None,
               tokens_k: Sequence[str] | None = None, *, title: str | None = None,
               head_titles: Sequence[str] | None = None, ncols: int | None = None) -> CourseFigure:
    """Every head's attention matrix side by side, on one shared colour scale.

    Token labels go on the left column and bottom row when there are at most ``MAX_HEAD_LABELS`` tokens;
    longer sequences show positions instead. All panels are drawn on one canvas laid out by hand (see
    :class:`HeadPanel`), so that a live widget redraws many heads while the slider still moves;
    ``fig.head_panels`` lists the panels in head order.

    Parameters
    ----------
    weights : array_like, shape (n_heads, seq_q, seq_k)
        Per-head weights of one example, e.g. ``layer(x, return_weights=True)[1][0]``.
    tokens_q, tokens_k : sequence of str, optional
        Labels; ``tokens_k`` defaults to ``tokens_q`` for self-attention.
    title : str, optional
        Title over the whole figure.
    head_titles : sequence of str, optional
        One title per head; defaults to "head 0", "head 1", ...
    ncols : int, optional
        Heads per row; at most, and by default, as many as fit the book's column (``MAX_WIDTH_IN``):
        a larger number gives more rows, never narrower panels. Frames of one widget that pass the
        same ``ncols`` share a width.

    Returns
    -------
    matplotlib.figure.Figure
        With ``head_panels``, a tuple of :class:`HeadPanel`, one per head.

    Examples
    --------
    >>> w = np.full((4, 3, 3), 1 / 3)
    >>> fig = plot_heads(w, ["a", "b", "c"], title="Uniform")
    >>> [panel.title.get_text() for panel in fig.head_panels[:2]]
    ['head 0', 'head 1']
    """
    weights = check_weights(weights, 3, "(n_heads, seq_q, seq_k)")
    n_heads, seq_q, seq_k = weights.shape
    tokens_k = tokens_q if tokens_k is None and seq_q == seq_k else tokens_k
    tokens_q = check_tokens(tokens_q, seq_q, "tokens_q")
    tokens_k = check_tokens(tokens_k, seq_k, "tokens_k", "keys")
    whole = isinstance(ncols, numbers.Integral) and not isinstance(ncols, bool)
    if ncols is not None and not (whole and ncols >= 1):
        raise ValueError(f"ncols must be a positive whole number of heads per row, got {ncols!r}")
    if head_titles is None:
        head_titles = [f"head {h}" for h in range(n_heads)]
    elif len(head_titles) != n_heads:
        raise ValueError(f"head_titles has {len(head_titles)} entries for {n_heads} heads")
    words_q = tokens_q is not None and seq_q <= MAX_HEAD_LABELS
    words_k = tokens_k is not None and seq_k <= MAX_HEAD_LABELS
    # Everything below is in inches, for the book's column (mha.plotting.style): margins sized for the
    # longest label at 10 pt; a panel tall enough for one 10-pt token label per row; as many panels
    # side by side as fit MAX_WIDTH_IN, the others on further rows.
    char = CHAR_IN
    labels_q, labels_k = tokens_q or [], tokens_k or []  # used only where words_q / words_k
    left = 0.55 + (char * max(map(len, labels_q)) if words_q else 0.3)
    bottom = 0.5 + (char * max(map(len, labels_k)) if words_k else 0.3)
    labelled = max(seq_q if words_q else 0, seq_k if words_k else 0)
    vmax = float(weights.max()) or 1.0  # shared scale: heads are comparable at a glance
    values = [f"{value:.2g}" for value in (0.0, vmax / 2, vmax)]
    right, gap_x, gap_y = SCALE_GAP_IN + SCALE_BAR_IN + _values_width(values) + SCALE_LABEL_IN, 0.15, 0.4
    cell = min(3.0, max(1.6, 0.15 * labelled))
    fits = max(1, int((MAX_WIDTH_IN - left - right + gap_x) // (cell + gap_x)))
    ncols = min(n_heads, fits) if ncols is None else min(int(ncols), fits)
    nrows = math.ceil(n_heads / ncols)
    width = left + ncols * cell + (ncols - 1) * gap_x + right
    # the title over the whole figure, in as many lines as its width needs
    title_lines = textwrap.wrap(title, max(12, int((width - 0.2) / TITLE_CHAR_IN))) if title else []
    top = 0.4 + TITLE_LINE_IN * len(title_lines) + (0.1 if title_lines else 0.0)
    height = bottom + nrows * (cell + gap_y) + top - gap_y
    fig = new_figure(width, height, alt_text=(
        f"{title + ': ' if title else ''}{n_heads} heatmaps of attention weights, one per head, each with "
        f"{seq_q} queries down and {seq_k} keys across on a shared colour scale; brighter cells carry more "
        f"weight{_strongest(weights[0], tokens_q, tokens_k, 'in head 0')}."))
    fig.set_layout_engine(None)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    panels, ticks = [], []
    for h in range(n_heads):
        row, col = divmod(h, ncols)
        x0 = left + col * (cell + gap_x)
        y0 = bottom + (nrows - 1 - row) * (cell + gap_y)
        panel = HeadPanel(ax, (x0, x0 + cell, y0, y0 + cell), (seq_q, seq_k))
        panel.image = ax.imshow(weights[h], cmap=WEIGHTS_CMAP, vmin=0.0, vmax=vmax,
                                interpolation="nearest", extent=panel.extent, aspect="auto")
        ax.add_patch(Rectangle((x0, y0), cell, cell, fill=False, linewidth=0.8))
        panel.title = ax.text(x0 + cell / 2, y0 + cell + 0.03, head_titles[h], ha="center", va="bottom")
        if col == 0:  # query labels down the left column
            positions = _label_positions(seq_q, words_q)
            _, ys = panel.to_canvas(np.zeros(len(positions)), positions)
            for p, y in zip(positions, ys, strict=True):
                ax.text(x0 - 0.08, y, labels_q[p] if words_q else str(p), ha="right", va="center")
                ticks.append([(x0 - 0.05, y), (x0, y)])
        if row == nrows - 1 or h + ncols >= n_heads:  # key labels under the lowest panel of a column
            positions = _label_positions(seq_k, words_k)
            xs, _ = panel.to_canvas(positions, np.zeros(len(positions)))
            for p, x in zip(positions, xs, strict=True):
                ax.text(x, y0 - 0.08, labels_k[p] if words_k else str(p), ha="center", va="top",
                        rotation=90 if words_k else 0)
                ticks.append([(x, y0 - 0.05), (x, y0)])
        panels.append(panel)
    ax.add_collection(LineCollection(ticks, colors="black", linewidths=0.8))
    grid_top = bottom + nrows * (cell + gap_y) - gap_y
    _draw_colour_scale(ax, vmax, values, x=width - right + SCALE_GAP_IN, bottom=bottom, top=grid_top)
    ax.set_xlim(0.0, width)
    ax.set_ylim(0.0, height)
    ax.text(left + (ncols * cell + (ncols - 1) * gap_x) / 2, 0.08, "key (attended to)",
            ha="center", va="bottom")
    ax.text(0.1, bottom + (grid_top - bottom) / 2, "query (attending)", rotation=90, ha="left",
            va="center")
    if title_lines:
        fig.suptitle("\n".join(title_lines), y=1 - 0.1 / height, va="top")
    fig.head_panels = tuple(panels)
    return fig


def _label_positions(size: int, words: bool) -> list[int]:
    """Every position when words label the panel, else about four evenly spaced positions."""
    return list(range(size)) if words else list(range(0, size, max(1, size // 4)))


def _values_width(values: Sequence[str]) -> float:
    """Inches from the colour bar to its label: a gap, the widest of ``values`` at 10 pt (DejaVu Sans:
    digits 0.636 em, the point 0.318 em), a gap."""
    em = 10 / 72
    return 0.06 + max(sum(0.318 if c == "." else 0.636 for c in value) for value in values) * em + 0.05


def _draw_colour_scale(ax, vmax: float, values: Sequence[str], *, x: float, bottom: float,
                       top: float) -> None:
    """A colour bar drawn on the canvas: the colormap from 0 (bottom) to ``vmax`` (top), labelled with
    ``values`` (of 0, ``vmax / 2`` and ``vmax``) and its name."""
    bar_width = SCALE_BAR_IN
    gradient = np.linspace(vmax, 0.0, 128)[:, None]  # (128, 1), top row first
    ax.imshow(gradient, cmap=WEIGHTS_CMAP, vmin=0.0, vmax=vmax, interpolation="bilinear",
              extent=(x, x + bar_width, bottom, top), aspect="auto")
    ax.add_patch(Rectangle((x, bottom), bar_width, top - bottom, fill=False, linewidth=0.8))
    for value, label in zip((0.0, vmax / 2, vmax), values, strict=True):
        y = bottom + (top - bottom) * value / vmax
        ax.text(x + bar_width + 0.06, y, label, ha="left", va="center")
    ax.text(x + bar_width + _values_width(values), (bottom + top) / 2, "weight", rotation=90, ha="left",
            va="center")


def _strongest(weights: np.ndarray, tokens_q, tokens_k, where: str = "") -> str:
    """A clause naming the strongest query-to-key link, for alt text."""
    i, j = np.unravel_index(int(np.argmax(weights)), weights.shape)
    name_q = tokens_q[i] if tokens_q is not None else f"position {i}"
    name_k = tokens_k[j] if tokens_k is not None else f"position {j}"
    return f"; the strongest link{' ' + where if where else ''} is {name_q} to {name_k} ({weights[i, j]:.2f})"
