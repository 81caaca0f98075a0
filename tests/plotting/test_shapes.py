"""mha.plotting.shapes: the shape table, the memory strips and the head-split figure show the real data."""

import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from mha.lab.shapes import ShapeStep, head_assignment, trace_shapes  # noqa: E402
from mha.plotting.shapes import (  # noqa: E402
    head_colors,
    memory_layout_html,
    plot_head_assignment,
    plot_influence,
    plot_masks,
    shape_table_html,
)


def cells(table_html):
    rows = re.findall(r"<tr>(.*?)</tr>", table_html)
    return [re.findall(r"<t[hd]>(.*?)</t[hd]>", row) for row in rows]


def strips(page):
    """The labelled strips of a memory layout: list of [(text, colour), ...]."""
    found = re.findall(r'<div class="strip">(.*?)</div>', page)
    return [re.findall(r'<span style="background:(#[0-9a-f]{6});color:#[0-9a-f]+">(\w+)</span>', s)
            for s in found]


@pytest.mark.parametrize("show_code", [True, False])
def test_table_has_one_row_per_step_with_its_shape_and_strides(show_code):
    steps = trace_shapes(2, 3, 8, 2)
    table = cells(shape_table_html(steps, title="sizes", show_code=show_code))
    assert table[0][0] == "step" and ("computed as" in table[0]) == show_code
    assert len(table) == 1 + len(steps)
    for row, step in zip(table[1:], steps, strict=True):
        shape, strides, memory = row[-3:]
        assert step.name in row[0]
        assert shape.endswith(f'<span class="nowrap">{step.shape}</span>') and step.dims in shape
        assert strides == f'<span class="nowrap">{step.strides}</span>'
        assert ("view of" in memory) == (step.view_of is not None)
        assert ("strided" in memory) == (not step.contiguous)


def test_table_escapes_text():
    step = ShapeStep(name="a<b", code="x & y", dims="(seq,)", shape=(2,), strides=(1,), contiguous=True,
                     view_of=None, array=np.zeros(2))
    page = shape_table_html([step])
    assert "a&lt;b" in page and "x &amp; y" in page and "a<b" not in page


@pytest.mark.parametrize("seq, d_model, n_heads", [(3, 8, 2), (2, 16, 4), (4, 4, 1)])
def test_memory_strips_follow_the_arrays_memory_order(seq, d_model, n_heads):
    page = memory_layout_html(trace_shapes(1, seq, d_model, n_heads))
    qkv, context, concat = strips(page)
    colors = head_colors(n_heads)
    # qkv: token by token; within a token q's heads, then k's, then v's
    expected_qkv = [(colors[h], f"{part}{t}") for t in range(seq) for part in "qkv" for h in range(n_heads)]
    assert qkv == expected_qkv
    # context is contiguous (batch, n_heads, seq, d_head): head by head
    assert context == [(colors[h], f"c{t}") for h in range(n_heads) for t in range(seq)]
    # concat is (batch, seq, d_model): token by token, heads side by side
    assert concat == [(colors[h], f"c{t}") for t in range(seq) for h in range(n_heads)]


def test_memory_layout_needs_the_traced_steps():
    steps = [s for s in trace_shapes(1, 2, 4, 2) if s.name != "context"]
    with pytest.raises(ValueError, match="context"):
        memory_layout_html(steps)


def test_head_colors_are_distinct_hex_colours():
    colors = head_colors(8)
    assert len(set(colors)) == 8
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colors)


def test_assignment_figure_shows_both_splits():
    fig = plot_head_assignment(4, 8, 2)
    ax_right, ax_wrong = fig.axes[:2]
    right, right_slot = head_assignment(4, 8, 2)
    wrong, _ = head_assignment(4, 8, 2, transpose=False)
    np.testing.assert_array_equal(ax_right.get_images()[0].get_array(), right)
    np.testing.assert_array_equal(ax_wrong.get_images()[0].get_array(), wrong)
    labels = [int(t.get_text()) for t in ax_right.texts]
    assert labels == right_slot.ravel().tolist()  # every cell numbered with its token slot
    assert ax_right.get_xlabel() and ax_right.get_ylabel() and ax_wrong.get_title()


def test_large_assignment_figures_skip_the_numbers():
    fig = plot_head_assignment(8, 64, 8)
    assert not fig.axes[0].texts


def test_influence_panels_show_the_given_matrices():
    a, b = np.tril(np.ones((3, 3))), np.eye(3)
    fig = plot_influence([("A", a), ("B", b)], ["x", "y", "z"], title="T")
    for ax, matrix, name in zip(fig.axes[:2], (a, b), "AB", strict=True):
        np.testing.assert_array_equal(ax.get_images()[0].get_array(), matrix)
        assert ax.get_title() == name and ax.get_xlabel() == "input token changed"
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["x", "y", "z"]
    assert fig.get_suptitle() == "T"


def test_masks_are_drawn_as_allowed_or_masked():
    causal = np.tri(4, dtype=bool)
    fig = plot_masks([("causal", causal), ("all", np.ones((4, 4), dtype=bool))])
    np.testing.assert_array_equal(fig.axes[0].get_images()[0].get_array(), causal.astype(float))
    assert [t.get_text() for t in fig.axes[-1].get_yticklabels()] == ["masked", "may attend"]


@pytest.mark.parametrize("panels, tokens, match", [
    ([], None, "non-empty"),
    ([("a", np.zeros(3))], None, "2-D"),
    ([("a", np.zeros((2, 2))), ("b", np.zeros((3, 3)))], None, "one shape"),
    ([("a", np.zeros((2, 2)))], ["only one"], "labels"),
])
def test_matrix_panels_reject_bad_input(panels, tokens, match):
    with pytest.raises(ValueError, match=match):
        plot_influence(panels, tokens)


def _contrast(foreground: str, background: str) -> float:
    """WCAG contrast ratio of two #rrggbb (or #rgb) colours, computed here from the definition."""
    def luminance(color):
        digits = color[1:] if len(color) == 7 else "".join(2 * c for c in color[1:])
        channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("n_heads", [1, 2, 3, 4, 6, 8, 12, 16])
def test_head_labels_in_the_memory_strips_are_legible_on_their_colour(n_heads):
    spans = re.findall(r'background:(#[0-9a-f]{6});color:(#[0-9a-f]{3,6})">([^<]*)<',
                       memory_layout_html(trace_shapes(batch=1, seq=2, d_model=4 * n_heads, n_heads=n_heads)))
    assert spans, "no coloured strip cells found"
    assert min(_contrast(text, back) for back, text, _ in spans) >= 4.5  # WCAG AA for normal text
