"""Quality against the number of heads: held-out loss and accuracy with error bars over seeds; and how far
apart one head can keep two relations when it splits its weight between them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from mha.plotting.style import SERIES_COLORS, CourseFigure, new_figure
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = ["plot_blend_margins", "plot_head_count_sweep"]


def _check_per_seed(values, name: str, n_counts: int) -> np.ndarray:
    values = as_float_array(values, name)
    if values.ndim != 2 or values.shape[0] != n_counts or values.shape[1] == 0:
        raise ValueError(f"{name} must have shape (n_counts, n_seeds) = ({n_counts}, n_seeds), "
                         f"got {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite (a run diverged?), got {values.tolist()}")
    return values


def _spread(values: np.ndarray) -> np.ndarray:
    """Standard deviation over seeds (axis 1), 0 for a single seed."""
    return values.std(axis=1, ddof=1) if values.shape[1] > 1 else np.zeros(values.shape[0])


def _per_seed_panel(ax, counts, values, color, ylabel):
    mean = values.mean(axis=1)  # (n_counts,)
    ax.errorbar(counts, mean, yerr=_spread(values), color=color, marker="o", capsize=4, linewidth=1.8,
                label="mean ± std over seeds")
    jitter = 1 + 0.04 * (np.arange(values.shape[1]) - (values.shape[1] - 1) / 2)  # (n_seeds,)
    ax.scatter((counts[:, None] * jitter).ravel(), values.ravel(), s=12, color=color, alpha=0.35,
               label="one seed")
    ax.set_ylabel(ylabel)


def plot_head_count_sweep(head_counts: Sequence[int], loss: ArrayLike, accuracy: ArrayLike, *,
                          relation_accuracy: ArrayLike | None = None,
                          relation_names: Sequence[str] | None = None, d_model: int | None = None,
                          chance_loss: float | None = None,
                          title: str = "Quality against the number of heads") -> Figure:
    """Held-out loss and accuracy against the number of heads (log2 axis), mean ± std over seeds.

    Parameters
    ----------
    head_counts : array_like of int, shape (n_counts,)
    loss, accuracy : array_like, shape (n_counts, n_seeds)
        Held-out loss (nats) and accuracy of each run; every seed is drawn as a faint dot.
    relation_accuracy : array_like, shape (n_counts, n_seeds, n_relations), optional
        Accuracy of each part of the answer: adds a third panel, one line per part (mean over seeds).
    relation_names : sequence of str, optional
        Legend of the third panel (default "part 0", "part 1", ...).
    d_model : int, optional
        Adds each head count's ``d_head = d_model / n_heads`` under its tick.
    chance_loss : float, optional
        Draws the loss of a uniform guess as a dashed line.
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_head_count_sweep([1, 2, 4], np.ones((3, 2)), np.full((3, 2), 0.5), d_model=8)
    >>> [ax.get_xscale() for ax in fig.axes], fig.axes[0].get_ylabel()
    (['log', 'log'], 'held-out loss (nats)')
    """
    counts = np.asarray(head_counts)
    if counts.ndim != 1 or counts.size == 0 or counts.dtype.kind not in "iu" or (counts < 1).any():
        raise ValueError(f"head_counts must be a non-empty 1-D array of positive integers, got "
                         f"{head_counts!r}")
    loss = _check_per_seed(loss, "loss", counts.size)
    accuracy = _check_per_seed(accuracy, "accuracy", counts.size)
    if accuracy.shape != loss.shape:
        raise ValueError(f"accuracy {accuracy.shape} must have the shape of loss {loss.shape}")
    parts = None
    if relation_accuracy is not None:
        parts = as_float_array(relation_accuracy, "relation_accuracy")
        if parts.ndim != 3 or parts.shape[:2] != loss.shape:
            raise ValueError(f"relation_accuracy must have shape (n_counts, n_seeds, n_relations) = "
                             f"{loss.shape + ('n_relations',)}, got {parts.shape}")
        names = list(relation_names or (f"part {i}" for i in range(parts.shape[2])))
        if len(names) != parts.shape[2]:
            raise ValueError(f"relation_names must name {parts.shape[2]} parts, got {len(names)}")
    n_panels = 2 if parts is None else 3
    fig = new_figure(3.9 * n_panels + 0.4, 3.6)
    axes = fig.subplots(1, n_panels)
    _per_seed_panel(axes[0], counts, loss, SERIES_COLORS[0], "held-out loss (nats)")
    _per_seed_panel(axes[1], counts, accuracy, SERIES_COLORS[1], "held-out accuracy (whole answer)")
    axes[0].set_title("Loss (lower is better)", fontsize=10)
    axes[1].set_title("Accuracy (higher is better)", fontsize=10)
    if chance_loss is not None:
        axes[0].axhline(chance_loss, color="0.4", linestyle="--", linewidth=1, label="uniform guess")
    if parts is not None:
        markers, styles = "osD^v", ("-", "--", ":", "-.")  # lines that overlap stay visible
        for j, (name, color) in enumerate(zip(names, SERIES_COLORS[2:], strict=False)):
            axes[2].plot(counts, parts[:, :, j].mean(axis=1), marker=markers[j % len(markers)],
                         linestyle=styles[j % len(styles)], color=color, linewidth=1.6, label=name)
        axes[2].set_ylabel("held-out accuracy of each part")
        axes[2].set_title("Which part of the answer is right", fontsize=10)
    tick_labels = [f"{h}" if d_model is None else f"{h}\n({d_model // h})" for h in counts]
    xlabel = "number of heads (log2 scale)" + ("" if d_model is None else "\n(d_head in brackets)")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(counts, tick_labels, fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[1:]:
        ax.set_ylim(-0.02, 1.02)
    fig.suptitle(title)
    described = ", ".join(f"{h} heads: loss {m:.2f}, accuracy {a:.2f}" for h, m, a
                          in zip(counts, loss.mean(axis=1), accuracy.mean(axis=1), strict=True))
    fig.alt_text = (f"{title}: held-out loss and accuracy against the number of heads on a log2 axis, mean "
                    f"and standard deviation over {loss.shape[1]} seeds. {described}.")
    return fig


def plot_blend_margins(shares: ArrayLike, margins: ArrayLike, *, marks: dict[str, float] | None = None,
                       title: str = "One head, two relations: the margin of its blend") -> CourseFigure:
    """The margin of a one-head blend against the share of weight on the first of two relations.

    Parameters
    ----------
    shares : array_like, shape (n,)
        Share of the head's weight on relation 1 (the rest on relation 2), from 0 to 1.
    margins : array_like, shape (n,)
        :func:`mha.lab.heads_that_learn.blend_margin` of ``[share, 1 - share]``.
    marks : dict of str to float, optional
        Shares to mark with a labelled vertical line, e.g. ``{"a trained head": 0.65}``.
    title : str

    Returns
    -------
    CourseFigure

    Examples
    --------
    >>> fig = plot_blend_margins([0.0, 0.5, 1.0], [0.0, 0.0, 0.0], marks={"half": 0.5})
    >>> fig.axes[0].get_xlabel()
    'share of the weight on relation 1 (the rest on relation 2)'
    """
    shares, margins = as_float_array(shares, "shares"), as_float_array(margins, "margins")
    if shares.ndim != 1 or shares.shape != margins.shape or shares.size < 2:
        raise ValueError(f"shares and margins must be 1-D arrays of one length (at least 2), got "
                         f"{shares.shape} and {margins.shape}")
    fig = new_figure(5.2, 3.1)
    ax = fig.add_subplot()
    ax.plot(shares, margins, color=SERIES_COLORS[0], linewidth=2, label="margin of the blend")
    best = int(np.flatnonzero(margins >= margins.max() - 1e-12)[-1])  # the right-hand peak, if two
    ax.plot([shares[best]], [margins[best]], "o", color=SERIES_COLORS[0])
    ax.annotate(f"best: {shares[best]:.2f} / {1 - shares[best]:.2f}", (shares[best], margins[best]),
                textcoords="offset points", xytext=(8, -2), fontsize=9)
    for (label, share), color in zip((marks or {}).items(), SERIES_COLORS[1:], strict=False):
        ax.axvline(share, color=color, linestyle="--", linewidth=1.4, label=f"{label} ({share:.2f})")
    ax.set_xlabel("share of the weight on relation 1 (the rest on relation 2)")
    ax.set_ylabel("margin (1 = one relation alone)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, max(0.4, float(margins.max()) * 1.5))  # room for the legend above the peaks
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(title, fontsize=10)
    fig.alt_text = (f"{title}: the margin between the blends of different answers against the share of "
                    f"weight on the first of two relations; zero at 0, 0.5 and 1, highest "
                    f"({margins[best]:.2f}) at {shares[best]:.2f}.")
    return fig
