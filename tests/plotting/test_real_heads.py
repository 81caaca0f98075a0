"""mha.plotting.real_heads: the head view, the model view, head kinds and grouped bars."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402

from mha.plotting.real_heads import (  # noqa: E402
    MIN_LINE_WEIGHT,
    plot_grouped_bars,
    plot_head_kinds,
    plot_head_view,
    plot_model_view,
)

TOKENS = ["the", "cat", "sat", "down"]
# Rows are queries. 0.02 sits exactly on the drawing threshold, 0.0199 and 0.01 just under it.
WEIGHTS = np.array([
    [0.88, 0.10, 0.02, 0.00],
    [0.50, 0.50, 0.00, 0.00],
    [0.0199, 0.0801, 0.00, 0.90],
    [0.25, 0.25, 0.25, 0.25],
])
DRAWN = {(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 1), (2, 3), (3, 0), (3, 1), (3, 2), (3, 3)}


def drawn_pairs(ax, seq):
    """(query, key) of every line: queries at x=0, keys at x=1, the first token at the top (y = seq-1)."""
    pairs = []
    for line in ax.lines:
        np.testing.assert_array_equal(line.get_xdata(), [0.0, 1.0])
        y_query, y_key = line.get_ydata()
        pairs.append((int(round(seq - 1 - y_query)), int(round(seq - 1 - y_key))))
    return pairs


# --- head view ----------------------------------------------------------------------------------------------


def test_min_line_weight_is_small():
    assert 0 < MIN_LINE_WEIGHT <= 0.05


def test_head_view_draws_one_line_per_weight_at_or_above_the_threshold():
    fig = plot_head_view(WEIGHTS, TOKENS)
    ax = fig.axes[0]
    pairs = drawn_pairs(ax, 4)
    assert len(pairs) == len(DRAWN) == 11
    assert set(pairs) == DRAWN
    assert not plt.get_fignums()  # built without pyplot


def test_head_view_lines_grow_with_the_weight():
    ax = plot_head_view(WEIGHTS, TOKENS).axes[0]
    by_weight = sorted(zip(ax.lines, drawn_pairs(ax, 4), strict=True), key=lambda item: WEIGHTS[item[1]])
    widths = [line.get_linewidth() for line, _ in by_weight]
    alphas = [line.get_alpha() for line, _ in by_weight]
    assert widths == sorted(widths) and alphas == sorted(alphas)
    thinnest, thickest = by_weight[0][0], by_weight[-1][0]
    assert WEIGHTS[by_weight[-1][1]] == 0.9
    assert thickest.get_linewidth() > 3 * thinnest.get_linewidth()
    assert thickest.get_alpha() > thinnest.get_alpha()


def test_head_view_shows_the_tokens_on_both_sides_top_down():
    ax = plot_head_view(WEIGHTS, TOKENS).axes[0]
    assert len(ax.texts) == 2 * len(TOKENS)
    left = [t for t in ax.texts if t.get_position()[0] < 0]
    right = [t for t in ax.texts if t.get_position()[0] > 1]
    assert len(left) == len(right) == len(TOKENS)
    for side in (left, right):
        top_down = sorted(side, key=lambda t: -t.get_position()[1])
        assert [t.get_text() for t in top_down] == TOKENS
    assert all(t.get_fontweight() == "normal" for t in ax.texts)


def test_head_view_titles_and_axis_labels():
    ax = plot_head_view(WEIGHTS, TOKENS, title="layer 2, head 5").axes[0]
    assert ax.get_title() == "layer 2, head 5"
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["query (attending)", "key (attended to)"]


def test_head_view_alt_text_names_the_strongest_link():
    fig = plot_head_view(WEIGHTS, TOKENS, title="One head")
    assert fig.describe() == fig.alt_text
    assert fig.alt_text.startswith("One head")
    assert "'sat' to 'down' (0.90)" in fig.alt_text


@pytest.mark.parametrize("query", [0, 2, 3, np.int64(1)])
def test_query_draws_only_its_own_lines(query):
    fig = plot_head_view(WEIGHTS, TOKENS, query=query)
    ax = fig.axes[0]
    pairs = drawn_pairs(ax, 4)
    assert len(ax.lines) == int((WEIGHTS[query] >= MIN_LINE_WEIGHT).sum())
    assert set(pairs) == {pair for pair in DRAWN if pair[0] == query}
    left = sorted((t for t in ax.texts if t.get_position()[0] < 0), key=lambda t: -t.get_position()[1])
    weights = [t.get_fontweight() for t in left]
    assert weights[query] == "bold"
    assert weights.count("bold") == 1


def test_alt_text_of_one_query_names_its_own_strongest_link():
    fig = plot_head_view(WEIGHTS, TOKENS, query=0)
    assert "'the' to 'the' (0.88)" in fig.alt_text
    assert "'sat' to 'down'" not in fig.alt_text  # the overall strongest is not on query 0's row
    assert "selected" in fig.alt_text


def test_head_view_of_one_token_to_itself():
    fig = plot_head_view(np.eye(3), ["a", "b", "c"])
    assert drawn_pairs(fig.axes[0], 3) == [(0, 0), (1, 1), (2, 2)]


@pytest.mark.parametrize(("weights", "tokens", "kwargs", "message"), [
    (np.full((3, 4), 0.25), ["a", "b", "c"], {}, r"square \(seq, seq\).*\(3, 4\)"),
    (np.full((2, 3, 3), 1 / 3), ["a", "b", "c"], {}, r"weights must have shape \(seq, seq\)"),
    (np.full(3, 1 / 3), ["a", "b", "c"], {}, r"weights must have shape \(seq, seq\)"),
    (WEIGHTS, ["the", "cat", "sat"], {}, "has 3 tokens but the weights have 4"),
    (WEIGHTS, [*TOKENS, "again"], {}, "has 5 tokens but the weights have 4"),
    (WEIGHTS, TOKENS, {"query": 4}, r"query must be a token position in \[0, 4\), got 4"),
    (WEIGHTS, TOKENS, {"query": -1}, r"query must be a token position in \[0, 4\), got -1"),
    (WEIGHTS, TOKENS, {"query": 1.0}, r"query must be a token position in \[0, 4\), got 1.0"),
    (WEIGHTS, TOKENS, {"query": "cat"}, r"query must be a token position in \[0, 4\), got 'cat'"),
])
def test_head_view_rejects_bad_input(weights, tokens, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_head_view(weights, tokens, **kwargs)


# --- model view ---------------------------------------------------------------------------------------------


def model_attentions(n_layers=2, n_heads=3, seq=4, sharp=(1, 2)):
    attentions = np.full((n_layers, n_heads, seq, seq), 1 / seq)
    attentions[sharp] = np.eye(seq)
    return attentions


def image_axes(fig):
    return [ax for ax in fig.axes if ax.images]


def test_model_view_has_one_map_per_layer_and_head():
    attentions = model_attentions()
    fig = plot_model_view(attentions, TOKENS)
    axes = image_axes(fig)
    assert len(axes) == 2 * 3
    for k, ax in enumerate(axes):  # row-major: layer by layer
        layer, head = divmod(k, 3)
        image = ax.images[0]
        np.testing.assert_array_equal(image.get_array(), attentions[layer, head])
        assert image.get_clim() == (0.0, 1.0)  # one fixed scale for every map
    assert len(fig.axes) == 2 * 3 + 1  # and a colour bar
    assert not plt.get_fignums()


def test_model_view_titles_heads_on_top_and_layers_on_the_left():
    axes = image_axes(plot_model_view(model_attentions(n_layers=3, n_heads=2, sharp=(2, 1))))
    grid = [axes[0:2], axes[2:4], axes[4:6]]
    assert [ax.get_title() for ax in grid[0]] == ["head 0", "head 1"]
    assert all(ax.get_title() == "" for row in grid[1:] for ax in row)
    assert [row[0].get_ylabel() for row in grid] == ["layer 0", "layer 1", "layer 2"]
    assert all(row[1].get_ylabel() == "" for row in grid)


def test_model_view_title_and_alt_text_name_the_sharpest_head():
    fig = plot_model_view(model_attentions(sharp=(1, 2)), TOKENS, title="A sentence")
    assert fig._suptitle.get_text() == "A sentence"
    assert fig.describe() == fig.alt_text
    assert "2 x 3 attention maps" in fig.alt_text
    assert "the cat sat down" in fig.alt_text
    assert "layer 1, head 2" in fig.alt_text
    assert "1.00" in fig.alt_text
    other = plot_model_view(model_attentions(sharp=(0, 1)))
    assert "layer 0, head 1" in other.alt_text
    assert "over 4 tokens" in other.alt_text


def test_model_view_of_a_single_head():
    fig = plot_model_view(np.eye(3)[None, None])
    axes = image_axes(fig)
    assert len(axes) == 1
    assert axes[0].get_title() == "head 0" and axes[0].get_ylabel() == "layer 0"


@pytest.mark.parametrize(("attentions", "tokens", "message"), [
    (np.full((3, 4, 4), 0.25), None, r"weights must have shape \(n_layers, n_heads, seq, seq\)"),
    (np.full((1, 2, 3, 4, 4), 0.25), None, r"weights must have shape \(n_layers, n_heads, seq, seq\)"),
    (np.full((2, 3, 4, 4), 0.25), ["the", "cat"], "has 2 tokens but the weights have 4"),
])
def test_model_view_rejects_bad_input(attentions, tokens, message):
    with pytest.raises(ValueError, match=message):
        plot_model_view(attentions, tokens)


# --- head kinds ---------------------------------------------------------------------------------------------


BREADTH = np.array([[0.1, 0.9, 0.2], [0.95, 0.5, 0.15]])
DISTANCE = np.array([[1.0, 4.0, 1.0], [5.0, 2.5, 0.0]])
KINDS = [["previous token", "broad", "previous token"], ["broad", "mixed", "same token"]]


def test_head_kinds_legend_counts_each_kind_in_order_of_appearance():
    ax = plot_head_kinds(BREADTH, DISTANCE, KINDS).axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["previous token (2)", "broad (2)", "mixed (1)", "same token (1)"]


def test_head_kinds_places_one_labelled_dot_per_head():
    ax = plot_head_kinds(BREADTH, DISTANCE, KINDS).axes[0]
    points = np.concatenate([c.get_offsets() for c in ax.collections])
    assert len(points) == BREADTH.size
    expected = sorted(zip(BREADTH.ravel(), DISTANCE.ravel(), strict=True))
    np.testing.assert_allclose(sorted(map(tuple, points)), expected)
    broad = ax.collections[1].get_offsets()
    np.testing.assert_allclose(sorted(map(tuple, broad)), [(0.9, 4.0), (0.95, 5.0)])
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == ["0.0", "0.1", "0.2", "1.0", "1.1", "1.2"]
    colours = {tuple(c.get_facecolor()[0]) for c in ax.collections}
    assert len(colours) == 4  # one colour per kind
    assert "breadth" in ax.get_xlabel() and "distance" in ax.get_ylabel()


def test_head_kinds_alt_text_counts_the_kinds():
    fig = plot_head_kinds(BREADTH, DISTANCE, KINDS, title="Six heads")
    assert fig.describe().startswith("Six heads")
    assert "6 heads" in fig.alt_text
    for part in ("2 previous token", "2 broad", "1 mixed", "1 same token"):
        assert part in fig.alt_text


@pytest.mark.parametrize(("breadth", "distance", "kinds"), [
    (BREADTH.ravel(), DISTANCE.ravel(), np.ravel(KINDS)),
    (BREADTH, DISTANCE[:, :2], KINDS),
    (BREADTH, DISTANCE, [row[:2] for row in KINDS]),
    (BREADTH, DISTANCE.T, KINDS),
])
def test_head_kinds_rejects_mismatched_shapes(breadth, distance, kinds):
    with pytest.raises(ValueError, match=r"must share one \(n_layers, n_heads\) shape"):
        plot_head_kinds(breadth, distance, kinds)


# --- grouped bars -------------------------------------------------------------------------------------------


VALUES = np.array([[0.7, 0.3], [0.2, 0.25], [0.05, 0.6]])
GROUPS = ["L3 H1", "L5 H11", "L0 H0"]
SERIES = ["tired", "wide"]


def test_grouped_bars_draw_one_bar_per_value_side_by_side():
    ax = plot_grouped_bars(VALUES, GROUPS, SERIES, ylabel="weight").axes[0]
    assert len(ax.patches) == VALUES.size
    centres = np.array([p.get_x() + p.get_width() / 2 for p in ax.patches])
    heights = np.array([p.get_height() for p in ax.patches])
    for g in range(len(GROUPS)):
        in_group = np.abs(centres - g) < 0.5
        assert in_group.sum() == len(SERIES)
        left_to_right = heights[in_group][np.argsort(centres[in_group])]
        np.testing.assert_allclose(left_to_right, VALUES[g])
    assert [t.get_text() for t in ax.get_xticklabels()] == GROUPS
    assert [t.get_text() for t in ax.get_legend().get_texts()] == SERIES
    assert ax.get_ylabel() == "weight"
    colours = {p.get_facecolor() for p in ax.patches}
    assert len(colours) == len(SERIES)


def test_grouped_bars_labels_and_alt_text():
    fig = plot_grouped_bars(VALUES, GROUPS, SERIES, ylabel="weight", title="Two sentences",
                            xlabel="head")
    ax = fig.axes[0]
    assert ax.get_title() == "Two sentences" and ax.get_xlabel() == "head"
    assert fig.describe().startswith("Two sentences: Bar chart of weight.")
    assert "L3 H1: tired 0.70, wide 0.30" in fig.alt_text
    assert "L0 H0: tired 0.05, wide 0.60" in fig.alt_text


def test_one_series_needs_no_legend():
    fig = plot_grouped_bars([[1.0], [2.0]], ["a", "b"], ["only"], ylabel="count")
    ax = fig.axes[0]
    assert ax.get_legend() is None
    assert [p.get_height() for p in ax.patches] == [1.0, 2.0]
    assert ax.get_title() == ""
    assert fig.alt_text.startswith("Bar chart of count.")


@pytest.mark.parametrize(("values", "groups", "series", "message"), [
    (VALUES[:2], GROUPS, SERIES, r"\(n_groups, n_series\) = \(3, 2\), got \(2, 2\)"),
    (VALUES, GROUPS, ["tired"], r"\(n_groups, n_series\) = \(3, 1\), got \(3, 2\)"),
    (VALUES.ravel(), GROUPS, SERIES, r"= \(3, 2\), got \(6,\)"),
    (VALUES[None], GROUPS, SERIES, r"got \(1, 3, 2\)"),
])
def test_grouped_bars_rejects_mismatched_shapes(values, groups, series, message):
    with pytest.raises(ValueError, match=message):
        plot_grouped_bars(values, groups, series, ylabel="weight")
