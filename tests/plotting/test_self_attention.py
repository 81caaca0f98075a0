"""mha.plotting.self_attention: the figures of the scaling story carry the data they are given."""

import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from mha.attention import softmax  # noqa: E402
from mha.lab.self_attention import ScalingCurves, entropy  # noqa: E402
from mha.plotting.self_attention import (  # noqa: E402
    plot_saturation,
    plot_scaling_frame,
    plot_score_variance,
    plot_scores_and_weights,
)


@pytest.fixture
def curves():
    d_k = np.array([1, 4, 16])
    return ScalingCurves(
        d_k=d_k, seq_k=8,
        variance_raw=np.array([1.0, 4.1, 15.8]), variance_scaled=np.array([1.0, 1.02, 0.99]),
        max_weight_raw=np.array([0.3, 0.5, 0.7]), max_weight_scaled=np.array([0.3, 0.31, 0.29]),
        entropy_raw=np.array([1.8, 1.3, 0.8]), entropy_scaled=np.array([1.8, 1.79, 1.81]),
    )


def line_data(ax):
    return {line.get_label(): line.get_ydata() for line in ax.get_lines()}


def test_variance_plot_draws_both_curves_and_the_prediction(curves):
    fig = plot_score_variance(curves)
    assert isinstance(fig, Figure)
    lines = line_data(fig.axes[0])
    np.testing.assert_array_equal(lines["q·k (no scaling)"], curves.variance_raw)
    np.testing.assert_array_equal(lines["q·k / √d_k"], curves.variance_scaled)
    np.testing.assert_array_equal(lines["d_k (the prediction)"], curves.d_k)
    assert fig.axes[0].get_ylabel() and fig.axes[0].get_title()


def test_saturation_plot_has_both_measures_and_uniform_references(curves):
    fig = plot_saturation(curves)
    ax_max, ax_entropy = fig.axes
    np.testing.assert_array_equal(line_data(ax_max)["q·k (no scaling)"], curves.max_weight_raw)
    np.testing.assert_array_equal(line_data(ax_entropy)["q·k / √d_k"], curves.entropy_scaled)
    # horizontal reference lines at the uniform and one-hot values for seq_k = 8
    levels_max = {float(line.get_ydata()[0]) for line in ax_max.get_lines()[:2]}
    levels_entropy = {float(line.get_ydata()[0]) for line in ax_entropy.get_lines()[:2]}
    assert levels_max == {1.0, 1 / 8}
    assert sorted(levels_entropy) == pytest.approx([0.0, math.log(8)])
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in (ax_max, ax_entropy))


def test_scores_and_weights_show_the_given_arrays():
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((3, 4))
    scores[0, 2:] = -np.inf  # masked keys
    weights = softmax(scores)
    fig = plot_scores_and_weights(scores, weights, ["a", "b", "c"], ["w", "x", "y", "z"], title="T")
    ax_scores, ax_weights = fig.axes[:2]
    shown = ax_scores.get_images()[0].get_array()
    assert shown.mask[0, 2:].all() and not shown.mask[1:].any()  # -inf drawn blank, not as a colour
    np.testing.assert_array_equal(ax_weights.get_images()[0].get_array(), weights)
    assert ax_scores.get_images()[0].get_cmap().name == "RdBu_r"
    assert ax_weights.get_images()[0].get_cmap().name == "viridis"
    # a symmetric colour scale, so that zero is the neutral colour
    vmin, vmax = ax_scores.get_images()[0].get_clim()
    assert vmin == -vmax == -np.abs(scores[np.isfinite(scores)]).max()
    assert [t.get_text() for t in ax_scores.get_xticklabels()] == ["w", "x", "y", "z"]
    assert fig.get_suptitle() == "T"


def test_scores_and_weights_reject_mismatched_shapes():
    with pytest.raises(ValueError, match="shape"):
        plot_scores_and_weights(np.zeros((2, 3)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="tokens_q"):
        plot_scores_and_weights(np.zeros((2, 2)), np.zeros((2, 2)), ["only one"])


@pytest.mark.parametrize("scaled", [False, True])
def test_scaling_frame_reports_what_it_draws(scaled):
    rng = np.random.default_rng(1)
    scores = rng.standard_normal((40, 16)) * 5
    fig = plot_scaling_frame(scores, d_k=25, scaled=scaled, score_limit=20.0, rows_shown=6)
    ax_hist, ax_weights = fig.axes[:2]
    counts = ax_hist.patches[0].get_data().values.sum()
    assert counts == np.sum(np.abs(scores) <= 20.0)  # every score in range is counted once
    assert ax_hist.get_xlim() == (-20.0, 20.0)
    np.testing.assert_allclose(ax_weights.get_images()[0].get_array(), softmax(scores)[:6])
    assert f"{entropy(softmax(scores)).mean():.2f}" in ax_weights.get_title()
    assert ("√d_k" in ax_hist.get_title()) == scaled


@pytest.mark.parametrize("kwargs, match", [({"score_limit": 0.0}, "score_limit"),
                                           ({"scores": np.zeros(5)}, "n_queries, seq_k")])
def test_scaling_frame_rejects_bad_input(kwargs, match):
    args = {"scores": np.zeros((3, 4)), "d_k": 4, "scaled": True, "score_limit": 3.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        plot_scaling_frame(**args)
