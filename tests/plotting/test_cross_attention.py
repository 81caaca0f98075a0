import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib import pyplot as plt  # noqa: E402

from mha.explorers import alignment_explorer  # noqa: E402
from mha.explorers.cross_attention import render_alignment  # noqa: E402
from mha.plotting import plot_alignment, plot_links  # noqa: E402


def test_plot_alignment_marks_the_reference_on_every_head():
    w = np.random.default_rng(0).dirichlet(np.ones(4), size=(3, 5))  # (n_heads, seq_q, seq_k)
    reference = [0, 2, 1, 3, 3]
    fig = plot_alignment(w, list("abcde"), list("wxyz"), reference=reference, head_titles=["m", "p", "mp"])
    for h, panel in enumerate(fig.head_panels):
        np.testing.assert_array_equal(panel.image.get_array(), w[h])
        (marker,) = panel.lines
        left, right, bottom, top = panel.extent
        # one square per query, centred on the reference key's cell of this panel
        key_centres = left + (np.array(reference) + 0.5) * (right - left) / 4
        np.testing.assert_allclose(marker.get_xdata(), key_centres)
        np.testing.assert_allclose(marker.get_ydata(), top - (np.arange(5) + 0.5) * (top - bottom) / 5)
    assert [panel.title.get_text() for panel in fig.head_panels] == ["m", "p", "mp"]
    assert not plt.get_fignums()


def test_plot_alignment_without_reference_draws_no_markers():
    fig = plot_alignment(np.full((2, 2, 3), 1 / 3), ["a", "b"], ["x", "y", "z"])
    assert all(not panel.lines for panel in fig.head_panels) and not fig.axes[0].lines


def test_plot_links_draws_one_line_per_weight_above_threshold():
    w = np.array([[0.5, 0.49, 0.01], [0.0, 0.0, 1.0]])
    fig = plot_links(w, ["le", "chat"], ["the", "black", "cat"], title="links")
    ax = fig.axes[0]
    assert len(ax.lines) == 3  # 0.01 and the zeros are left out
    widths = sorted(line.get_linewidth() for line in ax.lines)
    assert widths[0] < widths[-1]  # heavier weight, thicker line
    words = {t.get_text() for t in ax.texts}
    assert words == {"le", "chat", "the", "black", "cat"}
    assert ax.get_title() == "links"
    # the rows' names in short lines, so that the words get the column's width
    assert [t.get_text() for t in ax.get_yticklabels()] == ["encoder (keys,\nvalues)", "decoder\n(queries)"]


def test_plot_links_steps_crowded_words_out_of_line_and_keeps_the_column():
    from mha.plotting.style import MAX_WIDTH_IN, png_facts

    french = "le petit chien mange la pomme de terre".split()
    english = "the small dog eats the potato".split()
    w = np.zeros((8, 6))
    w[np.arange(8), np.minimum(np.arange(8), 5)] = 1.0
    fig = plot_links(w, french, english, title="meaning + position head: 8 French words read 6 English words")
    assert fig.get_size_inches()[0] == pytest.approx(MAX_WIDTH_IN)
    heights = {t.get_position()[1] for t in fig.axes[0].texts if t.get_text() in french}
    assert len(heights) == 2  # every other word one step up: 'chien' and 'mange' overprinted
    text = png_facts(fig.to_png(dpi=100))["text"]
    assert (text["TextOverlaps"], text["TextOutside"]) == ("0", "0"), text.get("TextProblems")


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: plot_alignment(np.ones((2, 2)), ["a", "b"], ["c", "d"]), r"\(n_heads, seq_q, seq_k\)"),
        (lambda: plot_alignment(np.ones((1, 2, 2)), ["a", "b"], ["c", "d"], reference=[0]), "shape \\(2,\\)"),
        (lambda: plot_alignment(np.ones((1, 2, 2)), ["a", "b"], ["c", "d"], reference=[0, 2]),
         "must lie in \\[0, 2\\)"),
        (lambda: plot_alignment(np.ones((1, 2, 2)), ["a", "b"], ["c", "d"], reference=[0.0, 1.0]), "of int"),
        (lambda: plot_links(np.ones((2, 2, 2)), ["a", "b"], ["c", "d"]), r"\(seq_q, seq_k\)"),
        (lambda: plot_links(np.ones((2, 2)), ["a"], ["c", "d"]), "need 2 query and 2 key tokens"),
    ],
)
def test_errors(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_alignment_explorer_renders_every_combination():
    explorer = alignment_explorer(sentences=["sleep", "cat"], d_heads=[8, 16])
    assert set(explorer.frames) == {("sleep", 8), ("sleep", 16), ("cat", 8), ("cat", 16)}
    assert explorer.sliders["d_head"].value == 16
    assert all(png[:4] == b"\x89PNG" for png in explorer.frames.values())
    assert not plt.get_fignums()


def test_alignment_explorer_rejects_unknown_sentences():
    with pytest.raises(ValueError, match="unknown sentence pairs \\['dog'\\]"):
        alignment_explorer(sentences=["dog"])


def test_render_alignment_titles_heads_and_sizes():
    fig = render_alignment("potato", 8)
    assert "8 French words read 6 English words" in fig._suptitle.get_text()
    assert [panel.title.get_text() for panel in fig.head_panels] == ["meaning", "position",
                                                                    "meaning + position"]
