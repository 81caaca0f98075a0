import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402

from mha.plotting import plot_attention, plot_heads  # noqa: E402


def _images(fig):
    return [im for ax in fig.axes for im in ax.get_images()]


def test_plot_heads_draws_every_head_on_one_shared_perceptual_scale():
    w = np.random.default_rng(0).dirichlet(np.ones(5), size=(6, 4))  # (heads, seq_q, seq_k) rows sum to 1
    fig = plot_heads(w, list("abcd"), list("vwxyz"), title="Six heads")
    images = _images(fig)
    assert len(images) == 6
    for h, image in enumerate(images):
        np.testing.assert_array_equal(image.get_array(), w[h])
        assert image.get_clim() == (0.0, pytest.approx(w.max()))
        assert image.get_cmap().name == "viridis"
    titles = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert titles == [f"head {h}" for h in range(6)]
    assert fig._suptitle.get_text() == "Six heads"
    assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0)  # readable on a dark page
    assert not plt.get_fignums()  # built without pyplot: nothing shown twice, nothing leaked


def test_plot_heads_labels_the_outer_panels_with_tokens():
    w = np.full((4, 3, 3), 1 / 3)
    fig = plot_heads(w, ["the", "cat", "sat"], ncols=2)
    bottom_left = fig.axes[2]
    assert [t.get_text() for t in bottom_left.get_xticklabels()] == ["the", "cat", "sat"]
    assert [t.get_text() for t in bottom_left.get_yticklabels()] == ["the", "cat", "sat"]
    assert len(fig.axes[1].get_xticks()) == 0 and len(fig.axes[1].get_yticks()) == 0
    axis_titles = {t.get_text() for t in fig.texts}
    assert {"key (attended to)", "query (attending)"} <= axis_titles


def test_long_sequences_show_positions_not_words():
    w = np.full((2, 32, 32), 1 / 32)
    fig = plot_heads(w, [f"w{i}" for i in range(32)])
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "w0" not in labels and len(fig.axes[0].get_yticks()) <= 8


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
