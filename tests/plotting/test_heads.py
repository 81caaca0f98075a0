import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402

from mha.plotting import plot_attention, plot_heads  # noqa: E402


def _images(fig):
    return [im for ax in fig.axes for im in ax.get_images()]


def _texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def _pixels(fig, dpi=50):
    """The rendered figure as an (height, width, 3) uint8 array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3]


def test_plot_heads_draws_every_head_on_one_shared_perceptual_scale():
    w = np.random.default_rng(0).dirichlet(np.ones(5), size=(6, 4))  # (heads, seq_q, seq_k) rows sum to 1
    fig = plot_heads(w, list("abcd"), list("vwxyz"), title="Six heads")
    assert len(fig.head_panels) == 6
    for h, panel in enumerate(fig.head_panels):
        np.testing.assert_array_equal(panel.image.get_array(), w[h])
        assert panel.image.get_clim() == (0.0, pytest.approx(w.max()))
        assert panel.image.get_cmap().name == "viridis"
    assert [panel.title.get_text() for panel in fig.head_panels] == [f"head {h}" for h in range(6)]
    assert fig._suptitle.get_text() == "Six heads"
    assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0)  # readable on a dark page
    assert not plt.get_fignums()  # built without pyplot: nothing shown twice, nothing leaked


def test_plot_heads_panels_show_their_weights_where_the_panel_says():
    w = np.zeros((2, 2, 2))
    w[0, 0, 1] = 1.0  # head 0: query 0 reads key 1 (top right cell)
    w[1, 1, 0] = 1.0  # head 1: query 1 reads key 0 (bottom left cell)
    fig = plot_heads(w, ["a", "b"])
    dpi = 50
    pixels = _pixels(fig, dpi).astype(int)
    height = pixels.shape[0]
    bright = np.array(matplotlib.colormaps["viridis"](1.0)[:3]) * 255
    dark = np.array(matplotlib.colormaps["viridis"](0.0)[:3]) * 255
    for panel, hot in zip(fig.head_panels, [(0, 1), (1, 0)], strict=True):
        for query in range(2):
            for key in range(2):
                x, y = panel.to_canvas(key, query)
                column, row = int(x * dpi), int(height - y * dpi)  # inches from bottom -> pixel rows
                expected = bright if (query, key) == hot else dark
                assert np.abs(pixels[row, column] - expected).max() <= 2, (panel.title.get_text(), query, key)


def test_plot_heads_labels_the_outer_panels_with_tokens():
    w = np.full((4, 3, 3), 1 / 3)
    fig = plot_heads(w, ["the", "cat", "sat"], ncols=2)
    texts = _texts(fig)
    # left column (heads 0 and 2) carries the query words, bottom row (heads 2 and 3) the key words
    assert texts.count("the") == 4 and texts.count("cat") == 4 and texts.count("sat") == 4
    assert {"key (attended to)", "query (attending)", "weight"} <= set(texts)
    bottom_left = fig.head_panels[2]
    left, _, bottom, _ = bottom_left.extent
    key_labels = [t for t in fig.axes[0].texts if t.get_text() == "the" and t.get_position()[1] < bottom]
    query_labels = [t for t in fig.axes[0].texts if t.get_text() == "the" and t.get_position()[0] < left]
    assert len(key_labels) == 2 and len(query_labels) == 2


def test_long_sequences_show_positions_not_words():
    w = np.full((2, 32, 32), 1 / 32)
    fig = plot_heads(w, [f"w{i}" for i in range(32)])
    texts = _texts(fig)
    assert "w0" not in texts
    assert texts.count("8") == 3  # once on the left, once under each of the two panels


def test_plot_attention_has_colorbar_and_labels():
    fig = plot_attention(np.eye(3), ["a", "b", "c"], title="Identity")
    ax = fig.axes[0]
    assert ax.get_title() == "Identity"
    assert ax.get_xlabel() == "key (attended to)" and ax.get_ylabel() == "query (attending)"
    assert len(fig.axes) == 2  # the heatmap and its colour bar
    image = ax.images[0]
    np.testing.assert_array_equal(image.get_array(), np.eye(3))
    rgb = image.get_cmap()(np.linspace(0.0, 1.0, 64))[:, :3]
    luminance = rgb @ np.array([0.2126, 0.7152, 0.0722])
    assert np.all(np.diff(luminance) > 0)  # perceptually ordered: more weight always reads brighter


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: plot_heads(np.ones((3, 3))), r"\(n_heads, seq_q, seq_k\)"),
        (lambda: plot_heads(np.ones((2, 3, 3)), ["a", "b"]), "tokens_q has 2 tokens"),
        (lambda: plot_heads(np.ones((2, 3, 3)), head_titles=["x"]), "head_titles has 1"),
        (lambda: plot_attention(np.ones((2, 3, 3))), r"\(seq_q, seq_k\)"),
    ],
)
def test_plot_errors(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_plot_heads_takes_more_rows_rather_than_narrower_panels():
    """Asked for five heads in a row (frameworks: four heads and their mean), the figure keeps the
    column's width and its 10-pt labels: titles used to print over each other once narrowed."""
    from mha.plotting.style import MAX_WIDTH_IN, png_facts

    w = np.random.default_rng(1).dirichlet(np.ones(5), size=(5, 5))
    titles = [f"head {h}" for h in range(4)] + ["PyTorch's default: the mean"]
    fig = plot_heads(w, ["the", "cat", "sat", "on", "mat"], head_titles=titles, ncols=5,
                     title="Per-head weights and their average (untrained layer)")
    assert fig.get_size_inches()[0] <= MAX_WIDTH_IN
    rows = {round(panel.extent[2], 3) for panel in fig.head_panels}
    assert len(rows) >= 2
    text = png_facts(fig.to_png(dpi=100))["text"]
    assert (text["TextOverlaps"], text["TextOutside"]) == ("0", "0"), text.get("TextProblems")


@pytest.mark.parametrize("ncols", [0, -1, 2.5, True, "3"])
def test_plot_heads_refuses_a_number_of_columns_that_is_not_a_positive_whole_number(ncols):
    with pytest.raises(ValueError, match="ncols must be a positive whole number"):
        plot_heads(np.full((2, 3, 3), 1 / 3), ncols=ncols)
