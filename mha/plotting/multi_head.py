"""One softmax, two attention patterns: how much weight each pattern can get from a single head."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from mha.plotting.style import SERIES_COLORS, WEIGHTS_CMAP, new_figure
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = ["plot_pattern_tradeoff"]


def plot_pattern_tradeoff(mix: ArrayLike, mass_a: ArrayLike, mass_b: ArrayLike, *, label_a: str, label_b: str,
                          heads_point: tuple[float, float] | None = None) -> Figure:
    """Weight a single head puts on pattern A against pattern B, as the mix between them varies.

    One softmax row sums to 1, so a single head can never put more than 1 in total on two disjoint sets of
    keys: its points lie on or below the line ``a + b = 1``. Separate heads each have a full unit of weight;
    ``heads_point`` marks where they land.

    Parameters
    ----------
    mix : array_like, shape (n,)
        The mixing coefficient of each point (pattern A's share of the scores), for the colour scale.
    mass_a, mass_b : array_like, shape (n,)
        Mean weight on pattern A's and pattern B's keys at each mix.
    label_a, label_b : str
        Names of the two patterns (axis labels).
    heads_point : tuple of float, optional
        ``(mass_a, mass_b)`` achieved by one head per pattern.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> t = np.linspace(0, 1, 5)
    >>> fig = plot_pattern_tradeoff(t, t, 1 - t, label_a="A", label_b="B", heads_point=(1.0, 1.0))
    >>> fig.axes[0].get_xlabel()
    'mean weight on A'
    """
    mix, mass_a, mass_b = (as_float_array(a, name) for a, name in
                           ((mix, "mix"), (mass_a, "mass_a"), (mass_b, "mass_b")))
    if not (mix.ndim == 1 and mix.shape == mass_a.shape == mass_b.shape):
        raise ValueError(f"mix, mass_a and mass_b must be 1-D of one length, got {mix.shape}, "
                         f"{mass_a.shape} and {mass_b.shape}")
    fig = new_figure(5.6, 5.4)
    ax = fig.add_subplot()
    edge = np.array([0.0, 1.0])
    ax.fill_between(edge, 1 - edge, color="0.92", label="reachable by one softmax row (a + b ≤ 1)")
    ax.plot(edge, 1 - edge, color="0.6", linestyle="--", linewidth=1)
    ax.plot(mass_a, mass_b, color="0.5", linewidth=1, zorder=2)
    points = ax.scatter(mass_a, mass_b, c=mix, cmap=WEIGHTS_CMAP, vmin=0.0, vmax=1.0, zorder=3,
                        label="one head, scores mixed")
    if heads_point is not None:
        ax.scatter(*heads_point, marker="*", s=260, color=SERIES_COLORS[1], zorder=4,
                   label="two heads, one per pattern")
    ax.set_xlim(0, 1.05)
    ax.set_ylim(0, 1.05)
    ax.set_aspect("equal")
    ax.set_xlabel(f"mean weight on {label_a}")
    ax.set_ylabel(f"mean weight on {label_b}")
    ax.set_title("One softmax has one unit of weight to share")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, frameon=False)
    fig.colorbar(points, ax=ax, label=f"share α of {label_a} in the scores", shrink=0.8)
    return fig
