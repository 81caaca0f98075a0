"""mha.explorers.heads: per-head maps of a seeded layer, one frame per (n_heads, seq_len)."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mha.examples import toy_embeddings  # noqa: E402
from mha.explorers.heads import (  # noqa: E402
    HEAD_COUNTS,
    LONG_TOKENS,
    SEQ_LENS,
    head_explorer,
    head_weights,
    render_heads,
)
from mha.layers import MultiHeadAttention  # noqa: E402
from tests.reference import multi_head_loop  # noqa: E402


def test_sliders_cover_the_brief():
    assert HEAD_COUNTS == (1, 2, 4, 8)
    assert SEQ_LENS == (4, 8, 16, 32)
    assert len(LONG_TOKENS) >= max(SEQ_LENS)


@pytest.mark.parametrize("n_heads, seq_len", [(1, 4), (2, 8), (8, 5)])
def test_weights_match_a_head_by_head_reference(n_heads, seq_len):
    weights, tokens = head_weights(n_heads, seq_len, d_model=16, seed=3)
    assert tokens == list(LONG_TOKENS[:seq_len])
    layer = MultiHeadAttention(16, n_heads, rng=3)
    x = toy_embeddings(tokens, 16, seed=3)
    _, expected = multi_head_loop(x, {"key": x, "value": x}, layer.parameters(), n_heads)
    np.testing.assert_allclose(weights, expected, atol=1e-12)


def test_more_heads_regroup_the_same_projections():
    # Same seed, same d_model: W_q and W_k are identical, so 1 head's scores are the sum of 2 heads'
    # scores (each scaled by its own sqrt(d_head)). Compare through the log-weights, which are the
    # scores up to a per-row constant.
    one, tokens = head_weights(1, 6, d_model=8, seed=0)
    layer = MultiHeadAttention(8, 2, rng=0)
    x = toy_embeddings(tokens, 8, seed=0)
    q, k = x @ layer.W_q, x @ layer.W_k  # (seq, d_model) each
    scores_per_head = [q[:, h * 4:(h + 1) * 4] @ k[:, h * 4:(h + 1) * 4].T for h in range(2)]
    combined = sum(scores_per_head) / np.sqrt(8)  # the single head's scaled scores
    log_w = np.log(one[0])
    np.testing.assert_allclose(log_w - log_w[:, :1], combined - combined[:, :1], atol=1e-10)


@pytest.mark.parametrize("seq_len", [0, len(LONG_TOKENS) + 1])
def test_sequence_length_out_of_range_is_refused(seq_len):
    with pytest.raises(ValueError, match="seq_len"):
        head_weights(2, seq_len)


def test_heads_that_do_not_divide_d_model_are_refused():
    with pytest.raises(ValueError, match="divisible"):
        head_weights(3, 4, d_model=64)


def test_frame_shows_one_panel_per_head_with_those_weights():
    fig = render_heads(4, 8, seed=1)
    images = [im for ax in fig.axes for im in ax.get_images()]
    weights, _ = head_weights(4, 8, seed=1)
    assert len(images) == 4
    for h, image in enumerate(images):
        np.testing.assert_array_equal(image.get_array(), weights[h])
    assert "4 heads of d_head = 16" in fig.get_suptitle()


def test_explorer_renders_each_combination_once_and_closes_its_figures():
    plt.close("all")
    explorer = head_explorer(head_counts=(1, 4), seq_lens=(4, 8))
    assert set(explorer.frames) == {(1, 4), (1, 8), (4, 4), (4, 8)}
    assert len(set(explorer.frames.values())) == 4  # every frame differs
    assert explorer.sliders["n_heads"].value == 4 and explorer.sliders["seq_len"].value == 8
    assert plt.get_fignums() == []
