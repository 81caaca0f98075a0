import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402

from mha.explorers import kv_sharing_explorer, online_softmax_explorer  # noqa: E402
from mha.plotting import plot_decode_cost, plot_kv_tradeoff, plot_memory, plot_online_softmax  # noqa: E402


def _trace():
    scores = np.array([0.5, -1.0, 2.0, 0.0, 3.0])
    return dict(scores=scores, block_size=2, running_max=[0.5, 2.0, 3.0], running_sum=[1.2, 1.3, 1.4],
                estimates=np.array([[0.1, 0.2], [0.3, 0.1], [0.4, 0.0]]), final=np.array([0.4, 0.0]))


def test_online_softmax_colours_blocks_by_whether_they_were_read():
    fig = plot_online_softmax(**_trace(), step=1)
    bars = fig.axes[0].patches
    colours = [tuple(bar.get_facecolor()) for bar in bars]
    assert colours[0] == colours[1] != colours[2] == colours[3] != colours[4]  # read, current, unread
    assert fig.axes[0].get_title() == "scores seen: block 2 of 3"
    np.testing.assert_allclose([bar.get_height() for bar in fig.axes[2].patches[:2]], [0.3, 0.1])
    assert not plt.get_fignums()


def test_online_softmax_refuses_inconsistent_traces():
    trace = _trace()
    trace["running_max"] = [0.5, 2.0]
    with pytest.raises(ValueError, match="make 3 blocks"):
        plot_online_softmax(**trace, step=0)
    with pytest.raises(ValueError, match="step"):
        plot_online_softmax(**_trace(), step=3)


def test_memory_plot_draws_measured_solid_and_predicted_dashed_in_mib():
    fig = plot_memory([256, 512], {"full": [2**20, 4 * 2**20]}, {"model": [2**20, 2**22]})
    measured, predicted = fig.axes[0].lines
    assert measured.get_linestyle() == "-" and predicted.get_linestyle() == "--"
    np.testing.assert_allclose(measured.get_ydata(), [1.0, 4.0])
    with pytest.raises(ValueError, match="values for 2 lengths"):
        plot_memory([256, 512], {"full": [1.0]}, {})


def test_decode_cost_plots_measured_and_predicted_ratios():
    fig = plot_decode_cost([1, 2, 4], {"cached": [1.0, 1.0, 1.0], "recompute": [1.0, 3.0, 6.0]},
                           {"cached": [5, 5, 5], "recompute": [5, 10, 20]})
    predicted, measured = fig.axes[1].lines
    np.testing.assert_allclose(predicted.get_ydata(), [1, 2, 4])
    np.testing.assert_allclose(measured.get_ydata(), [1, 3, 6])
    with pytest.raises(ValueError, match="keys"):
        plot_decode_cost([1], {"cached": [1.0]}, {"cached": [1], "recompute": [1]})


def test_kv_tradeoff_labels_cache_bars_and_highlights_the_selection():
    fig = plot_kv_tradeoff(["2", "1"], [2048, 1024], {"a": [0.1, 0.5], "b": [0.0, 0.2]}, selected=0)
    cache_ax, metric_ax = fig.axes
    assert [t.get_text() for t in cache_ax.texts] == ["2 KiB", "1 KiB"]
    assert cache_ax.patches[0].get_linewidth() == 2 and cache_ax.patches[0].get_edgecolor()[:3] == (0, 0, 0)
    assert len(metric_ax.patches) == 4
    with pytest.raises(ValueError, match="one value per label"):
        plot_kv_tradeoff(["2", "1"], [1], {"a": [0.1, 0.5]})


def test_efficient_explorers_render_a_frame_per_setting():
    explorer = online_softmax_explorer(**_trace())
    assert sorted(explorer.frames) == [(1,), (2,), (3,)]
    w = [np.full((2, 3, 3), 1 / 3)] * 2
    snapshots = {n: {0: w, 10: w} for n in (2, 1)}
    evaluations = {n: {0: (1.0, 0.5), 10: (0.1, 0.9)} for n in (2, 1)}
    explorer = kv_sharing_explorer(snapshots, evaluations, {2: 100, 1: 50}, list("abc"))
    assert sorted(explorer.frames) == [(1, 0), (1, 10), (2, 0), (2, 10)]
    assert explorer.sliders["n_kv_heads"].value == 2  # starts at the most key/value heads
    assert not plt.get_fignums()


def test_efficient_figures_describe_their_numbers_in_alt_text():
    assert "block 2 of 3" in plot_online_softmax(**_trace(), step=1).describe()
    assert "1 MiB, 4 MiB" in plot_memory([256, 512], {"full": [2**20, 4 * 2**20]}, {}).describe()
    text = plot_kv_tradeoff(["2", "1"], [2048, 1024], {"accuracy": [0.9, 0.5]}).describe()
    assert "1 key/value heads: cache 1 KiB, accuracy 0.5" in text
