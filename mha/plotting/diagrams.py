"""Box-and-arrow pictures of what the code computes, drawn from the sizes (and arrays) it is given.

- :func:`plot_mha_diagram`: the whole layer, input → per-head projections → per-head attention → concat →
  ``W_O``, every box labelled with its shape;
- :func:`plot_soft_lookup`: attention as a dictionary lookup that returns a weighted mix of every value;
- :func:`plot_head_split`: where each number goes when ``(seq, d_model)`` becomes ``(n_heads, seq, d_head)``.

Nothing here is a stored image: change the sizes and the picture changes with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from mha.plotting.shapes import head_colors, text_color
from mha.plotting.style import MAX_WIDTH_IN, SIGNED_CMAP, TITLE_PT, WEIGHTS_CMAP, new_figure
from mha.typing import ArrayLike

__all__ = ["plot_mha_diagram", "plot_soft_lookup", "plot_head_split"]

#: Head rows drawn at most; beyond it the diagram shows the first 3, an ellipsis and the last 2.
MAX_HEAD_ROWS = 8
#: Heads side by side in the multi-head diagram: four 1.35-inch columns fill the column's 5.5 inches.
MAX_HEAD_COLUMNS = 4


def _check_sizes(seq: int, d_model: int, n_heads: int) -> int:
    for name, value in (("seq", seq), ("d_model", d_model), ("n_heads", n_heads)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads} "
                         f"(d_head would be {d_model / n_heads:.4g})")
    return d_model // n_heads


def _box(ax, x, y, w, h, text, *, edge="#333333", face="white", fontsize=8, text_color="#111111"):
    """A rounded box with centred text; (x, y) is its lower-left corner."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                linewidth=1.2, edgecolor=edge, facecolor=face))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize,
                color=text_color, linespacing=1.25)


def _arrow(ax, start, end, *, color="#444444"):
    ax.annotate("", xy=end, xytext=start,
                arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.0, "shrinkA": 0, "shrinkB": 0})


def _tint(color: str, amount: float = 0.82) -> tuple[float, ...]:
    """``color`` mixed with white: a light fill that keeps black text readable."""
    from matplotlib.colors import to_rgb

    return tuple(c + (1 - c) * amount for c in to_rgb(color))


def _shown_heads(n_heads: int, most: int = 0) -> list[int | None]:
    """Head indices drawn (at most ``most``, or MAX_HEAD_ROWS); None stands for the ellipsis."""
    most = most or MAX_HEAD_ROWS
    if n_heads <= most:
        return list(range(n_heads))
    if most <= 4:
        return [*range(most - 2), None, n_heads - 1]
    return [0, 1, 2, None, n_heads - 2, n_heads - 1]


def _mini_map(ax, x, y, w, h, weights):
    """A (seq_q, seq_k) weight map drawn inside the box at (x, y, w, h)."""
    ax.imshow(weights, cmap=WEIGHTS_CMAP, vmin=0, vmax=1, extent=(x, x + w, y, y + h),
              interpolation="nearest", aspect="auto", zorder=3)


def plot_mha_diagram(seq: int = 3, d_model: int = 512, n_heads: int = 8, *, weights: ArrayLike | None = None,
                     title: str | None = None) -> Figure:
    """Multi-head attention as boxes and arrows, every box labelled with the shape it holds.

    Top to bottom: the input ``x``; each head's projections ``q_i = x W_Q,i`` (and k, v); each head's
    attention weights and output ``head_i``; the concatenation, in which head ``i`` owns features
    ``i·d_head`` to ``(i+1)·d_head - 1``; and the output projection ``W_O`` back to ``d_model``.
    The batch axis is left out. With more than 4 heads, the middle ones are replaced by an ellipsis.

    Parameters
    ----------
    seq, d_model, n_heads : int
        Tokens, model width, heads; ``n_heads`` must divide ``d_model``.
    weights : ndarray, shape (n_heads, seq, seq), optional
        Attention weights to draw inside each head's weight box (e.g. from a seeded layer). Without them
        the boxes show the shape only.
    title : str, optional

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_mha_diagram()
    >>> texts = [t.get_text() for t in fig.axes[0].texts]
    >>> "head_7 = w v\\n(3, 64)" in texts, "W_O\\n(512, 512)" in texts
    (True, True)
    """
    d_head = _check_sizes(seq, d_model, n_heads)
    if weights is not None:
        weights = np.asarray(weights)
        if weights.shape != (n_heads, seq, seq):
            raise ValueError(f"weights must have shape (n_heads, seq, seq) = {(n_heads, seq, seq)}, "
                             f"got {weights.shape}")
    shown = _shown_heads(n_heads, MAX_HEAD_COLUMNS)
    colors = head_colors(n_heads)
    # Drawn top to bottom, in inches (one data unit is one inch) for the book's column: 5.5 inches,
    # so that its 10-point text reads at 9 px or more even on a phone (mha.plotting.style).
    width = MAX_WIDTH_IN - 0.1
    column = width / len(shown)
    box_w, box_h = column - 0.1, 0.62
    levels = {"x": 6.55, "qkv": 5.35, "attend": 4.3, "head": 3.3, "concat": 2.05, "wo": 1.0, "out": 0.0}
    fig = new_figure(MAX_WIDTH_IN, 7.9, alt_text=(
        f"Diagram of multi-head attention with {seq} tokens, d_model {d_model}, {n_heads} heads of "
        f"d_head {d_head}: the input x of shape ({seq}, {d_model}) goes to every head; each head "
        f"projects it to q, k and v of shape ({seq}, {d_head}), computes ({seq}, {seq}) attention "
        f"weights and an output of shape ({seq}, {d_head}); the heads are concatenated into "
        f"({seq}, {d_model}) and multiplied by W_O of shape ({d_model}, {d_model})."))
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_xlim(0, width)
    ax.set_ylim(-0.05, 7.45)
    stage: dict[str, Any] = {"fontsize": 10, "fontweight": "bold", "va": "center", "zorder": 5,
             "bbox": {"facecolor": "white", "edgecolor": "none", "pad": 1.0}}  # arrows pass behind
    centre = width / 2
    _box(ax, centre - 1.0, levels["x"] - 0.1, 2.0, 0.82, f"x\n({seq}, {d_model})\n{seq} tokens",
         face="#eeeeee", fontsize=10)
    ax.text(0.02, levels["qkv"] + box_h + 0.3, "1. project", **stage)
    ax.text(width - 0.02, levels["qkv"] + box_h + 0.3, f"each W: ({d_model}, {d_head})", ha="right",
            **{**stage, "fontweight": "normal"})
    ax.text(0.02, levels["attend"] + box_h + 0.2, "2. attend", **stage)
    drawn = weights is not None and seq <= 16
    for c, head in enumerate(shown):
        x = c * column + 0.05
        if head is None:
            for level in ("attend", "head"):
                ax.text(x + box_w / 2, levels[level] + box_h / 2, "⋯", ha="center", va="center", fontsize=14)
            ax.text(x + box_w / 2, levels["qkv"] + box_h / 2, f"⋯\n{n_heads - len(shown) + 1} more heads",
                    ha="center", va="center", fontsize=10)
            continue
        edge, face = colors[head], _tint(colors[head])
        _arrow(ax, (centre, levels["x"]), (x + box_w / 2, levels["qkv"] + box_h))
        _box(ax, x, levels["qkv"], box_w, box_h, f"head {head}: q, k, v\n({seq}, {d_head}) each",
             edge=edge, face=face, fontsize=10)
        _arrow(ax, (x + box_w / 2, levels["qkv"]), (x + box_w / 2, levels["attend"] + box_h))
        label = f"softmax(q kᵀ/√{d_head})\nweights ({seq}, {seq})"
        if drawn and weights is not None:
            _box(ax, x, levels["attend"], box_w, box_h, "", edge=edge, face=face)
            _mini_map(ax, x + box_w / 2 - 0.27, levels["attend"] + 0.06, 0.54, box_h - 0.12, weights[head])
        else:
            _box(ax, x, levels["attend"], box_w, box_h, label, edge=edge, face=face, fontsize=10)
        _arrow(ax, (x + box_w / 2, levels["attend"]), (x + box_w / 2, levels["head"] + box_h))
        _box(ax, x, levels["head"], box_w, box_h, f"head_{head} = w v\n({seq}, {d_head})",
             edge=edge, face=face, fontsize=10)
    if drawn:
        ax.text(0.02, levels["attend"] - 0.2, f"each map: softmax(q kᵀ/√{d_head}), ({seq}, {seq})",
                **{**stage, "fontweight": "normal"})
    # The concatenation: head i owns features i·d_head … (i+1)·d_head - 1, left to right.
    ax.text(0.02, levels["concat"] + 0.9, "3. concat", **stage)
    ax.text(width - 0.02, levels["concat"] + 0.9, f"concat\n({seq}, {d_model})\nfeatures by head", ha="right",
            **{**stage, "fontweight": "normal", "linespacing": 1.0})
    strip_w = width / n_heads
    for i, color in enumerate(colors):
        ax.add_patch(_rect(i * strip_w, levels["concat"], strip_w, 0.6, color))
        if strip_w >= 0.62:
            ax.text((i + 0.5) * strip_w, levels["concat"] + 0.3, f"{i * d_head}–{(i + 1) * d_head - 1}",
                    ha="center", va="center", fontsize=10, color=text_color(color), zorder=4)
    for c, head in enumerate(shown):
        if head is not None:
            _arrow(ax, (c * column + 0.05 + box_w / 2, levels["head"]),
                   ((head + 0.5) * strip_w, levels["concat"] + 0.6))
    ax.text(0.02, levels["wo"] + 0.85, "4. mix heads", **stage)
    _arrow(ax, (centre, levels["concat"]), (centre, levels["wo"] + 0.62))
    _box(ax, centre - 1.0, levels["wo"], 2.0, 0.62, f"W_O\n({d_model}, {d_model})", face="#eeeeee",
         fontsize=10)
    _arrow(ax, (centre, levels["wo"]), (centre, levels["out"] + 0.62))
    _box(ax, centre - 1.0, levels["out"], 2.0, 0.62, f"output\n({seq}, {d_model})", face="#eeeeee",
         fontsize=10)
    heads = "1 head" if n_heads == 1 else f"{n_heads} heads"
    fig.suptitle(title or f"Multi-head attention: {seq} tokens, d_model = {d_model}, {heads} "
                          f"of d_head = {d_model} / {n_heads} = {d_head}", fontsize=TITLE_PT)
    return fig


def _rect(x, y, w, h, color):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, facecolor=color, edgecolor="white", linewidth=0.8)


def plot_soft_lookup(keys: Sequence[str], weights: ArrayLike, values: ArrayLike, *, query: str,
                     title: str | None = None) -> Figure:
    """Attention as a soft dictionary lookup: every key gets a weight, the answer mixes every value.

    Parameters
    ----------
    keys : sequence of str, length seq_k
        The tokens whose keys are compared with the query.
    weights : ndarray, shape (seq_k,)
        One query's attention weights (non-negative, summing to 1).
    values : ndarray, shape (seq_k, d_v)
        The value vectors, one row per key.
    query : str
        The token asking.
    title : str, optional

    Returns
    -------
    CourseFigure
        Left: the weight of each key. Right: the values, and below them the answer (the weighted sum
        ``weights @ values``) next to what a hard lookup (the single best key's value) would return.

    Examples
    --------
    >>> fig = plot_soft_lookup(["a", "b"], np.array([0.25, 0.75]), np.eye(2), query="b")
    >>> fig.axes[2].get_yticklabels()[0].get_text()
    'soft: Σ w·v'
    """
    weights = np.asarray(weights, dtype=float)
    values = np.asarray(values, dtype=float)
    keys = [str(k) for k in keys]
    if weights.ndim != 1 or values.ndim != 2 or not len(keys) == weights.size == values.shape[0]:
        raise ValueError(f"expected keys (seq_k,), weights (seq_k,) and values (seq_k, d_v) of one seq_k; "
                         f"got {len(keys)} keys, weights {weights.shape}, values {values.shape}")
    if np.any(weights < 0) or not np.isclose(weights.sum(), 1.0, atol=1e-6):
        raise ValueError(f"weights must be non-negative and sum to 1, got sum {weights.sum():.6g}")
    best = int(np.argmax(weights))
    answers = np.stack([weights @ values, values[best]])  # (2, d_v)
    vmax = float(np.abs(values).max()) or 1.0
    # One panel under the other in the book's column (mha.plotting.style).
    fig = new_figure(MAX_WIDTH_IN, 2.6 + 0.5 * len(keys), alt_text=(
        f'The query "{query}" scores every key; its attention weights are largest for "{keys[best]}" '
        f"({weights[best]:.2f}). The answer is the weighted sum of all value rows, shown next to the single "
        "value a hard dictionary lookup would return."))
    grid = fig.add_gridspec(3, 1, height_ratios=(len(keys), len(keys), 2.5))
    ax_w = fig.add_subplot(grid[0])
    bars = ax_w.barh(range(len(keys)), weights, color="#0072B2")
    bars[best].set_color("#D55E00")
    ax_w.set_yticks(range(len(keys)), keys)
    ax_w.invert_yaxis()
    ax_w.set_xlim(0, 1)
    ax_w.set_xlabel("weight = softmax of q·k")
    ax_w.set_title(f'query "{query}": how well each key matches', fontsize=10)
    for i, w in enumerate(weights):
        ax_w.text(min(w + 0.02, 0.8), i, f"{w:.2f}", va="center", fontsize=8)
    ax_v = fig.add_subplot(grid[1])
    ax_v.imshow(values, cmap=SIGNED_CMAP, vmin=-vmax, vmax=vmax, aspect="auto", interpolation="nearest")
    ax_v.set_yticks(range(len(keys)), [f"v({k})" for k in keys])
    ax_v.set_xticks([])
    ax_v.set_title("values: what each token hands over", fontsize=10)
    ax_o = fig.add_subplot(grid[2], sharex=ax_v)
    image = ax_o.imshow(answers, cmap=SIGNED_CMAP, vmin=-vmax, vmax=vmax, aspect="auto",
                        interpolation="nearest")
    ax_o.set_yticks([0, 1], ["soft: Σ w·v", f"hard: v({keys[best]})"])
    ax_o.set_xlabel("feature of the value vectors")
    # two lines, over the panel only: the colour bar stands beside it
    ax_o.set_title("the answer: attention blends every row;\na dictionary returns one", fontsize=10)
    fig.colorbar(image, ax=[ax_v, ax_o], label="value entry", shrink=0.8)
    fig.suptitle(title or "Attention is a soft lookup", fontsize=11)
    return fig


def plot_head_split(seq: int = 3, d_model: int = 8, n_heads: int = 2) -> Figure:
    """Where each number of ``q`` goes when it is split into heads (batch axis left out).

    Three panels: ``q`` of shape ``(seq, d_model)``; ``q.reshape(seq, n_heads, d_head)``, the same numbers
    in the same order with a boundary every ``d_head`` features; and ``.transpose(1, 0, 2)``, shape
    ``(n_heads, seq, d_head)``, where each head holds its slice of features *for every token*. Colour is
    the head, the text in each cell the token it belongs to. Merging the heads runs the same pictures
    right to left.

    Parameters
    ----------
    seq, d_model, n_heads : int
        Keep them small (every cell is drawn): up to 6 tokens and 16 features.

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_head_split(3, 8, 2)
    >>> [ax.get_title().splitlines()[0] for ax in fig.axes]
    ['q', 'q.reshape(3, 2, 4)', '.transpose(1, 0, 2)']
    """
    d_head = _check_sizes(seq, d_model, n_heads)
    if seq > 6 or d_model > 16:
        raise ValueError(f"draw at most 6 tokens and 16 features (every cell is drawn), got seq={seq}, "
                         f"d_model={d_model}")
    colors = head_colors(n_heads)
    fig = new_figure(12.5, 1.2 + 0.3 * n_heads * (seq + 0.5), alt_text=(
        f"The array q of {seq} tokens by {d_model} features, coloured by head: the reshape cuts every "
        f"token's features into {n_heads} runs of {d_head}; the transpose gathers each head's runs, so "
        f"each head holds {d_head} features of all {seq} tokens."))
    axes = fig.subplots(1, 3, width_ratios=(d_model, d_model + 0.5 * (n_heads - 1), d_head + 1.5))
    gap = 0.5

    def cell(ax, x, y, token, feature, head):
        ax.add_patch(_rect(x, y, 1, 1, colors[head]))
        ax.text(x + 0.5, y + 0.5, f"t{token}\nf{feature}", ha="center", va="center", fontsize=6,
                color=text_color(colors[head]))

    for t in range(seq):
        for f in range(d_model):
            head = f // d_head
            cell(axes[0], f, -t - 1, t, f, head)  # (seq, d_model): token rows, feature columns
            cell(axes[1], f + gap * head, -t - 1, t, f, head)  # (seq, n_heads, d_head): gaps between heads
            row = -(head * (seq + gap) + t) - 1  # (n_heads, seq, d_head): one block of seq rows per head
            cell(axes[2], f % d_head, row, t, f, head)
    for i in range(n_heads):
        axes[2].text(-0.3, -(i * (seq + gap) + seq / 2), f"head {i}", ha="right", va="center", fontsize=8)
    titles = (f"q\n({seq}, {d_model}) = (seq, d_model)",
              f"q.reshape({seq}, {n_heads}, {d_head})\n(seq, n_heads, d_head): same order, new cuts",
              f".transpose(1, 0, 2)\n({n_heads}, {seq}, {d_head}) = (n_heads, seq, d_head)")
    widths = (d_model, d_model + gap * (n_heads - 1), d_head)
    bottom = -(n_heads * (seq + gap) - gap)  # the transposed panel is the tallest
    for ax, text, width in zip(axes, titles, widths, strict=True):
        ax.set_xlim(-1.6 if ax is axes[2] else -0.2, width + 0.2)
        ax.set_ylim(bottom - 0.2, 0.2)
        ax.set_aspect("equal")
        ax.set_axis_off()
        ax.set_title(text, fontsize=9)
    fig.suptitle("Splitting into heads (in each cell: its token t and feature f of q; colour: its head)",
                 fontsize=10)
    return fig
