import itertools

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from mha import cost  # noqa: E402
from mha.cost import format_bytes, format_flops  # noqa: E402
from mha.explorers import cost_explorer  # noqa: E402
from mha.explorers.cost import _common_ranges, render_cost  # noqa: E402
from mha.plotting.cost import (  # noqa: E402
    QUADRATIC_ITEMS,
    loglog_slope,
    plot_cost_breakdown,
    plot_growth,
    plot_heads_tradeoff,
)


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0, 3.0])
def test_loglog_slope_recovers_the_exponent_of_a_power_law(power):
    x = np.array([16.0, 32.0, 64.0, 128.0, 256.0])
    assert loglog_slope(x, 7.0 * x**power) == pytest.approx(power)


def test_loglog_slope_uses_only_the_last_points():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    y = np.where(x < 4, 100.0, x**2)  # flat at first, quadratic from x = 4 on
    assert loglog_slope(x, y, last=3) == pytest.approx(2.0)
    assert loglog_slope(x, y, last=5) < 1.5


@pytest.mark.parametrize(
    ("args", "words"),
    [(([1, 2], [1, 2, 3]), "equal length"), (([1, 2, 3], [1, 2, 3], 4), "between 2 and"),
     (([1, 2, 3], [1, 0, 3]), "positive")],
)
def test_loglog_slope_errors(args, words):
    with pytest.raises(ValueError, match=words):
        loglog_slope(*args[:2], **({"last": args[2]} if len(args) > 2 else {}))


def test_cost_breakdown_bars_are_the_model_items():
    flop_count, memory_count = cost.flops(2, 300, 64, 4), cost.memory_bytes(2, 300, 64, 4)
    fig = plot_cost_breakdown(flop_count, memory_count, title="t")
    ax_flops, ax_bytes = fig.axes
    # Match each bar to the tick label at its height.
    label_at = {round(y): t.get_text().replace(" ", "_")
                for y, t in zip(ax_flops.get_yticks(), ax_flops.get_yticklabels(), strict=True)}
    bars = {label_at[round(p.get_y() + p.get_height() / 2)]: p for p in ax_flops.patches}
    for name, bar in bars.items():
        assert bar.get_width() == getattr(flop_count, name)
    colours = {name: to_hex(bar.get_facecolor()) for name, bar in bars.items()}
    orange = {c for name, c in colours.items() if name in QUADRATIC_ITEMS}
    blue = {c for name, c in colours.items() if name not in QUADRATIC_ITEMS}
    assert len(bars) == 7 and len(orange) == 1 and len(blue) == 1 and orange != blue
    widths = sorted(p.get_width() for p in ax_bytes.patches)
    expected = sorted(v for k, v in memory_count.as_dict().items() if k != "peak")
    assert widths == expected
    assert ax_flops.get_xscale() == ax_bytes.get_xscale() == "log"
    assert format_flops(flop_count.total) in ax_flops.get_title()
    assert format_bytes(memory_count.peak) in ax_bytes.get_title()
    assert not plt.get_fignums()


def test_cost_breakdown_keeps_given_axis_ranges():
    fig = plot_cost_breakdown(cost.flops(1, 8, 8, 2), cost.memory_bytes(1, 8, 8, 2),
                              flops_range=(1.0, 1e15), bytes_range=(1.0, 1e12))
    assert fig.axes[0].get_xlim() == pytest.approx((1.0, 1e15))
    assert fig.axes[1].get_xlim() == pytest.approx((1.0, 1e12))


def test_plot_scaling_panels_slopes_and_styles():
    x = np.array([64, 128, 256, 512])
    fig = plot_growth(x, {"time": {"measured": 2.0 * x**1.5, "predicted": x**2.0},
                           "bytes": {"measured": 5.0 * x}}, dashed={"predicted"}, title="s")
    ax_time, ax_bytes = fig.axes
    labels = [t.get_text() for t in ax_time.get_legend().get_texts()]
    assert labels == ["measured (slope 1.50)", "predicted (slope 2.00)"]
    measured, predicted = ax_time.lines
    assert predicted.get_linestyle() == "--" and measured.get_linestyle() == "-"
    assert measured.get_color() == ax_bytes.lines[0].get_color()  # a label keeps its colour across panels
    assert ax_time.get_ylabel() == "time" and ax_time.get_xscale() == "log"
    assert [t.get_text() for t in ax_time.get_xticklabels()] == ["64", "128", "256", "512"]


def test_plot_scaling_needs_a_panel():
    with pytest.raises(ValueError, match="at least one"):
        plot_growth([1, 2], {})


def test_heads_tradeoff_scales_each_panel_to_a_readable_unit():
    h = np.array([1, 2, 4, 8])
    score_bytes = 2**20 * h  # 1 to 8 MiB
    fig = plot_heads_tradeoff(h, parameters=[4e6] * 4, flops=[2e9, 2e9, 2.1e9, 2.2e9],
                              score_bytes=score_bytes, seconds=[0.01, 0.02, 0.03, 0.04])
    units = [ax.get_ylabel() for ax in fig.axes]
    assert units == ["millions", "GFLOP", "MiB", "ms"]
    np.testing.assert_allclose(fig.axes[2].lines[0].get_ydata(), h)  # MiB
    np.testing.assert_allclose(fig.axes[3].lines[0].get_ydata(), [10, 20, 30, 40])  # ms
    assert all(ax.get_ylim()[0] == 0 for ax in fig.axes)  # from zero: flat looks flat
    # linear axes on both sides: a quantity proportional to the heads is a straight line
    assert all(ax.get_xscale() == ax.get_yscale() == "linear" for ax in fig.axes)


def test_heads_tradeoff_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="FLOPs has shape"):
        plot_heads_tradeoff([1, 2], parameters=[1, 1], flops=[1, 1, 1], score_bytes=[1, 2])


def test_cost_explorer_renders_every_combination_on_shared_axes():
    explorer = cost_explorer(n_heads=[1, 4], seq_len=[64, 256], d_model=[64])
    assert set(explorer.frames) == {(1, 64, 64), (1, 256, 64), (4, 64, 64), (4, 256, 64)}
    assert all(png[:4] == b"\x89PNG" for png in explorer.frames.values())
    assert not plt.get_fignums()


def test_common_ranges_hold_every_bar_of_every_frame():
    heads, lengths, widths = (1, 8), (128, 4096), (256, 1024)
    flops_range, bytes_range = _common_ranges(heads, lengths, widths, 1, np.float32)
    for h, n, d in itertools.product(heads, lengths, widths):
        for value in cost.flops(1, n, d, h).as_dict().values():
            assert flops_range[0] < value < flops_range[1]
        for value in cost.memory_bytes(1, n, d, h).as_dict().values():
            assert bytes_range[0] < value < bytes_range[1]


def test_render_cost_titles_the_sizes():
    fig = render_cost(4, 256, 64, flops_range=(1, 1e12), bytes_range=(1, 1e12))
    words = fig._suptitle.get_text().replace("\n", " ")  # set in lines that fit the column
    assert words == "4 heads of d_head = 16, 256 tokens, d_model = 64 (float32)"


def test_cost_explorer_rejects_indivisible_widths():
    with pytest.raises(ValueError, match=r"\(n_heads, d_model\) \[\(3, 64\)\]"):
        cost_explorer(n_heads=[1, 3], seq_len=[64], d_model=[64])
