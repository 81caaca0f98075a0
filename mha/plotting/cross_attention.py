"""Cross-attention pictures: which source word each target word reads, per head or as links between words."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mha.plotting.heads import plot_heads
from mha.plotting.style import MAX_WIDTH_IN, SERIES_COLORS, new_figure
from mha.typing import ArrayLike, FloatArray
from mha.validation import as_float_array

__all__ = ["plot_alignment", "plot_links", "draw_links"]

#: Links lighter than this are not drawn: they would only grey the picture.
MIN_LINK_WEIGHT = 0.02
#: The reference marker: a hollow square in a colour that stands out on every viridis shade.
REFERENCE_COLOR = SERIES_COLORS[1]


def _check_reference(reference, seq_q: int, seq_k: int) -> np.ndarray | None:
    if reference is None:
        return None
    reference = np.asarray(reference)
    if reference.shape != (seq_q,) or reference.dtype.kind not in "iu":
        raise ValueError(f"reference must hold one key index per query, shape ({seq_q},) of int, "
                         f"got shape {reference.shape} and dtype {reference.dtype}")
    if reference.size and (reference.min() < 0 or reference.max() >= seq_k):
        raise ValueError(f"reference indices must lie in [0, {seq_k}), got {reference.tolist()}")
    return reference


def plot_alignment(weights: ArrayLike, tokens_q: Sequence[str], tokens_k: Sequence[str], *,
                   reference: ArrayLike | None = None, head_titles: Sequence[str] | None = None,
                   title: str | None = None) -> Figure:
    """Every head's cross-attention weights, with the expected alignment marked by hollow squares.

    Parameters
    ----------
    weights : array_like, shape (n_heads, seq_q, seq_k)
        Target (query) words down, source (key) words across.
    tokens_q, tokens_k : sequence of str
        Target and source words.
    reference : array_like of int, shape (seq_q,), optional
        For each target word, the index of the source word it should read; marked on every head.
    head_titles : sequence of str, optional
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> w = np.full((2, 2, 3), 1 / 3)
    >>> fig = plot_alignment(w, ["le", "chat"], ["the", "black", "cat"], reference=[0, 2])
    >>> [len(panel.lines) for panel in fig.head_panels]  # one marker line per head
    [1, 1]
    """
    weights = as_float_array(weights, "weights")
    if weights.ndim != 3:
        raise ValueError(f"weights must have shape (n_heads, seq_q, seq_k), got {weights.shape}")
    n_heads, seq_q, seq_k = weights.shape
    reference = _check_reference(reference, seq_q, seq_k)
    fig = plot_heads(weights, tokens_q, tokens_k, title=title, head_titles=head_titles)
    if reference is not None:
        for panel in fig.head_panels:
            panel.plot(reference, np.arange(seq_q), linestyle="none", marker="s", markersize=9,
                       markerfacecolor="none", markeredgecolor=REFERENCE_COLOR, markeredgewidth=1.8)
    return fig


def plot_links(weights: ArrayLike, tokens_q: Sequence[str], tokens_k: Sequence[str], *,
               title: str = "Who reads whom", query_label: str = "decoder (queries)",
               key_label: str = "encoder (keys, values)") -> Figure:
    """One head's weights as lines from each target word (top) to the source words it reads (bottom).

    Line width and opacity grow with the weight; weights under ``MIN_LINK_WEIGHT`` are not drawn.

    Parameters
    ----------
    weights : array_like, shape (seq_q, seq_k)
    tokens_q, tokens_k : sequence of str
    title, query_label, key_label : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_links(np.eye(2), ["le", "chat"], ["the", "cat"])
    >>> len(fig.axes[0].lines)  # two links of weight 1, the zeros are skipped
    2
    """
    weights = as_float_array(weights, "weights")
    if weights.ndim != 2:
        raise ValueError(f"weights must have shape (seq_q, seq_k), got {weights.shape}")
    seq_q, seq_k = weights.shape
    tokens_q, tokens_k = list(tokens_q), list(tokens_k)
    if len(tokens_q) != seq_q or len(tokens_k) != seq_k:
        raise ValueError(f"need {seq_q} query and {seq_k} key tokens for weights of shape {weights.shape}, "
                         f"got {len(tokens_q)} and {len(tokens_k)}")
    width = max(seq_q, seq_k)
    # Drawn for the column: the rows' names in two short lines on the left, the words spread over the
    # rest; when a word is wider than its slot (0.09 in a character at 11 pt), every other word of the
    # row steps out of line (further from the links), so that neighbours never touch.
    fig = new_figure(MAX_WIDTH_IN, 3.0)
    ax = fig.add_subplot()
    slot = (MAX_WIDTH_IN - 1.4) / width  # inches a word
    # Centre the shorter row under the longer one.
    x_q = np.arange(seq_q) + (width - seq_q) / 2
    x_k = np.arange(seq_k) + (width - seq_k) / 2
    draw_links(ax, weights, np.column_stack([x_q, np.ones(seq_q)]), np.column_stack([x_k, np.zeros(seq_k)]))
    for xs, tokens, y, va, away in ((x_q, tokens_q, 1.05, "bottom", 1), (x_k, tokens_k, -0.05, "top", -1)):
        crowded = max(len(t) for t in tokens) * 0.09 > 0.9 * slot
        for i, (x, token) in enumerate(zip(xs, tokens, strict=True)):
            step = 0.28 * away if crowded and i % 2 else 0.0
            ax.text(x, y + step, token, ha="center", va=va, fontsize=11)
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-0.75, 1.75)
    ax.set_yticks([0.0, 1.0], labels=[textwrap.fill(key_label, 14), textwrap.fill(query_label, 14)])
    ax.set_xticks([])
    ax.spines[["top", "right", "bottom"]].set_visible(False)
    ax.set_title(title)
    return fig


def draw_links(ax: Axes, weights: np.ndarray, query_points: FloatArray, key_points: FloatArray, *,
               rows: Sequence[int] | None = None) -> None:
    """Draw one line per weight of at least ``MIN_LINK_WEIGHT``, from its query's point to its key's point.

    Width and opacity grow with the weight. Shared by :func:`plot_links` (words in two rows) and
    :func:`mha.plotting.real_heads.plot_head_view` (words in two columns).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    weights : ndarray, shape (seq_q, seq_k)
    query_points : array_like, shape (seq_q, 2)
        ``(x, y)`` where each query's lines start.
    key_points : array_like, shape (seq_k, 2)
        ``(x, y)`` where each key's lines end.
    rows : sequence of int, optional
        The queries whose lines are drawn (all by default).
    """
    rows = range(weights.shape[0]) if rows is None else rows
    for i in rows:
        for j in np.nonzero(weights[i] >= MIN_LINK_WEIGHT)[0]:
            w = float(weights[i, j])
            (x_query, y_query), (x_key, y_key) = query_points[i], key_points[j]
            ax.plot([x_query, x_key], [y_query, y_key], color=SERIES_COLORS[0], linewidth=0.4 + 3.6 * w,
                    alpha=0.15 + 0.85 * w, solid_capstyle="round")
