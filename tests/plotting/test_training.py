import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402

from mha.explorers import pruning_explorer, training_explorer  # noqa: E402
from mha.lab.analysis import pruning_curve  # noqa: E402
from mha.plotting import plot_head_scores, plot_pruning, plot_training_curve  # noqa: E402
from mha.plotting.training import head_label  # noqa: E402


def test_training_curve_draws_loss_on_a_log_axis_and_accuracy_beside_it():
    loss = np.geomspace(3.0, 0.01, 120)
    accuracy = np.linspace(0.1, 1.0, 120)
    fig = plot_training_curve(loss, accuracy, marks=[0, 60])
    loss_ax, acc_ax = fig.axes
    assert loss_ax.get_yscale() == "log" and acc_ax.get_yscale() == "linear"
    np.testing.assert_array_equal(loss_ax.lines[0].get_ydata(), loss)  # the raw series, untouched
    smoothed = loss_ax.lines[1].get_ydata()
    assert smoothed[0] == pytest.approx(loss[0]) and np.all(np.diff(smoothed) <= 0)
    assert len([line for line in loss_ax.lines if line.get_linestyle() == "--"]) == 2
    assert loss_ax.get_xlabel() == acc_ax.get_xlabel() == "training step"
    assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0)
    assert not plt.get_fignums()


def test_training_curve_refuses_non_positive_loss_and_mismatched_accuracy():
    with pytest.raises(ValueError, match="positive"):
        plot_training_curve(np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="shape of loss"):
        plot_training_curve(np.ones(3), np.ones(4))


def test_head_scores_write_every_value_in_its_cell():
    scores = {"share": np.array([[0.1, 0.9], [0.5, 0.2]]), "bits": np.arange(4.0).reshape(2, 2)}
    fig = plot_head_scores(scores, title="Scores", fmt=".1f")
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["share", "bits"]
    assert [t.get_text() for t in panels[0].texts] == ["0.1", "0.9", "0.5", "0.2"]
    np.testing.assert_array_equal(panels[1].get_images()[0].get_array(), scores["bits"])
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["layer 0", "layer 1"]
    with pytest.raises(ValueError, match="same"):
        plot_head_scores({"a": np.ones((2, 2)), "b": np.ones((2, 3))})


def _curve():
    cost = np.array([[0.2, 0.0], [3.0, 0.1]])
    return pruning_curve(lambda m: 0.5 + float(np.sum(cost * (1 - m))), cost)


def test_pruning_plot_names_the_head_removed_at_each_step():
    curve = _curve()
    fig = plot_pruning(curve, accuracy=np.linspace(1, 0, 5))
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["none", "−L0 H1", "−L1 H1", "−L0 H0", "−L1 H0"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), curve.values)
    assert len(fig.axes) == 2  # loss and the accuracy twin axis


def test_pruning_plot_with_a_step_shows_the_heads_still_on():
    fig = plot_pruning(_curve(), n_removed=2)
    grid = fig.axes[0]
    assert grid.get_title() == "2 heads removed"
    assert [t.get_text() for t in grid.texts] == ["on", "off", "on", "off"]
    with pytest.raises(ValueError, match="n_removed"):
        plot_pruning(_curve(), n_removed=5)


def test_head_labels():
    assert head_label((1, 3)) == "L1 H3"
    assert head_label((2,)) == "H2"


def test_explorers_render_one_frame_per_slider_value():
    w = np.full((2, 4, 4), 0.25)
    explorer = training_explorer({0: [w, w], 5: [w, w], 9: [w, w]}, list("abcd"))
    assert sorted(explorer.frames) == [(s, layer) for s in (0, 5, 9) for layer in (0, 1)]
    assert explorer.kind == "image"
    assert len(pruning_explorer(_curve(), np.linspace(1, 0, 5)).frames) == 5
    with pytest.raises(ValueError, match="empty"):
        training_explorer({}, list("abcd"))
    assert not plt.get_fignums()


def test_figures_describe_their_numbers_in_alt_text():
    assert "from 3 nats" in plot_training_curve(np.geomspace(3.0, 0.01, 20)).describe()
    assert "layer 1 [0.5 0.2]" in plot_head_scores({"share": np.array([[0.1, 0.9], [0.5, 0.2]])},
                                                   fmt=".1f").describe()
    text = plot_pruning(_curve(), n_removed=1).describe()
    assert "L0 H1: 0.5" in text and "after 1 removals" in text
