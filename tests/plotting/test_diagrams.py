"""mha.plotting.diagrams: the pictures carry the shapes and numbers they are given, and refuse bad sizes."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.image import AxesImage  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import mha  # noqa: E402
from mha.plotting import plot_head_split, plot_mha_diagram, plot_soft_lookup  # noqa: E402
from mha.plotting.shapes import head_colors  # noqa: E402


def texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


@pytest.mark.parametrize("seq, d_model, n_heads", [(3, 512, 8), (5, 64, 2), (4, 96, 1)])
def test_diagram_labels_every_box_with_its_shape(seq, d_model, n_heads):
    d_head = d_model // n_heads
    found = texts(plot_mha_diagram(seq, d_model, n_heads))
    assert f"x\n({seq}, {d_model})\n{seq} tokens" in found
    assert f"concat\n({seq}, {d_model})\nfeatures by head" in found
    assert f"W_O\n({d_model}, {d_model})" in found
    assert f"output\n({seq}, {d_model})" in found
    shown = list(range(n_heads)) if n_heads <= 4 else [0, 1, n_heads - 1]  # side by side: at most 4
    heads = [t for t in found if t.startswith("head_")]
    assert heads == [f"head_{h} = w v\n({seq}, {d_head})" for h in shown]
    assert found.count(f"each W: ({d_model}, {d_head})") == 1  # said once, over the projections
    assert sum(f"({seq}, {d_head}) each" in t for t in found) == len(shown)  # q, k, v of every head
    assert sum(f"weights ({seq}, {seq})" in t for t in found) == len(shown)


def test_concat_strips_give_each_head_its_own_feature_columns():
    fig = plot_mha_diagram(3, 512, 8)
    found = texts(fig)
    assert [f"{64 * h}–{64 * h + 63}" for h in range(8)] == [t for t in found if "–" in t]
    strips = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(strips) == 8
    assert [matplotlib.colors.to_hex(p.get_facecolor()) for p in strips] == head_colors(8)


def test_many_heads_are_elided_but_the_concat_keeps_every_strip():
    fig = plot_mha_diagram(3, 64, 16)
    found = texts(fig)
    assert [t.split(" =")[0] for t in found if t.startswith("head_")] == ["head_0", "head_1", "head_15"]
    assert any("13 more heads" in t for t in found)
    assert sum(isinstance(p, Rectangle) for p in fig.axes[0].patches) == 16


def test_diagram_draws_the_given_weights_inside_each_head():
    layer = mha.MultiHeadAttention(16, 4, rng=0)
    x = np.random.default_rng(1).standard_normal((3, 16))
    _, weights = layer(x, return_weights=True)  # (n_heads, seq, seq)
    images = [a for a in plot_mha_diagram(3, 16, 4, weights=weights).axes[0].get_children()
              if isinstance(a, AxesImage)]
    assert len(images) == 4
    for image, head in zip(images, weights, strict=True):
        np.testing.assert_array_equal(image.get_array(), head)


@pytest.mark.parametrize("kwargs, message", [
    ({"seq": 3, "d_model": 510, "n_heads": 8}, "not divisible"),
    ({"seq": 0, "d_model": 8, "n_heads": 2}, "seq must be a positive integer"),
    ({"seq": 3, "d_model": 8, "n_heads": 2, "weights": np.ones((2, 3, 4))}, r"\(n_heads, seq, seq\)"),
])
def test_diagram_rejects_inconsistent_sizes(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot_mha_diagram(**kwargs)


def test_soft_lookup_shows_the_weighted_sum_and_the_hard_answer():
    values = np.arange(12.0).reshape(3, 4) - 6  # (seq_k, d_v)
    weights = np.array([0.2, 0.5, 0.3])
    fig = plot_soft_lookup(["a", "b", "c"], weights, values, query="b")
    answer = fig.axes[2].images[0].get_array()
    np.testing.assert_allclose(answer[0], weights @ values)
    np.testing.assert_allclose(answer[1], values[1])
    bars = fig.axes[0].patches
    np.testing.assert_allclose([b.get_width() for b in bars], weights)
    assert [t.get_text() for t in fig.axes[2].get_yticklabels()] == ["soft: Σ w·v", "hard: v(b)"]


@pytest.mark.parametrize("weights, values", [
    (np.array([0.5, 0.6]), np.ones((2, 3))),
    (np.array([0.5, 0.5]), np.ones((3, 3))),
])
def test_soft_lookup_rejects_weights_that_are_not_one_distribution(weights, values):
    with pytest.raises(ValueError):
        plot_soft_lookup(["a", "b"], weights, values, query="a")


def test_head_split_puts_each_heads_features_of_every_token_together():
    seq, d_model, n_heads = 3, 12, 3
    fig = plot_head_split(seq, d_model, n_heads)
    d_head = d_model // n_heads
    split = fig.axes[2]
    colors = head_colors(n_heads)
    cells = sorted(((-p.get_y(), p.get_x()), matplotlib.colors.to_hex(p.get_facecolor()))
                   for p in split.patches)
    labels = [t.get_text() for t in split.texts if t.get_text().startswith("t")]
    assert len(cells) == len(labels) == seq * d_model
    # reading the transposed panel row by row gives q.transpose(1, 0, 2): head, token, feature
    expected = [f"t{t}\nf{h * d_head + f}" for h in range(n_heads) for t in range(seq) for f in range(d_head)]
    positions = [(-t.get_position()[1], t.get_position()[0]) for t in split.texts
                 if t.get_text().startswith("t")]
    by_position = sorted(zip(positions, labels, strict=True))
    assert [label for _, label in by_position] == expected
    assert [c for _, c in cells] == [colors[h] for h in range(n_heads) for _ in range(seq * d_head)]


def test_head_split_refuses_pictures_too_big_to_read():
    with pytest.raises(ValueError, match="at most 6 tokens"):
        plot_head_split(8, 16, 2)


def test_diagram_text_stays_readable_in_the_book_column():
    """The book's column is about 690 pixels wide: a label of size s points in a figure w inches wide
    shows about 690 / 72 * s / w pixels tall there; below 9 pixels it is not read but deciphered."""
    fig = plot_mha_diagram(3, 512, 8)
    width = fig.get_figwidth()
    sizes = [t.get_fontsize() for t in fig.axes[0].texts if t.get_text()]
    assert min(sizes) * 690 / 72 / width >= 8.5  # the concat strip numbers, the smallest
    assert sorted(sizes)[len(sizes) // 2] * 690 / 72 / width >= 10  # most labels
