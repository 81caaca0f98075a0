"""A pretrained model's heads: one head as lines between tokens, every head as a grid of maps, a survey.

- :func:`plot_head_view`: one head of one layer, queries in a column on the left, keys on the right, a
  line for each query-key pair whose width and opacity grow with the weight.
- :func:`plot_model_view`: every layer (rows) and head (columns) as a small attention map.
- :func:`plot_head_kinds`: one dot per head, how broad against how far it looks, coloured by its kind.
- :func:`plot_grouped_bars`: a few numbers per group side by side (e.g. two sentences' weights per head).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from mha.plotting.cross_attention import MIN_LINK_WEIGHT, draw_links
from mha.plotting.heads import check_tokens, check_weights
from mha.plotting.style import MAX_WIDTH_IN, MIN_FONT_PT, SERIES_COLORS, WEIGHTS_CMAP, new_figure
from mha.plotting.text_boxes import drop_overprinting
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = ["plot_head_view", "plot_model_view", "plot_head_kinds", "plot_grouped_bars", "MIN_LINE_WEIGHT"]

#: Weights below this are not drawn in the head view: the threshold of every links picture.
MIN_LINE_WEIGHT = MIN_LINK_WEIGHT


def plot_head_view(weights: ArrayLike, tokens: Sequence[str], *, title: str = "One head",
                   query: int | None = None) -> Figure:
    """One head's attention as lines from each query token (left) to the keys it reads (right).

    Parameters
    ----------
    weights : array_like, shape (seq, seq)
        One head's weights, rows are queries.
    tokens : sequence of str, length seq
    title : str
    query : int, optional
        Draw only this query's lines (and highlight its token); all queries by default.

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_head_view(np.eye(3), ["a", "b", "c"], query=1)
    >>> len(fig.axes[0].lines)  # one line: query 1 reads only key 1
    1
    """
    weights = check_weights(weights, 2, "(seq, seq)")
    seq = weights.shape[0]
    if weights.shape != (seq, seq):
        raise ValueError(f"weights must be square (seq, seq) for self-attention, got {weights.shape}")
    tokens = check_tokens(tokens, seq, "tokens")
    if query is not None and (isinstance(query, bool) or not isinstance(query, (int, np.integer))
                              or not 0 <= query < seq):
        raise ValueError(f"query must be a token position in [0, {seq}), got {query!r}")
    rows = range(seq) if query is None else [int(query)]
    fig = new_figure(4.2, 0.8 + 0.27 * seq)
    ax = fig.add_subplot()
    y = seq - 1 - np.arange(seq)  # first token at the top
    queries, keys = np.column_stack([np.zeros(seq), y]), np.column_stack([np.ones(seq), y])  # (seq, 2): x, y
    draw_links(ax, weights, queries, keys, rows=rows)
    for i, token in enumerate(tokens):
        bold = "bold" if query is not None and i == query else "normal"
        ax.text(-0.04, y[i], token, ha="right", va="center", fontsize=9, fontweight=bold)
        ax.text(1.04, y[i], token, ha="left", va="center", fontsize=9)
    ax.set_xlim(-0.75, 1.75)
    ax.set_ylim(-0.8, seq - 0.2)
    ax.set_xticks([0.0, 1.0], labels=["query (attending)", "key (attended to)"])
    ax.set_yticks([])
    ax.spines[["top", "right", "left"]].set_visible(False)
    ax.set_title(title)
    strongest = np.unravel_index(np.argmax(weights[list(rows)]), (len(rows), seq))
    source = list(rows)[strongest[0]]
    fig.alt_text = (f"{title}: lines from each {'' if query is None else 'selected '}query token on the left "
                    f"to the key tokens on the right, thicker for larger weights; the strongest goes from "
                    f"'{tokens[source]}' to '{tokens[int(strongest[1])]}' "
                    f"({weights[source, strongest[1]]:.2f}).")
    return fig


def plot_model_view(attentions: ArrayLike, tokens: Sequence[str] | None = None, *,
                    title: str = "Every head") -> Figure:
    """Every head of every layer as a small attention map: layers down, heads across.

    Parameters
    ----------
    attentions : array_like, shape (n_layers, n_heads, seq, seq)
    tokens : sequence of str, optional
        Named in the alt text (the maps are too small for tick labels).
    title : str

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_model_view(np.full((2, 3, 4, 4), 0.25))
    >>> len([ax for ax in fig.axes if ax.images])  # 2 layers x 3 heads
    6
    """
    attentions = check_weights(attentions, 4, "(n_layers, n_heads, seq, seq)")
    n_layers, n_heads, seq, seq_k = attentions.shape
    tokens = check_tokens(tokens, seq, "tokens")
    # Every map in the book's column (mha.plotting.style): at most 5.5 inches for all the heads.
    side = min(0.85, (MAX_WIDTH_IN - 1.4) / n_heads)
    fig = new_figure(side * n_heads + 1.4, side * n_layers + 1.2)
    axes = fig.subplots(n_layers, n_heads, squeeze=False)
    image: AxesImage | None = None
    for (layer, head), ax in np.ndenumerate(axes):
        image = ax.imshow(attentions[layer, head], cmap=WEIGHTS_CMAP, vmin=0.0, vmax=1.0,
                          interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        if layer == 0:
            ax.set_title(f"h{head}" if side < 0.7 else f"head {head}", fontsize=MIN_FONT_PT)
        if head == 0:
            ax.set_ylabel(f"L{layer}" if side < 0.7 else f"layer {layer}", fontsize=MIN_FONT_PT, rotation=0,
                          ha="right", va="center")
    fig.supxlabel("heads (h) across, layers (L) down; in each map queries down, keys across",
                  fontsize=MIN_FONT_PT)
    if image is not None:  # n_layers and n_heads are at least 1: always drawn
        fig.colorbar(image, ax=axes, shrink=0.6, label="attention weight")
    fig.suptitle(title)
    # How sharp each head is: its largest weight per query, averaged -> (n_layers * n_heads,)
    focus = attentions.reshape(n_layers * n_heads, seq, seq_k).max(axis=-1).mean(axis=-1)
    sharpest = int(np.argmax(focus))
    words = f" over the {seq} tokens {' '.join(tokens)}" if tokens else f" over {seq} tokens"
    fig.alt_text = (f"{title}: a grid of {n_layers} x {n_heads} attention maps{words}, queries down and keys "
                    f"across in each. The sharpest is layer {sharpest // n_heads}, head {sharpest % n_heads} "
                    f"(mean largest weight {focus[sharpest]:.2f}).")
    return fig


def plot_head_kinds(breadth: ArrayLike, distance: ArrayLike, kinds: ArrayLike, *,
                    title: str = "What each head does") -> Figure:
    """One dot per head: breadth (x) against mean distance (y), coloured by kind, labelled ``L.H``.

    Parameters
    ----------
    breadth, distance : array_like, shape (n_layers, n_heads)
        E.g. ``survey.scores["breadth"]`` and ``survey.scores["mean distance (tokens)"]``.
    kinds : array_like of str, shape (n_layers, n_heads)
    title : str

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_head_kinds([[0.1, 0.9]], [[1.0, 4.0]], [["previous token", "broad"]])
    >>> sorted(t.get_text() for t in fig.axes[0].get_legend().get_texts())
    ['broad (1)', 'previous token (1)']
    """
    breadth, distance = as_float_array(breadth, "breadth"), as_float_array(distance, "distance")
    kinds = np.asarray(kinds, dtype=object)
    if breadth.ndim != 2 or distance.shape != breadth.shape or kinds.shape != breadth.shape:
        raise ValueError("breadth, distance and kinds must share one (n_layers, n_heads) shape, got "
                         f"{breadth.shape}, {distance.shape}, {kinds.shape}")
    fig = new_figure(MAX_WIDTH_IN, 4.6)
    ax = fig.add_subplot()
    markers = "osD^vP*X"
    order = list(dict.fromkeys(kinds.ravel().tolist()))  # kinds in order of first appearance
    for i, kind in enumerate(order):
        chosen = kinds == kind
        ax.scatter(breadth[chosen], distance[chosen], s=28, color=SERIES_COLORS[i % len(SERIES_COLORS)],
                   marker=markers[i % len(markers)], label=f"{kind} ({int(chosen.sum())})", alpha=0.85)
    ax.set_xlabel("breadth (entropy / entropy of uniform attention)")
    ax.set_ylabel("mean distance looked (tokens)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(title="kind (heads)", loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=2,
              frameon=False)
    # Each head named "layer.head" where its name has room at 10 pt, the rarest kinds first: the
    # others would print over each other (the alt text lists the kinds).
    count = {kind: int((kinds == kind).sum()) for kind in order}
    heads = sorted(np.ndindex(*breadth.shape), key=lambda lh: count[kinds[lh]])
    notes = [ax.annotate(f"{layer}.{head}", (breadth[layer, head], distance[layer, head]), xytext=(3, 3),
                         textcoords="offset points", color="#444444") for layer, head in heads]
    named = len(drop_overprinting(fig, notes))
    counts = ", ".join(f"{int((kinds == k).sum())} {k}" for k in dict.fromkeys(kinds.ravel().tolist()))
    fig.alt_text = (f"{title}: scatter of {breadth.size} heads, breadth across and mean distance up, "
                    f"coloured by kind ({counts}); {named} of them labelled layer.head.")
    return fig


def plot_grouped_bars(values: ArrayLike, group_labels: Sequence[str], series_labels: Sequence[str], *,
                      ylabel: str, title: str | None = None, xlabel: str | None = None) -> Figure:
    """Side-by-side bars: one group per row of ``values``, one bar per series (column) in each group.

    Parameters
    ----------
    values : array_like, shape (n_groups, n_series)
    group_labels : sequence of str, length n_groups
    series_labels : sequence of str, length n_series
    ylabel : str
    title, xlabel : str, optional

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_grouped_bars([[0.7, 0.3], [0.2, 0.2]], ["L3 H1", "L5 H11"], ["tired", "wide"],
    ...                         ylabel="weight")
    >>> len(fig.axes[0].patches)
    4
    """
    values = as_float_array(values, "values")
    group_labels, series_labels = [str(g) for g in group_labels], [str(s) for s in series_labels]
    if values.ndim != 2 or values.shape != (len(group_labels), len(series_labels)):
        raise ValueError(f"values must have shape (n_groups, n_series) = ({len(group_labels)}, "
                         f"{len(series_labels)}), got {values.shape}")
    n_groups, n_series = values.shape
    fig = new_figure(min(10.0, 1.6 + 0.35 * n_groups * (n_series + 1)), 3.2)
    ax = fig.add_subplot()
    width = 0.8 / n_series
    for s, label in enumerate(series_labels):
        ax.bar(np.arange(n_groups) + (s - (n_series - 1) / 2) * width, values[:, s], width, label=label,
               color=SERIES_COLORS[s % len(SERIES_COLORS)])
    ax.set_xticks(range(n_groups), labels=group_labels)
    ax.set_ylabel(ylabel)
    if xlabel:
        ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    if n_series > 1:
        ax.legend(fontsize="small")
    cells = "; ".join(f"{g}: " + ", ".join(f"{s} {v:.2f}" for s, v in zip(series_labels, row, strict=True))
                      for g, row in zip(group_labels, values, strict=True))
    fig.alt_text = f"{title + ': ' if title else ''}Bar chart of {ylabel}. {cells}."
    return fig
