"""Figures for the transformer-block chapter: what a layer norm does to tokens, and how the residual
stream evolves through a stack of blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mha.plotting.charts import draw_curves
from mha.plotting.style import MAX_WIDTH_IN, new_figure
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = ["plot_token_statistics", "plot_stack_statistics", "draw_stack_statistics"]


def plot_token_statistics(before: ArrayLike, after: ArrayLike, tokens: Sequence[str] | None = None, *,
                          title: str = "Each token's features, before and after a layer norm") -> Figure:
    """Mean and standard deviation of each token's features, before and after normalisation.

    Parameters
    ----------
    before, after : array_like, shape (seq, d_model)
    tokens : sequence of str, optional
        Tick labels (positions otherwise).
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> x = np.arange(12.0).reshape(3, 4)
    >>> fig = plot_token_statistics(x, x - x.mean(axis=1, keepdims=True), ["a", "b", "c"])
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['mean of the features', 'std of the features']
    """
    before = as_float_array(before, "before")
    after = as_float_array(after, "after")
    if before.ndim != 2 or before.shape != after.shape:
        raise ValueError(f"before and after must share a (seq, d_model) shape, got {before.shape} "
                         f"and {after.shape}")
    if tokens is not None and len(tokens) != before.shape[0]:
        raise ValueError(f"{len(tokens)} tokens for {before.shape[0]} rows")
    positions = np.arange(before.shape[0])
    alt_text = (f"{title}: two line charts over the {before.shape[0]} tokens. Before, the means range from "
                f"{before.mean(axis=1).min():.2g} to {before.mean(axis=1).max():.2g} and the standard "
                f"deviations from {before.std(axis=1).min():.2g} to {before.std(axis=1).max():.2g}; after, "
                f"the means lie between {after.mean(axis=1).min():.2g} and {after.mean(axis=1).max():.2g} "
                f"and the standard deviations between {after.std(axis=1).min():.2g} and "
                f"{after.std(axis=1).max():.2g}.")
    fig = new_figure(9.0, 3.2, alt_text=alt_text)
    axes = fig.subplots(1, 2)
    for ax, stat, label in ((axes[0], np.mean, "mean"), (axes[1], np.std, "std")):
        curves = {"before": stat(before, axis=1), "after": stat(after, axis=1)}
        draw_curves(ax, positions, curves, xlabel="token", ylabel=f"{label} of the features", markers=True)
        if tokens is not None:
            ax.set_xticks(positions, labels=list(tokens), rotation=90)
    fig.suptitle(title)
    return fig


_PANELS = (
    ("rms", "size of the stream (RMS)", "how big the activations get"),
    ("cosine", "cosine with the input", "how much of the input survives"),
    ("update", "|block change| / |input|", "how much each block rewrites"),
)


def draw_stack_statistics(axes: Sequence[Axes],
                          stats: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]], *,
                          limits: Mapping[str, tuple[float, float]] | None = None) -> None:
    """Draw the three panels of :func:`plot_stack_statistics` on three existing axes.

    Axes that share their x axis with the one below (stacked panels) leave the depth's tick labels
    and name to the lowest."""
    for i, (ax, (key, ylabel, title)) in enumerate(zip(axes, _PANELS, strict=True)):
        curves = {label: values[key] for label, values in stats.items()}
        n = len(next(iter(curves.values())))
        first = 0 if key != "update" else 1  # block l's update is drawn at depth l
        draw_curves(ax, np.arange(first, first + n), curves, xlabel="depth (blocks)", ylabel=ylabel,
                    title=title, legend=i == 0)  # one legend serves the three panels
        if limits and key in limits:
            ax.set_ylim(*limits[key])
    for upper, lower in zip(axes[:-1], axes[1:], strict=True):
        if upper.get_shared_x_axes().joined(upper, lower):
            upper.set_xlabel("")
            upper.tick_params(axis="x", labelbottom=False)


def plot_stack_statistics(stats: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]], *,
                          title: str | None = None,
                          limits: Mapping[str, tuple[float, float]] | None = None) -> Figure:
    """Three panels along the depth of a stack, one curve per setting (e.g. pre-norm vs post-norm).

    Parameters
    ----------
    stats : mapping of str to dict
        Label -> the output of :func:`mha.block.residual_statistics` (``rms``, ``cosine``, ``update``).
    title : str, optional
    limits : mapping of str to (float, float), optional
        Fixed y limits per panel (``"rms"``, ``"cosine"``, ``"update"``), so that frames compare.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> flat = {"rms": [1, 1, 1], "cosine": [1, 0.5, 0.2], "update": [0.5, 0.5]}
    >>> fig = plot_stack_statistics({"post-norm": flat})
    >>> [ax.get_title() for ax in fig.axes]
    ['how big the activations get', 'how much of the input survives', 'how much each block rewrites']
    """
    if not stats:
        raise ValueError("stats is empty: give at least one label -> statistics entry")
    endings = "; ".join(
        f"{label} ends with size {values['rms'][-1]:.2f}, cosine with the input {values['cosine'][-1]:.2f} "
        f"and a last-block change of {values['update'][-1]:.2f}" for label, values in stats.items())
    alt_text = (f"{title + ': ' if title else ''}three line charts against depth: the size of the "
                f"residual stream, its cosine with the input, and how much each block changes it. {endings}.")
    # One panel under another, each as wide as the column (mha.plotting.style), sharing the depth
    # axis; margins in inches for the labels (fixed margins keep widget redraws fast).
    width, panel, gap, top = MAX_WIDTH_IN, 1.85, 0.45, 0.85 if title else 0.4
    left, right, bottom = 0.8, 0.15, 0.55
    height = top + 3 * panel + 2 * gap + bottom
    fig = new_figure(width, height, alt_text=alt_text)
    fig.set_layout_engine(None)
    axes = fig.subplots(3, 1, sharex=True, gridspec_kw={
        "left": left / width, "right": 1 - right / width, "bottom": bottom / height,
        "top": 1 - top / height, "hspace": gap / panel})
    draw_stack_statistics(axes, stats, limits=limits)
    if title:
        fig.suptitle(title)
    return fig
