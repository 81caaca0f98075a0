"""mha.explorers.self_attention: one frame per (d_k, scaled), each showing that setting's scores."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mha.explorers.self_attention import D_K_VALUES, N_QUERIES, SEQ_K, render_scaling, scaling_explorer  # noqa: E402
from mha.lab.self_attention import sample_scores  # noqa: E402


def histogram_total(fig):
    return fig.axes[0].patches[0].get_data().values.sum()


@pytest.mark.parametrize("d_k", [4, 256])
def test_frame_draws_the_scores_of_its_setting(d_k):
    for scaled in (False, True):
        fig = render_scaling(d_k, scaled, seed=3)
        scores = sample_scores(d_k, SEQ_K, N_QUERIES, scaled=scaled, rng=3)
        limit = fig.axes[0].get_xlim()[1]
        assert histogram_total(fig) == np.sum(np.abs(scores) <= limit)
        assert f"d_k = {d_k}" in fig.axes[0].get_title()


def test_axis_range_is_the_same_in_every_frame():
    limits = {render_scaling(d_k, scaled).axes[0].get_xlim() for d_k in (1, 1024) for scaled in (0, 1)}
    assert len(limits) == 1
    assert limits.pop()[1] >= 3 * np.sqrt(max(D_K_VALUES))  # wide enough for the widest raw scores


def test_explorer_has_one_frame_per_combination_and_leaves_no_figure_open():
    plt.close("all")
    explorer = scaling_explorer(d_k_values=(1, 64))
    assert set(explorer.frames) == {(1, False), (1, True), (64, False), (64, True)}
    assert explorer.kind == "image"
    assert explorer.frames[(64, False)] != explorer.frames[(64, True)]
    assert plt.get_fignums() == []


def test_no_text_draws_the_random_scores_and_text_that_is_not_a_str_is_refused():
    for text in (None, "", "   "):
        fig = render_scaling(16, True, text=text)
        assert fig.axes[0].get_title() == render_scaling(16, True).axes[0].get_title()
    with pytest.raises(TypeError, match="text must be a str .* got int"):
        render_scaling(16, True, text=3)
    plt.close("all")


@pytest.mark.parametrize("scaled", [False, True])
def test_every_frame_is_drawn_for_the_column_with_no_text_on_text(scaled):
    """The panels stand one under the other at the column's width: side by side, narrowed to the
    column, the titles ran off the top and the colour bar's label off the right edge."""
    from mha.explorers.png import figure_to_png
    from mha.plotting.style import MAX_WIDTH_IN, PNG_DPI, png_facts

    for d_k in D_K_VALUES:
        facts = png_facts(figure_to_png(render_scaling(d_k, scaled)))
        assert facts["width"] <= MAX_WIDTH_IN * PNG_DPI + 1
        text = facts["text"]
        assert (text["TextOverlaps"], text["TextOutside"]) == ("0", "0"), text.get("TextProblems")
