"""Scores, the softmax that turns them into weights, and what the ``1/√d_k`` scale does to both."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure

from mha.plotting.heads import draw_weights
from mha.plotting.style import MAX_WIDTH_IN, SERIES_COLORS, SIGNED_CMAP, WEIGHTS_CMAP, new_figure
from mha.typing import ArrayLike
from mha.validation import as_float_array

if TYPE_CHECKING:  # names for the annotations only: not imported at run time
    from mha.lab.self_attention import ScalingCurves

__all__ = ["plot_scores_and_weights", "plot_score_variance", "plot_saturation", "plot_scaling_frame"]

RAW_LABEL = "q·k (no scaling)"
SCALED_LABEL = "q·k / √d_k"


def plot_scores_and_weights(scores: ArrayLike, weights: ArrayLike, tokens_q: Sequence[str] | None = None,
                            tokens_k: Sequence[str] | None = None, *, title: str | None = None) -> Figure:
    """Scores (signed) next to the weights the softmax makes of them, row for row.

    Parameters
    ----------
    scores : array_like, shape (seq_q, seq_k)
        Scaled scores; ``-inf`` (masked) entries are drawn blank.
    weights : array_like, shape (seq_q, seq_k)
    tokens_q, tokens_k : sequence of str, optional
        ``tokens_k`` defaults to ``tokens_q``.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> s = np.array([[2.0, 0.0], [0.0, 1.0]])
    >>> fig = plot_scores_and_weights(s, np.exp(s) / np.exp(s).sum(1, keepdims=True), ["a", "b"])
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['scores  q·k / √d_k', 'weights  softmax(scores)']
    """
    scores = as_float_array(scores, "scores")
    weights = as_float_array(weights, "weights")
    if scores.ndim != 2 or scores.shape != weights.shape:
        raise ValueError(
            f"scores and weights must both have shape (seq_q, seq_k), got {scores.shape} and {weights.shape}"
        )
    seq_q, seq_k = scores.shape
    tokens_k = tokens_q if tokens_k is None else tokens_k
    for tokens, size, name in ((tokens_q, seq_q, "tokens_q"), (tokens_k, seq_k, "tokens_k")):
        if tokens is not None and len(tokens) != size:
            raise ValueError(f"{name} has {len(tokens)} labels for {size} rows/columns")
    # One map per row in the book's column (mha.plotting.style): room for a 10-pt label per token.
    side = min(MAX_WIDTH_IN - 1.6, 1.6 + 0.2 * max(seq_q, seq_k))
    fig = new_figure(side + 1.6, 2 * side + 0.6)
    ax_scores, ax_weights = fig.subplots(2, 1)
    finite = scores[np.isfinite(scores)]
    limit = float(np.abs(finite).max()) if finite.size else 1.0
    shown = np.ma.masked_invalid(scores)  # -inf (masked keys) left blank
    image = ax_scores.imshow(shown, cmap=SIGNED_CMAP, vmin=-limit, vmax=limit, interpolation="nearest",
                             aspect="auto")
    _label_axes(ax_scores, tokens_q, tokens_k, seq_q, seq_k)
    ax_scores.set_title("scores  q·k / √d_k")
    fig.colorbar(image, ax=ax_scores, label="score", shrink=0.8)
    image = draw_weights(ax_weights, weights, tokens_q, tokens_k, title="weights  softmax(scores)")
    fig.colorbar(image, ax=ax_weights, label="weight", shrink=0.8)
    if title:
        fig.suptitle(title)
    return fig


def _label_axes(ax, tokens_q, tokens_k, seq_q, seq_k):
    ax.set_xticks(range(seq_k), labels=tokens_k if tokens_k is not None else range(seq_k), rotation=90)
    ax.set_yticks(range(seq_q), labels=tokens_q if tokens_q is not None else range(seq_q))
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")


def _draw_raw_and_scaled(ax, d_k, raw, scaled, ylabel):
    """One statistic against d_k (log axis): the unscaled series and the scaled one."""
    ax.plot(d_k, raw, "o-", color=SERIES_COLORS[1], label=RAW_LABEL)
    ax.plot(d_k, scaled, "s-", color=SERIES_COLORS[0], label=SCALED_LABEL)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("d_k (width of queries and keys)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


def plot_score_variance(curves: ScalingCurves) -> Figure:
    """Variance of the scores against ``d_k``, log-log, without and with the ``1/√d_k`` scale.

    Parameters
    ----------
    curves : mha.lab.self_attention.ScalingCurves

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from mha.lab.self_attention import scaling_curves
    >>> fig = plot_score_variance(scaling_curves([1, 16, 256], n_queries=200, rng=0))
    >>> fig.axes[0].get_xscale(), fig.axes[0].get_xlabel()
    ('log', 'd_k (width of queries and keys)')
    """
    fig = new_figure(6.0, 4.0)
    ax = fig.add_subplot()
    d_k = curves.d_k
    ax.plot(d_k, d_k, color="0.6", linestyle="--", label="d_k (the prediction)")
    ax.plot(d_k, np.ones(len(d_k)), color="0.6", linestyle=":", label="1")
    _draw_raw_and_scaled(ax, d_k, curves.variance_raw, curves.variance_scaled, "variance of the scores")
    ax.set_yscale("log", base=2)
    ax.set_title("Dot products grow with d_k; scaling keeps them at 1")
    ax.legend(frameon=False)
    return fig


def plot_saturation(curves: ScalingCurves) -> Figure:
    """How peaked the softmax is against ``d_k``: mean largest weight and mean entropy.

    Parameters
    ----------
    curves : mha.lab.self_attention.ScalingCurves

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: largest weight (1 = saturated) and entropy (0 = one-hot, ``log seq_k`` = uniform).

    Examples
    --------
    >>> from mha.lab.self_attention import scaling_curves
    >>> fig = plot_saturation(scaling_curves([1, 16, 256], n_queries=200, rng=0))
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['mean largest weight', 'mean entropy (nats)']
    """
    fig = new_figure(10.0, 4.0)
    ax_max, ax_entropy = fig.subplots(1, 2)
    d_k, seq_k = curves.d_k, curves.seq_k
    panels = (
        (ax_max, curves.max_weight_raw, curves.max_weight_scaled, "mean largest weight",
         ((1.0, "one-hot: 1"), (1.0 / seq_k, f"uniform: 1/{seq_k}"))),
        (ax_entropy, curves.entropy_raw, curves.entropy_scaled, "mean entropy (nats)",
         ((math.log(seq_k), f"uniform: log {seq_k}"), (0.0, "one-hot: 0"))),
    )
    for ax, raw, scaled, ylabel, references in panels:
        for value, label in references:
            ax.axhline(value, color="0.6", linestyle="--", linewidth=1)
            ax.annotate(label, (d_k[0], value), xytext=(2, 3), textcoords="offset points", color="0.4",
                        fontsize=8)
        _draw_raw_and_scaled(ax, d_k, raw, scaled, ylabel)
    ax_max.set_title("Without scaling, one key takes all the weight")
    ax_entropy.set_title("…and the spread of attention collapses")
    ax_max.legend(frameon=False, loc="center right")
    return fig


def plot_scaling_frame(scores: ArrayLike, *, d_k: int, scaled: bool, score_limit: float,
                       rows_shown: int = 8) -> Figure:
    """One frame of the scaling explorer: the spread of the scores and the weights they give.

    Parameters
    ----------
    scores : array_like, shape (n_queries, seq_k)
        Scores of random queries against random keys (see :func:`mha.lab.self_attention.sample_scores`).
    d_k : int
        Width the scores were computed at (for the titles).
    scaled : bool
        Whether ``scores`` were divided by ``√d_k`` (for the titles).
    score_limit : float
        Half-width of the histogram's x axis; keep it fixed across frames so widths compare.
    rows_shown : int, default 8
        Number of queries whose weights are drawn as a heatmap.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> s = np.random.default_rng(0).standard_normal((100, 16))
    >>> fig = plot_scaling_frame(s, d_k=1, scaled=True, score_limit=5.0)
    >>> fig.axes[0].get_xlabel(), fig.axes[1].get_ylabel()
    ('score', 'query')
    """
    from mha.attention import softmax
    from mha.lab.self_attention import entropy

    scores = as_float_array(scores, "scores")
    if scores.ndim != 2 or scores.shape[0] < 1:
        raise ValueError(f"scores must have shape (n_queries, seq_k), got {scores.shape}")
    if not score_limit > 0:
        raise ValueError(f"score_limit must be positive, got {score_limit!r}")
    weights = softmax(scores)  # (n_queries, seq_k)
    seq_k = scores.shape[1]
    # Drawn for the column: the histogram over the weights, each as wide as the column allows, with
    # margins in inches for their labels (no constrained layout: it would double the redraw time).
    width, height = MAX_WIDTH_IN, 5.6
    fig = new_figure(width, height)
    fig.set_layout_engine(None)

    def place(left: float, bottom: float, right: float, top: float) -> tuple[float, float, float, float]:
        """Inches from the figure's edges -> a figure-fraction rectangle."""
        return (left / width, bottom / height,
                (width - left - right) / width, (height - bottom - top) / height)

    ax_hist = fig.add_axes(place(0.45, 3.55, 0.2, 0.4))
    ax_weights = fig.add_axes(place(0.7, 0.55, 1.0, 2.95))
    ax_scale = fig.add_axes(place(width - 0.85, 0.55, 0.7, 2.95))
    color = SERIES_COLORS[0] if scaled else SERIES_COLORS[1]
    counts, edges = np.histogram(scores, bins=161, range=(-score_limit, score_limit))
    ax_hist.stairs(counts, edges, fill=True, color=color)  # one artist, not 161 bars
    ax_hist.set_xlim(-score_limit, score_limit)
    ax_hist.set_xlabel("score")
    ax_hist.set_ylabel("count")
    ax_hist.set_yticks([])
    kind = SCALED_LABEL if scaled else RAW_LABEL
    ax_hist.set_title(f"{kind}, d_k = {d_k}: std {scores.std():.1f}")
    shown = weights[:rows_shown]
    image = ax_weights.imshow(shown, cmap=WEIGHTS_CMAP, vmin=0.0, vmax=1.0, interpolation="nearest",
                              aspect="auto")
    ax_weights.set_xlabel(f"key (of {seq_k})")
    ax_weights.set_ylabel("query")
    ax_weights.set_yticks(range(len(shown)))
    ax_weights.set_title(f"weights: largest {weights.max(axis=-1).mean():.2f} on average, "
                         f"entropy {entropy(weights).mean():.2f} nats", fontsize=10)
    fig.colorbar(image, cax=ax_scale, label="weight")
    return fig
