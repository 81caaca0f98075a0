"""mha.explorers.multi_head: per-head maps of a seeded layer, one frame per (n_heads, seq_len)."""

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mha.explorers.multi_head import HEAD_COUNTS, SEQ_LENS, head_explorer, render_heads  # noqa: E402
from mha.lab.examples import LONG_TOKENS, head_weights  # noqa: E402


def test_every_default_slider_setting_gives_a_valid_layer_and_sentence():
    assert len(set(HEAD_COUNTS)) > 1 and len(set(SEQ_LENS)) > 1  # something to slide
    for n_heads in HEAD_COUNTS:
        weights, tokens = head_weights(n_heads, max(SEQ_LENS))
        assert weights.shape == (n_heads, max(SEQ_LENS), max(SEQ_LENS)) and len(tokens) == max(SEQ_LENS)
    assert tokens == list(LONG_TOKENS[: max(SEQ_LENS)])


def test_frame_shows_one_panel_per_head_with_those_weights():
    fig = render_heads(4, 8, seed=1)
    weights, _ = head_weights(4, 8, seed=1)
    assert len(fig.head_panels) == 4
    for h, panel in enumerate(fig.head_panels):
        np.testing.assert_array_equal(panel.image.get_array(), weights[h])
    assert "4 heads of d_head = 16" in fig.get_suptitle()


def test_explorer_renders_each_combination_once_and_closes_its_figures():
    plt.close("all")
    explorer = head_explorer(head_counts=(1, 4), seq_lens=(4, 8))
    assert set(explorer.frames) == {(1, 4), (1, 8), (4, 4), (4, 8)}
    assert len(set(explorer.frames.values())) == 4  # every frame differs
    assert explorer.sliders["n_heads"].value == 4 and explorer.sliders["seq_len"].value == 8
    assert plt.get_fignums() == []
