"""Figures for the chapter on heads that learn: training curves, per-head scores, pruning curves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure

from mha.plotting.style import (
    MAX_WIDTH_IN,
    MIN_FONT_PT,
    SERIES_COLORS,
    TITLE_PT,
    WEIGHTS_CMAP,
    max_panels_per_row,
    new_figure,
)
from mha.typing import ArrayLike
from mha.validation import as_float_array

if TYPE_CHECKING:  # names for the annotations only: not imported at run time
    from mha.lab.analysis import PruningCurve

__all__ = ["head_label", "plot_training_curve", "plot_head_scores", "plot_pruning"]

#: Above this many steps, the pruning curve names only every k-th step on its x axis: its 10-pt names,
#: turned 60 degrees, need about 0.2 in apart on an axis about 3.6 in long in the column.
MAX_NAMED_STEPS = 16
#: Above this many heads per layer, the head grid drops its "on"/"off" words (the cells are too small).
MAX_NAMED_GRID_HEADS = 8


def head_label(index: int | tuple[int, ...]) -> str:
    """``(1, 3)`` -> ``"L1 H3"`` (layer 1, head 3); ``(3,)`` or ``3`` -> ``"H3"``."""
    parts = tuple(np.atleast_1d(index).tolist())
    return f"L{parts[0]} H{parts[1]}" if len(parts) == 2 else f"H{parts[-1]}"


def _running_mean(values: np.ndarray, window: int) -> np.ndarray:
    window = max(1, min(window, values.size))
    kernel = np.ones(window) / window
    padded = np.concatenate([np.full(window - 1, values[0]), values])  # no dip at the start
    return np.convolve(padded, kernel, mode="valid")


def plot_training_curve(loss: ArrayLike, accuracy: ArrayLike | None = None, *, marks: Sequence[int] = (),
                        title: str = "Training") -> Figure:
    """Loss per step (log scale) and, optionally, accuracy per step, with dashed lines at ``marks``.

    Parameters
    ----------
    loss : array_like, shape (steps,)
        Training loss per step, in nats.
    accuracy : array_like, shape (steps,), optional
        Fraction of correct predictions per step.
    marks : sequence of int
        Steps to mark, e.g. where attention snapshots were taken.
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_training_curve(np.linspace(3, 0.1, 50), np.linspace(0, 1, 50), marks=[0, 25])
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['loss (nats, log scale)', 'accuracy']
    """
    loss = as_float_array(loss, "loss")
    if loss.ndim != 1 or loss.size == 0 or (loss <= 0).any():
        raise ValueError(f"loss must be a non-empty 1-D array of positive numbers, got shape {loss.shape}")
    series = [("loss (nats, log scale)", loss)]
    if accuracy is not None:
        accuracy = as_float_array(accuracy, "accuracy")
        if accuracy.shape != loss.shape:
            raise ValueError(f"accuracy {accuracy.shape} must have the shape of loss {loss.shape}")
        series.append(("accuracy", accuracy))
    fig = new_figure(4.2 * len(series) + 0.6, 3.2)
    axes = fig.subplots(1, len(series), squeeze=False)[0]
    steps = np.arange(loss.size)
    window = max(1, loss.size // 50)
    for ax, (label, values), color in zip(axes, series, SERIES_COLORS, strict=False):
        ax.plot(steps, values, color=color, alpha=0.3, linewidth=0.8, label="per step")
        ax.plot(steps, _running_mean(values, window), color=color, linewidth=1.8,
                label=f"mean of {window} steps")
        for step in marks:
            ax.axvline(step, color="0.5", linestyle="--", linewidth=0.8)
        ax.set_xlabel("training step")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[0].legend(loc="upper right", fontsize=8)
    fig.alt_text = (f"{title}: training loss per step on a log scale, from {loss[0]:.3g} nats at the start "
                    f"to {loss[-1]:.3g} after {loss.size} steps")
    if accuracy is not None:
        axes[1].set_ylim(-0.02, 1.02)
        fig.alt_text += f"; beside it, accuracy per step, from {accuracy[0]:.2f} to {accuracy[-1]:.2f}"
    fig.suptitle(title)
    fig.alt_text += "."
    return fig


def plot_head_scores(scores: Mapping[str, np.ndarray], *, title: str | None = None,
                     fmt: str = ".2f") -> Figure:
    """One small heatmap per score, layers down and heads across, each cell labelled with its value.

    Parameters
    ----------
    scores : mapping of str to array_like of shape (n_layers, n_heads)
        E.g. ``{"weight on previous token": ..., "entropy (nats)": ...}``. Each panel has its own colour
        scale (scores have different units).
    title : str, optional
    fmt : str, default ".2f"
        Format of the numbers written in the cells.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_head_scores({"a": np.zeros((2, 4)), "b": np.ones((2, 4))})
    >>> [ax.get_title() for ax in fig.axes if ax.get_title()]
    ['a', 'b']
    """
    if not isinstance(scores, Mapping) or not scores:
        raise ValueError("scores must be a non-empty mapping of name -> (n_layers, n_heads) array")
    arrays = {name: as_float_array(values, name) for name, values in scores.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"every score must have the same (n_layers, n_heads) shape, got {sorted(shapes)}")
    n_layers, n_heads = next(iter(shapes))
    # As many maps side by side as fit the book's column (mha.plotting.style), one 10-pt value per cell.
    panel_width, panel_height = 0.6 * n_heads + 1.7, 0.5 * n_layers + 1.4
    per_row = min(len(arrays), max_panels_per_row(panel_width))
    n_rows = -(-len(arrays) // per_row)
    fig = new_figure(min(MAX_WIDTH_IN, per_row * panel_width), n_rows * panel_height + 0.4)
    grid = fig.subplots(n_rows, per_row, squeeze=False).ravel()
    for spare in grid[len(arrays):]:
        spare.set_visible(False)
    axes = grid[:len(arrays)]
    for ax, (name, values) in zip(axes, arrays.items(), strict=True):
        low, high = float(values.min()), float(values.max())
        image = ax.imshow(values, cmap=WEIGHTS_CMAP, vmin=low, vmax=high if high > low else low + 1,
                          aspect="auto")
        middle = (low + high) / 2
        cell = (min(MAX_WIDTH_IN, per_row * panel_width) / per_row - 1.7) / n_heads  # inches
        # 10-pt numbers that would overrun their cells are left out: the colour and the alt text say them.
        fits = cell >= 0.09 * max(len(format(v, fmt)) for v in values.ravel())
        for (layer, head), value in np.ndenumerate(values if fits else np.empty((0, 0))):
            ax.text(head, layer, format(value, fmt), ha="center", va="center", fontsize=MIN_FONT_PT,
                    color="black" if value > middle else "white")  # dark text on bright cells
        ax.set_xticks(range(n_heads), [f"H{i}" for i in range(n_heads)])
        ax.set_yticks(range(n_layers), [f"layer {layer}" for layer in range(n_layers)])
        ax.set_xlabel("head")
        ax.set_title(name, fontsize=TITLE_PT)
        fig.colorbar(image, ax=ax, shrink=0.8)
    if title:
        fig.suptitle(title)
    described = "; ".join(
        f"{name}: " + ", ".join(f"layer {layer} [{' '.join(format(v, fmt) for v in row)}]"
                                for layer, row in enumerate(values))
        for name, values in arrays.items())
    fig.alt_text = (f"{title + ': ' if title else ''}per-head scores as small heatmaps, layers as rows and "
                    f"heads as columns. {described}.")
    return fig


def plot_pruning(curve: PruningCurve, accuracy: ArrayLike | None = None, *, n_removed: int | None = None,
                 metric: str = "loss (nats)", title: str = "Removing heads, least important first") -> Figure:
    """The metric as heads are removed, with the removed head named under each step.

    Parameters
    ----------
    curve : PruningCurve
        From :func:`mha.lab.analysis.pruning_curve`.
    accuracy : array_like, shape (len(curve.values),), optional
        A second metric along the same removal order (e.g. accuracy), drawn on its own axis.
    n_removed : int, optional
        Mark this step and draw which heads are still on (a grid of layers x heads) beside the curve.
    metric : str
        Axis label for ``curve.values``.
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from mha.lab.analysis import pruning_curve
    >>> curve = pruning_curve(lambda m: float(3 - m.sum()), np.array([[0.1, 0.3], [0.2, 0.0]]))
    >>> fig = plot_pruning(curve, n_removed=2)
    >>> fig.axes[0].get_title()
    '2 heads removed'
    """
    values = as_float_array(curve.values, "curve.values")
    steps = np.arange(values.size)
    if n_removed is not None and not 0 <= n_removed < values.size:
        raise ValueError(f"n_removed must lie in [0, {values.size - 1}], got {n_removed}")
    with_grid = n_removed is not None
    width = 9.0 if with_grid else MAX_WIDTH_IN  # with the grid: two panels, one under the other
    fig = new_figure(width, 3.8)
    fig.set_layout_engine(None)  # fixed margins: constrained layout would double the redraw time
    fig.subplots_adjust(left=0.9 / width, right=1 - 0.8 / width, bottom=0.3, top=0.9, wspace=0.35)
    if with_grid:
        grid_ax, ax = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 2.2]})
        _draw_head_grid(grid_ax, curve.masks[n_removed], f"{n_removed} heads removed")
    else:
        ax = fig.subplots()
    many = values.size > MAX_NAMED_STEPS
    ax.plot(steps, values, marker="o", markersize=3 if many else 6, color=SERIES_COLORS[0], label=metric)
    ax.set_ylabel(metric, color=SERIES_COLORS[0])
    labels = ["none"] + [f"−{head_label(i)}" for i in curve.removed]
    every = -(-values.size // MAX_NAMED_STEPS)  # name at most MAX_NAMED_STEPS steps, evenly spaced
    ax.set_xticks(steps[::every], labels[::every], rotation=60, fontsize=MIN_FONT_PT)
    ax.set_xlabel("heads removed so far (the last one named)" if every == 1 else
                  f"heads removed so far (one step in {every} named)")  # the head removed there
    ax.grid(alpha=0.3)
    if accuracy is not None:
        accuracy = as_float_array(accuracy, "accuracy")
        if accuracy.shape != values.shape:
            raise ValueError(f"accuracy {accuracy.shape} must match the curve's {values.shape}")
        twin = ax.twinx()
        twin.plot(steps, accuracy, marker="s", markersize=3 if many else 6, color=SERIES_COLORS[1],
                  label="accuracy")
        twin.set_ylabel("accuracy", color=SERIES_COLORS[1])
        twin.set_ylim(-0.02, 1.02)
    if with_grid:
        ax.axvline(n_removed, color="0.4", linestyle="--")
    ax.set_title(title, fontsize=10)
    steps_text = ", ".join(f"{'none' if i == 0 else head_label(curve.removed[i - 1])}: {v:.3g}"
                           for i, v in enumerate(values))
    fig.alt_text = (f"{title}: {metric} after each removal (removed head, value): {steps_text}"
                    + (f"; the grid shows the heads still on after {n_removed} removals" if with_grid else "")
                    + ".")
    return fig


def _draw_head_grid(ax, mask: np.ndarray, title: str) -> None:
    """Kept heads bright, removed heads dark, each cell named."""
    mask = np.atleast_2d(mask)  # (n_layers, n_heads)
    ax.imshow(mask, cmap=WEIGHTS_CMAP, vmin=0, vmax=1, aspect="equal")
    if mask.shape[1] <= MAX_NAMED_GRID_HEADS:
        for (layer, head), kept in np.ndenumerate(mask):
            ax.text(head, layer, "on" if kept else "off", ha="center", va="center", fontsize=9,
                    color="black" if kept else "white")
    else:  # cells too small for words: the title says which colour is which
        title = f"{title} (bright: on)"
    ax.set_xticks(range(mask.shape[1]), [f"H{i}" if mask.shape[1] <= MAX_NAMED_GRID_HEADS else str(i)
                                         for i in range(mask.shape[1])], fontsize=8)
    ax.set_yticks(range(mask.shape[0]), [f"layer {layer}" for layer in range(mask.shape[0])])
    ax.set_xlabel("head")
    ax.set_title(title, fontsize=10)
