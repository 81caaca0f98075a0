"""mha.plotting.multi_head: the single-head points, the two-head point and the a + b = 1 bound."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
from matplotlib.collections import PathCollection  # noqa: E402

from mha.plotting.multi_head import plot_pattern_tradeoff  # noqa: E402


def test_points_are_drawn_where_the_masses_say():
    mix = np.linspace(0, 1, 6)
    a, b = mix**2, 1 - mix
    fig = plot_pattern_tradeoff(mix, a, b, label_a="left", label_b="right", heads_point=(0.9, 0.95))
    ax = fig.axes[0]
    one_head, two_heads = ax.collections[-2], ax.collections[-1]
    np.testing.assert_allclose(one_head.get_offsets(), np.column_stack([a, b]))
    np.testing.assert_allclose(one_head.get_array(), mix)  # coloured by the mix
    np.testing.assert_allclose(two_heads.get_offsets(), [[0.9, 0.95]])
    assert ax.get_xlabel() == "mean weight on left" and ax.get_ylabel() == "mean weight on right"


def test_bound_line_is_a_plus_b_equals_one():
    fig = plot_pattern_tradeoff([0.5], [0.5], [0.5], label_a="A", label_b="B")
    dashed = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 1
    x, y = dashed[0].get_data()
    np.testing.assert_allclose(np.asarray(x) + np.asarray(y), 1.0)


@pytest.mark.parametrize("heads_point, n_scatters", [(None, 1), ((1.0, 1.0), 2)])
def test_the_two_head_star_appears_only_when_given(heads_point, n_scatters):
    fig = plot_pattern_tradeoff([0.0, 1.0], [0.0, 1.0], [1.0, 0.0], label_a="A", label_b="B",
                                heads_point=heads_point)
    scatters = [c for c in fig.axes[0].collections if isinstance(c, PathCollection)]
    assert len(scatters) == n_scatters


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="one length"):
        plot_pattern_tradeoff([0.0, 1.0], [0.5], [0.5, 0.5], label_a="A", label_b="B")
