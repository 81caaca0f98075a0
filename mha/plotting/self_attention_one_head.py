"""One head's arithmetic, one step per figure, with every number printed in its cell; and one query's
lookup, from hard to soft as the temperature slides (:func:`plot_lookup_temperature`).

A matrix product is drawn the way it is done by hand: the left factor on the left, the right factor above,
the product where their rows and columns meet. One query's row is traced through every step (an orange
frame), and a line under the picture writes that row's arithmetic out. The figures are sized for a page
column (``MAX_WIDTH_IN``, the widest whose 10-pt numbers still read at 9 px on a phone), and a cell is
wide enough for its number at 10 pt ("−0.65") with room to spare on each side.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import Normalize, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from mha.lab.self_attention_one_head import STEPS, HeadWalkthrough, SoftLookup
from mha.plotting.style import (
    MAX_WIDTH_IN,
    MIN_FONT_PT,
    SERIES_COLORS,
    SIGNED_CMAP,
    TITLE_PT,
    WEIGHTS_CMAP,
    new_figure,
)
from mha.typing import ArrayLike

__all__ = ["plot_head_step", "plot_lookup_temperature"]

FOCUS = "#E69F00"  # the traced query's row (orange, from the course's series colours)
WIDTH = MAX_WIDTH_IN
CELL_FONT = MIN_FONT_PT


def _ink(rgba) -> str:
    """Black or white text, whichever reads better on a cell of colour ``rgba``."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def _matrix(ax, values, x0, y0, *, fmt, norm, cmap, rows=None, cols=None, name=None, focus_row=None,
            focus_col=None):
    """Draw ``values`` with its top-left corner at (x0, y0) (y grows downwards), one unit per cell."""
    colours = colormaps[cmap]
    n_rows, n_cols = values.shape
    for i in range(n_rows):
        for j in range(n_cols):
            face = colours(norm(values[i, j]))
            ax.add_patch(Rectangle((x0 + j, y0 + i), 1, 1, facecolor=face, edgecolor="white", lw=1))
            ax.text(x0 + j + 0.5, y0 + i + 0.5, _number(values[i, j], fmt=fmt),
                    ha="center", va="center", fontsize=CELL_FONT, color=_ink(face))
    for i, label in enumerate(rows or []):
        ax.text(x0 - 0.15, y0 + i + 0.5, label, ha="right", va="center", fontsize=10)
    for j, label in enumerate(cols or []):
        ax.text(x0 + j + 0.5, y0 - 0.15, label, ha="center", va="bottom", fontsize=CELL_FONT)
    if name:
        ax.text(x0 + n_cols / 2, y0 + n_rows + 0.2, name, ha="center", va="top", fontsize=10, weight="bold")
    if focus_row is not None:
        ax.add_patch(Rectangle((x0, y0 + focus_row), n_cols, 1, fill=False, edgecolor=FOCUS, lw=2.5))
    if focus_col is not None:
        ax.add_patch(Rectangle((x0 + focus_col, y0), 1, n_rows, fill=False, edgecolor=FOCUS, lw=2.5, ls="--"))


def _signed(*arrays) -> TwoSlopeNorm:
    limit = max(float(np.abs(a).max()) for a in arrays) or 1.0
    return TwoSlopeNorm(0.0, -limit, limit)


def _number(x: float, digits: int = 2, fmt: str | None = None) -> str:
    text = format(x, fmt or f".{digits}f")
    if float(text) == 0:  # -0.0 or a small negative rounded to zero: a reader expects plain 0
        text = text.lstrip("-")
    return text.replace("-", "\u2212")


def _product(a: float, b: float, digits: int = 2) -> str:
    """``a·b`` with negative factors in parentheses: ``0.70·(−0.60)``."""
    def factor(x):
        text = _number(x, digits)
        return f"({text})" if text.startswith("\u2212") else text
    return f"{factor(a)}\u00b7{factor(b)}"


def _features(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i + 1}" for i in range(n)]


def _step_embeddings(ax, head, i):
    seq, d_model = head.x.shape
    _matrix(ax, head.x, 0, 0, fmt=".1f", norm=_signed(head.x), cmap=SIGNED_CMAP, rows=head.tokens,
            cols=_features("x", d_model), name=f"X  ({seq} \u00d7 {d_model})", focus_row=i)
    return (f"1. Embeddings: one row of {d_model} numbers per token; \u201c{head.tokens[i]}\u201d is "
            f"row {i}.", d_model, seq)


def _step_projections(ax, head, i):
    seq, d_model = head.x.shape
    d_k = head.d_k
    top = d_model + 1.2
    norm = _signed(head.x, head.q)
    _matrix(ax, head.x, 0, top, fmt=".1f", norm=norm, cmap=SIGNED_CMAP, rows=head.tokens,
            name=f"X  ({seq} \u00d7 {d_model})", focus_row=i)
    _matrix(ax, head.W_q, d_model + 0.6, 0.6, fmt=".1f", norm=norm, cmap=SIGNED_CMAP,
            cols=_features("q", d_k))
    ax.text(d_model + 0.6 + d_k + 0.2, 0.6 + d_model / 2, f"W_q\n({d_model} \u00d7 {d_k})", ha="left",
            va="center", fontsize=10, weight="bold")
    _matrix(ax, head.q, d_model + 0.6, top, fmt=".2f", norm=norm, cmap=SIGNED_CMAP,
            name=f"Q = X W_q  ({seq} \u00d7 {d_k})", focus_row=i)
    terms = " + ".join(_product(a, b, 1) for a, b in zip(head.x[i], head.W_q[:, 0], strict=True))
    return (f"2. Projections: q1 of \u201c{head.tokens[i]}\u201d = {terms} = {_number(head.q[i, 0])}. "
            "K = X W_k and V = X W_v are made the same way.",
            d_model + 0.6 + d_k + 2.6, top + seq)


def _step_scores(ax, head, i):
    seq, d_k = head.q.shape
    j = int(np.argmax(head.scores[i]))
    top = d_k + 1.2
    _matrix(ax, head.q, 0, top, fmt=".2f", norm=_signed(head.q, head.k), cmap=SIGNED_CMAP, rows=head.tokens,
            name="Q", focus_row=i)
    _matrix(ax, head.k.T, d_k + 0.6, 0.6, fmt=".2f", norm=_signed(head.q, head.k), cmap=SIGNED_CMAP,
            cols=head.tokens, focus_col=j)
    ax.text(d_k + 0.6 + seq / 2, -0.3, "K\u1d40", ha="center", va="bottom", fontsize=10, weight="bold")
    _matrix(ax, head.scores, d_k + 0.6, top, fmt=".2f", norm=_signed(head.scores), cmap=SIGNED_CMAP,
            name=f"scores = Q K\u1d40 / \u221a{d_k}  ({seq} \u00d7 {seq})", focus_row=i)
    terms = " + ".join(_product(a, b) for a, b in zip(head.q[i], head.k[j], strict=True))
    return (f"3. Scores: {head.tokens[i]} \u00b7 {head.tokens[j]} = ({terms}) / \u221a{d_k} = "
            f"{_number(head.scores[i, j])}", d_k + 0.6 + seq, top + seq)


def _step_softmax(ax, head, i):
    seq = head.scores.shape[0]
    _matrix(ax, head.scores, 0, 0, fmt=".2f", norm=_signed(head.scores), cmap=SIGNED_CMAP, rows=head.tokens,
            cols=head.tokens, name="scores", focus_row=i)
    _matrix(ax, head.weights, seq + 1.0, 0, fmt=".2f", norm=Normalize(0.0, 1.0), cmap=WEIGHTS_CMAP,
            cols=head.tokens, name="weights", focus_row=i)
    ax.annotate("", xy=(seq + 0.9, seq / 2), xytext=(seq + 0.1, seq / 2),
                arrowprops={"arrowstyle": "->", "lw": 1.5})
    row = " + ".join(f"{w:.2f}" for w in head.weights[i])
    return (f"4. Softmax, row by row: e^score / \u03a3 e^score. Row \u201c{head.tokens[i]}\u201d: {row} = 1.",
            2 * seq + 1.0, seq)


def _step_weighted_sum(ax, head, i):
    seq, d_k = head.v.shape
    top = seq + 1.2
    _matrix(ax, head.weights, 0, top, fmt=".2f", norm=Normalize(0.0, 1.0), cmap=WEIGHTS_CMAP,
            rows=head.tokens, cols=head.tokens, name="weights", focus_row=i)
    _matrix(ax, head.v, seq + 0.6, 0.6, fmt=".2f", norm=_signed(head.v, head.output), cmap=SIGNED_CMAP,
            cols=_features("v", d_k))
    for r, token in enumerate(head.tokens):  # V's rows are tokens too: label them on the right
        ax.text(seq + 0.6 + d_k + 0.15, 0.6 + r + 0.5, token, ha="left", va="center", fontsize=CELL_FONT)
    ax.text(seq + 0.6 + d_k + 1.6, 0.6 + seq / 2, "V", ha="left", va="center", fontsize=10, weight="bold")
    _matrix(ax, head.output, seq + 0.6, top, fmt=".2f",
            norm=_signed(head.v, head.output), cmap=SIGNED_CMAP, name="output", focus_row=i)
    best = np.argsort(head.weights[i])[::-1][:2]
    mix = " + ".join(f"{head.weights[i, j]:.2f}\u00b7v_{head.tokens[j]}" for j in best)
    return (f"5. Weighted sum: output = weights @ V; \u201c{head.tokens[i]}\u201d gets {mix} + \u2026",
            seq + 0.6 + d_k + 1.4, top + seq)


DRAW = dict(zip(STEPS, (_step_embeddings, _step_projections, _step_scores, _step_softmax, _step_weighted_sum),
                strict=True))


def plot_head_step(head: HeadWalkthrough, step: str, query: int = 0) -> Figure:
    """One step of one head: the matrices it multiplies, every number printed, one query's row traced.

    Parameters
    ----------
    head : HeadWalkthrough
        From :func:`mha.lab.self_attention_one_head.head_walkthrough`.
    step : {"embeddings", "projections", "scores", "softmax", "weighted sum"}
    query : int
        The token whose row is traced (framed in orange, its arithmetic written under the picture).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from mha.lab.self_attention_one_head import head_walkthrough
    >>> fig = plot_head_step(head_walkthrough(), "scores", query=1)
    >>> fig.axes[0].get_title(loc="left")
    'One head, step 3 of 5: scores'
    """
    if step not in DRAW:
        raise ValueError(f"step must be one of {list(STEPS)}, got {step!r}")
    seq = len(head.tokens)
    if not (isinstance(query, int | np.integer) and 0 <= query < seq):
        raise ValueError(f"query must be a token position in 0 .. {seq - 1}, got {query!r}")
    seq_, d_model = head.x.shape
    d_k = head.d_k
    # One box for every step, so that cells keep their size (and place) as the reader steps through.
    width = max(d_model + 0.6 + d_k + 2.6, d_k + 0.6 + seq_, 2 * seq_ + 1.0, seq_ + 0.6 + d_k + 1.4)
    height = max(d_model, seq_) + 1.2 + seq_
    left = 0.25 * max(len(t) for t in head.tokens) + 0.4  # room for the row labels
    box_w, box_h = width + 0.3 + left, height + 2.9
    fig = new_figure(WIDTH, WIDTH * box_h / box_w + 0.9)
    fig.set_layout_engine(None)
    bottom, top = 0.9 / fig.get_figheight(), 0.3 / fig.get_figheight()  # room for the caption, the title
    ax = fig.add_axes((0.0, bottom, 1.0, 1.0 - bottom - top))
    caption, _, _ = DRAW[step](ax, head, int(query))
    ax.set_xlim(-left, width + 0.3)
    ax.set_ylim(height + 1.3, -1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"One head, step {STEPS.index(step) + 1} of {len(STEPS)}: {step}", fontsize=11, loc="left")
    fig.text(0.02, 0.85 / fig.get_figheight(), caption, fontsize=CELL_FONT, ha="left", va="top", wrap=True)
    fig.alt_text = (f"One head's arithmetic on \u201c{' '.join(head.tokens)}\u201d, step "
                    f"{STEPS.index(step) + 1} ({step}), tracing the row of \u201c{head.tokens[query]}\u201d. "
                    + caption)
    return fig


def plot_lookup_temperature(tokens: list[str], lookup: SoftLookup, temperatures: ArrayLike,
                            sensitivities: ArrayLike, *, value_limit: float, query: str = "it",
                            title: str | None = None) -> Figure:
    """One query's lookup at one temperature: its weights, its answer next to a dictionary's, and its slope.

    Three panels, one under the other (for the book's column): the weight of every key, with the key a
    hard lookup returns outlined at a weight of 1; the soft answer ``weights @ values`` above the hard one
    ``values[best]``; and how far the soft answer moves per unit the query moves, against the temperature,
    with this frame's temperature marked (a hard lookup's is 0 at every temperature).

    Parameters
    ----------
    tokens : list of str, length seq_k
    lookup : SoftLookup
        From :func:`mha.lab.self_attention_one_head.soft_lookup`.
    temperatures, sensitivities : array_like, shape (n,)
        The curve of the third panel: ``soft_lookup(...).sensitivity`` at each temperature.
    value_limit : float
        The colour scale of the answers spans ``[-value_limit, value_limit]``: one scale for every frame.
    query : str
        The token asking.
    title : str, optional

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> from mha.lab.self_attention_one_head import soft_lookup
    >>> keys, values = np.eye(3), np.eye(3)
    >>> temps = [0.1, 1.0, 10.0]
    >>> curve = [soft_lookup([2.0, 0, 0], keys, values, t).sensitivity for t in temps]
    >>> fig = plot_lookup_temperature(["a", "b", "c"], soft_lookup([2.0, 0, 0], keys, values), temps, curve,
    ...                               value_limit=1.0, query="a")
    >>> [ax.get_title() for ax in fig.axes][:2]
    ['T = 1: the weight of each key', 'the answers, at distance 0.47']
    """
    tokens = [str(t) for t in tokens]
    temperatures = np.asarray(temperatures, dtype=float)
    sensitivities = np.asarray(sensitivities, dtype=float)
    weights, soft, hard = lookup.weights, lookup.soft, lookup.hard
    if len(tokens) != weights.size or soft.shape != hard.shape or soft.ndim != 1:
        raise ValueError(f"expected one token per weight and soft and hard answers of one shape; got "
                         f"{len(tokens)} tokens, {weights.size} weights, answers {soft.shape} and "
                         f"{hard.shape}")
    if temperatures.ndim != 1 or temperatures.shape != sensitivities.shape or not temperatures.size:
        raise ValueError(f"expected a curve of temperatures and sensitivities of one length, got "
                         f"{temperatures.shape} and {sensitivities.shape}")
    if not (np.all(temperatures > 0) and np.all(np.isfinite(sensitivities))):
        raise ValueError("temperatures must be positive and sensitivities finite")
    if not 0 < value_limit < np.inf:
        raise ValueError(f"value_limit must be positive and finite, got {value_limit!r}")
    best, t = lookup.best, lookup.temperature
    apart = float(np.linalg.norm(soft - hard))
    n = len(tokens)
    fig = new_figure(MAX_WIDTH_IN, 1.3 + 0.26 * n + 1.25 + 2.1, alt_text=(
        f'The query "{query}" at temperature T = {t:g}: "{tokens[best]}" gets weight {weights[best]:.2f} '
        f"(a hard lookup gives it 1); the soft answer lies {apart:.2f} from the hard one; it moves by "
        f"{lookup.sensitivity:.2f} per unit the query moves, where the hard answer does not move at all."))
    grid = fig.add_gridspec(3, 1, height_ratios=(0.26 * n + 0.6, 1.0, 1.9))
    ax_w = fig.add_subplot(grid[0])
    ax_w.barh(range(n), weights, color=SERIES_COLORS[0], height=0.7, label="attention (soft)")
    ax_w.barh([best], [1.0], height=0.7, fill=False, edgecolor=SERIES_COLORS[1], linewidth=2,
              linestyle="--", label="dictionary (hard)")
    for i, w in enumerate(weights):
        ax_w.text(min(w, 1.0) + 0.02, i, f"{w:.2f}", va="center", fontsize=10)
    ax_w.set_yticks(range(n), tokens, fontsize=10)
    ax_w.invert_yaxis()
    ax_w.set_xlim(0, 1.16)
    ax_w.set_xticks([0, 0.5, 1])
    ax_w.set_xlabel("weight = softmax(q·k / √d_k / T)", fontsize=10)
    ax_w.set_title(f"T = {t:g}: the weight of each key", fontsize=10, pad=26)
    # above the bars, under the title: never over a bar or a number, whatever the weights
    ax_w.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, fontsize=10, frameon=False,
                borderaxespad=0.2)
    ax_a = fig.add_subplot(grid[1])
    ax_a.imshow(np.stack([soft, hard]), cmap=SIGNED_CMAP, vmin=-value_limit, vmax=value_limit, aspect="auto",
                interpolation="nearest")
    ax_a.set_yticks([0, 1], ["soft: Σ w·v", f"hard: v({tokens[best]})"], fontsize=10)
    ax_a.set_xticks([])
    ax_a.set_xlabel("feature of the answer", fontsize=10)
    ax_a.set_title(f"the answers, at distance {apart:.2f}", fontsize=10)
    ax_s = fig.add_subplot(grid[2])
    ax_s.semilogx(temperatures, sensitivities, color=SERIES_COLORS[0], label="soft lookup")
    ax_s.axhline(0.0, color=SERIES_COLORS[1], linestyle="--", linewidth=2, label="hard lookup: 0")
    ax_s.plot([t], [lookup.sensitivity], "o", color="black", markersize=7, label=f"T = {t:g}")
    ax_s.set_xlabel("temperature T", fontsize=10)
    ax_s.set_ylabel("‖∂ answer / ∂ q‖", fontsize=10)
    ax_s.set_ylim(-0.08 * max(sensitivities.max(), 1e-9), 1.25 * max(sensitivities.max(), 1e-9))
    ax_s.tick_params(labelsize=10)
    ax_s.set_title("how far the answer moves with the query", fontsize=10)
    ax_s.legend(loc="upper right", fontsize=10, frameon=True, framealpha=0.9)  # over the curve's far tail
    fig.suptitle(title or f"“{query}” looks up the sentence: from hard to soft", fontsize=TITLE_PT)
    return fig
