"""Attention weights as heatmaps: one head, or every head side by side."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mha._validation import as_float_array
from mha.plotting._style import WEIGHTS_CMAP, new_figure

__all__ = ["plot_attention", "plot_heads", "draw_weights"]

#: Above this many tokens, tick labels would overlap: positions are shown instead of words.
MAX_LABELLED_TOKENS = 40
#: Per-head panels are small: beyond this many tokens they show positions, not words.
MAX_HEAD_LABELS = 16


def _check_weights(weights, ndim: int, shape_hint: str) -> np.ndarray:
    weights = as_float_array(weights, "weights")
    if weights.ndim != ndim:
        raise ValueError(f"weights must have shape {shape_hint}, got {weights.shape}")
    return weights


def _check_tokens(tokens, size: int, name: str, role: str = "queries") -> list[str] | None:
    """``tokens`` as a list of str, one per query (or key) of the weights, or a clear error."""
    if tokens is None:
        return None
    tokens = [str(t) for t in tokens]
    if len(tokens) != size:
        raise ValueError(f"{name} has {len(tokens)} tokens but the weights have {size} {role}")
    return tokens


def draw_weights(ax, weights: np.ndarray, tokens_q: Sequence[str] | None, tokens_k: Sequence[str] | None,
                 *, title: str | None = None, vmax: float | None = None, show_ylabels: bool = True):
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


def plot_attention(weights, tokens_q=None, tokens_k=None, *, title: str = "Attention weights"):
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
    weights = _check_weights(weights, 2, "(seq_q, seq_k)")
    seq_q, seq_k = weights.shape
    tokens_k = tokens_q if tokens_k is None and seq_q == seq_k else tokens_k
    tokens_q = _check_tokens(tokens_q, seq_q, "tokens_q")
    tokens_k = _check_tokens(tokens_k, seq_k, "tokens_k", "keys")
    side = min(8.0, 2.0 + 0.3 * max(seq_q, seq_k))
    fig = new_figure(side + 1.0, side, alt_text=(
        f"{title}: heatmap of attention weights, {seq_q} queries down and {seq_k} keys across; "
        f"brighter cells carry more weight{_strongest(weights, tokens_q, tokens_k)}."))
    ax = fig.add_subplot()
    image = draw_weights(ax, weights, tokens_q, tokens_k, title=title)
    fig.colorbar(image, ax=ax, label="weight", shrink=0.8)
    return fig


def plot_heads(weights, tokens_q=None, tokens_k=None, *, title: str | None = None,
               head_titles: Sequence[str] | None = None, ncols: int | None = None):
    """Every head's attention matrix side by side, on one shared colour scale.

    Token labels go on the left column and bottom row when there are at most ``MAX_HEAD_LABELS`` tokens;
    longer sequences show positions instead. The layout is computed by hand (no constrained layout) so
    that a widget can redraw 8 heads of 32 tokens well within 150 ms.

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
        Heads per row; defaults to at most 4.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> w = np.full((4, 3, 3), 1 / 3)
    >>> fig = plot_heads(w, ["a", "b", "c"], title="Uniform")
    >>> [text.get_text() for text in fig.axes[0].texts]
    ['head 0']
    """
    weights = _check_weights(weights, 3, "(n_heads, seq_q, seq_k)")
    n_heads, seq_q, seq_k = weights.shape
    tokens_k = tokens_q if tokens_k is None and seq_q == seq_k else tokens_k
    tokens_q = _check_tokens(tokens_q, seq_q, "tokens_q")
    tokens_k = _check_tokens(tokens_k, seq_k, "tokens_k", "keys")
    if head_titles is None:
        head_titles = [f"head {h}" for h in range(n_heads)]
    elif len(head_titles) != n_heads:
        raise ValueError(f"head_titles has {len(head_titles)} entries for {n_heads} heads")
    ncols = min(n_heads, 4) if ncols is None else ncols
    nrows = math.ceil(n_heads / ncols)
    words_q = tokens_q is not None and seq_q <= MAX_HEAD_LABELS
    words_k = tokens_k is not None and seq_k <= MAX_HEAD_LABELS
    # Margins in inches, sized for the longest label, converted to figure fractions below.
    char = 0.075
    left = 0.55 + (char * max(map(len, tokens_q)) if words_q else 0.25)
    bottom = 0.5 + (char * max(map(len, tokens_k)) if words_k else 0.25)
    top, right, cell, gap = (0.75 if title else 0.4), 1.0, 2.1, 0.35
    width = left + ncols * cell + (ncols - 1) * 0.15 + right
    height = bottom + nrows * (cell + gap) + top - gap
    fig = new_figure(width, height, alt_text=(
        f"{title + ': ' if title else ''}{n_heads} heatmaps of attention weights, one per head, each with "
        f"{seq_q} queries down and {seq_k} keys across on a shared colour scale; brighter cells carry more "
        f"weight{_strongest(weights[0], tokens_q, tokens_k, 'in head 0')}."))
    fig.set_layout_engine(None)
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height,
                        top=1 - top / height, wspace=0.15 / cell, hspace=gap / cell)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    vmax = float(weights.max()) or 1.0  # shared scale: heads are comparable at a glance
    for h, ax in enumerate(axes.flat):
        if h >= n_heads:
            ax.set_visible(False)
            continue
        image = ax.imshow(weights[h], cmap=WEIGHTS_CMAP, vmin=0.0, vmax=vmax, interpolation="nearest",
                          aspect="auto")
        # ax.text is much cheaper to lay out than ax.set_title
        ax.text(0.5, 1.02, head_titles[h], transform=ax.transAxes, ha="center", va="bottom")
        row, col = divmod(h, ncols)
        last_row = row == nrows - 1 or h + ncols >= n_heads
        _set_ticks(ax.xaxis, tokens_k if words_k else None, seq_k, show=last_row)
        _set_ticks(ax.yaxis, tokens_q if words_q else None, seq_q, show=col == 0)
        if last_row and words_k:
            ax.tick_params(axis="x", labelrotation=90)
    fig.colorbar(image, ax=axes, label="weight", fraction=0.25 / width, pad=0.1 / width)
    fig.text(0.5 * (left / width + 1 - right / width), 0.08 / height, "key (attended to)",
             ha="center", va="bottom")
    fig.text(0.1 / width, 0.5, "query (attending)", rotation=90, ha="left", va="center")
    if title:
        fig.suptitle(title, y=1 - 0.1 / height, va="top")
    return fig


def _strongest(weights: np.ndarray, tokens_q, tokens_k, where: str = "") -> str:
    """A clause naming the strongest query-to-key link, for alt text."""
    i, j = np.unravel_index(int(np.argmax(weights)), weights.shape)
    name_q = tokens_q[i] if tokens_q is not None else f"position {i}"
    name_k = tokens_k[j] if tokens_k is not None else f"position {j}"
    return f"; the strongest link{' ' + where if where else ''} is {name_q} to {name_k} ({weights[i, j]:.2f})"


def _set_ticks(axis, tokens, size: int, *, show: bool) -> None:
    """Words as tick labels, or a few positions; no ticks at all on inner panels (ticks are costly)."""
    if not show:
        axis.set_ticks([])
    elif tokens is not None:
        axis.set_ticks(range(size), labels=tokens)
    else:
        axis.set_ticks(range(0, size, max(1, size // 4)))
