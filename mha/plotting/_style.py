"""Shared look of the course's figures."""

from __future__ import annotations

#: Perceptually uniform, colour-blind friendly, readable in greyscale.
WEIGHTS_CMAP = "viridis"
#: For signed quantities (scores, differences): diverging and perceptually balanced.
SIGNED_CMAP = "RdBu_r"
#: One colour per series in line plots, from a colour-blind friendly palette.
SERIES_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def new_figure(width: float, height: float):
    """A white, constrained-layout Figure that pyplot does not track (no double display, no leak)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained", facecolor="white")
