"""Pure plotting functions: arrays in, a ``matplotlib.figure.Figure`` out.

Figures are built with ``matplotlib.figure.Figure`` rather than ``pyplot``, so nothing is shown twice in
a notebook and nothing needs closing; a notebook cell displays the returned figure. Every figure has a
white background (readable on the site's dark theme), labelled axes, titled heads and a perceptual
colormap. One module per topic; the widgets in :mod:`mha.explorers` wrap these functions.
"""

from mha.plotting.efficient import plot_decode_cost, plot_kv_tradeoff, plot_memory, plot_online_softmax
from mha.plotting.heads import plot_attention, plot_heads
from mha.plotting.training import plot_head_scores, plot_pruning, plot_training_curve

__all__ = [
    "plot_attention",
    "plot_heads",
    "plot_training_curve",
    "plot_head_scores",
    "plot_pruning",
    "plot_online_softmax",
    "plot_memory",
    "plot_decode_cost",
    "plot_kv_tradeoff",
]
