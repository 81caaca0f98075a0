import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from mha.plotting import plot_head_count_sweep  # noqa: E402

COUNTS = np.array([1, 2, 4, 8])
LOSS = np.array([[2.7, 2.6, 2.7], [1.3, 1.4, 1.3], [0.1, 0.0, 0.2], [0.9, 1.1, 1.0]])
ACCURACY = 1 - LOSS / 3


def test_sweep_plot_draws_mean_and_spread_on_a_log2_axis_with_labelled_axes():
    fig = plot_head_count_sweep(COUNTS, LOSS, ACCURACY, d_model=32, chance_loss=3 * np.log(4))
    assert isinstance(fig, Figure) and not plt.get_fignums()
    loss_ax, acc_ax = fig.axes
    assert loss_ax.get_ylabel() == "held-out loss (nats)"
    assert acc_ax.get_ylabel() == "held-out accuracy (whole answer)"
    for ax in fig.axes:
        assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
        assert ax.get_xlabel().startswith("number of heads (log2 scale)") and ax.get_title()
        assert [t.get_text() for t in ax.get_xticklabels()][0] == "1\n(32)"
    mean_line = loss_ax.lines[0]
    np.testing.assert_allclose(mean_line.get_ydata(), LOSS.mean(axis=1))
    bars = loss_ax.collections[0].get_segments()  # one vertical error bar per head count
    np.testing.assert_allclose([seg[1, 1] - seg[0, 1] for seg in bars], 2 * LOSS.std(axis=1, ddof=1))
    assert len(loss_ax.collections[1].get_offsets()) == LOSS.size  # every seed drawn
    assert any(line.get_linestyle() == "--" for line in loss_ax.lines)  # the uniform guess
    assert fig._suptitle.get_text() and "1 heads: loss 2.67" in fig.alt_text


def test_sweep_plot_adds_a_panel_per_relation_when_given():
    parts = np.stack([np.ones_like(LOSS), ACCURACY, np.full_like(LOSS, 0.25)], axis=-1)
    fig = plot_head_count_sweep(COUNTS, LOSS, ACCURACY, relation_accuracy=parts,
                                relation_names=["previous", "colour", "first"])
    assert len(fig.axes) == 3
    panel = fig.axes[2]
    assert [t.get_text() for t in panel.get_legend().get_texts()] == ["previous", "colour", "first"]
    np.testing.assert_allclose(panel.lines[1].get_ydata(), ACCURACY.mean(axis=1))


def test_sweep_plot_names_the_shape_it_expected():
    with pytest.raises(ValueError, match=r"loss must have shape \(n_counts, n_seeds\) = \(4, n_seeds\), "
                                         r"got \(3, 3\)"):
        plot_head_count_sweep(COUNTS, LOSS[:3], ACCURACY)
    with pytest.raises(ValueError, match="accuracy .* must have the shape of loss"):
        plot_head_count_sweep(COUNTS, LOSS, ACCURACY[:, :2])
    with pytest.raises(ValueError, match="positive integers"):
        plot_head_count_sweep([1.5, 2, 4, 8], LOSS, ACCURACY)
    with pytest.raises(ValueError, match="finite"):
        plot_head_count_sweep(COUNTS, np.where(LOSS > 2, np.nan, LOSS), ACCURACY)
    with pytest.raises(ValueError, match="relation_names must name 3 parts, got 2"):
        plot_head_count_sweep(COUNTS, LOSS, ACCURACY, relation_accuracy=np.zeros((4, 3, 3)),
                              relation_names=["a", "b"])


def test_blend_margin_plot_marks_the_best_split_and_the_given_shares():
    from mha.lab import blend_margin
    from mha.plotting import plot_blend_margins

    shares = np.linspace(0, 1, 31)
    margins = np.array([blend_margin([s, 1 - s]) for s in shares])
    fig = plot_blend_margins(shares, margins, marks={"equal": 0.5, "trained": 0.65})
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    assert [line.get_xdata()[0] for line in ax.lines[2:]] == [0.5, 0.65]  # the two marks
    best = ax.texts[0].get_text()
    assert best.startswith("best: 0.67") or best.startswith("best: 0.33"), best
    assert "highest" in fig.alt_text


def test_blend_margin_plot_names_the_shapes_it_needs():
    from mha.plotting import plot_blend_margins

    with pytest.raises(ValueError, match="one length"):
        plot_blend_margins([0.0, 1.0], [0.0])
