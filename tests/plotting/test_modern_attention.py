import matplotlib
import numpy as np

matplotlib.use("Agg")

import mha  # noqa: E402
from mha.plotting import (  # noqa: E402
    plot_cache_bars,
    plot_cache_growth,
    plot_context_losses,
    plot_first_token_weight,
    plot_logit_growth,
    plot_logit_ranges,
    plot_patterns,
    plot_receptive_field,
    plot_rotary_turns,
    plot_stream_losses,
)
from mha.rope_scaling import scaled_rotary  # noqa: E402


def labelled(fig):
    """Every visible axes has a title and axis labels (or is an image panel with a title)."""
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    return all(ax.get_title() and ax.get_xlabel() for ax in axes)


def test_every_figure_is_titled_and_labelled():
    growth = {"full": {"tokens": [1, 2], "cache_bytes": [10, 20], "step_peak_bytes": [5, 6]}}
    turns = {m: scaled_rotary(m, 8, scale=4, original_context=16).frequencies for m in ("none", "ntk")}
    figures = [
        plot_patterns({"causal": mha.causal_mask(6), "window": mha.sliding_window_mask(6, window=2)},
                      notes={"window": "50% of the FLOPs"}),
        plot_cache_growth(growth),
        plot_receptive_field([3, 6, 9], 4),
        plot_first_token_weight({"a": np.full((2, 3), 0.2), "b": np.full((6, 12), 0.5)}),
        plot_stream_losses({"dense": np.ones(100), "window": np.ones(100) * 2}, trained_length=32),
        plot_logit_ranges([1, 2], {"plain": {"largest": [1, 4], "entropy": [2, 1]}}),
        plot_logit_growth({"plain": {0: 1.0, 10: 100.0}}, {"plain": [3.0, 2.5]}),
        plot_context_losses({"none": {64: np.linspace(2, 3, 64)}}, original_context=32, highlight="none"),
        plot_rotary_turns(turns, original_context=16, length=64),
        plot_cache_bars({"MHA": 65536, "MLA": 1152}, title="cache"),
    ]
    assert all(labelled(fig) for fig in figures)


def test_the_pattern_notes_and_the_context_legend_carry_the_numbers():
    fig = plot_patterns({"window": mha.sliding_window_mask(6, window=2)}, notes={"window": "33%"})
    assert fig.axes[0].get_title() == "window\n33%"
    fig = plot_context_losses({"ntk": {64: np.r_[np.zeros(32), np.ones(32)]}}, original_context=32)
    assert "ntk: 1.00 past 32" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
