"""mha.explorers.multi_head_diagram: one frame per size, each the diagram of those sizes."""

import itertools

import matplotlib
import pytest

matplotlib.use("Agg")

from mha.explorers import diagram_explorer  # noqa: E402
from mha.explorers.multi_head_diagram import D_MODELS, HEAD_COUNTS, SEQS, render_diagram  # noqa: E402


def test_render_draws_one_weight_map_per_head_of_a_real_layer():
    fig = render_diagram(4, 64, 2)
    images = fig.axes[0].images
    assert len(images) == 2
    for image in images:
        weights = image.get_array()
        assert weights.shape == (4, 4)
        assert abs(weights.sum(axis=-1) - 1).max() < 1e-9


def test_default_sizes_are_all_valid_and_few_enough_to_embed():
    assert all(d % h == 0 for d, h in itertools.product(D_MODELS, HEAD_COUNTS))
    assert len(SEQS) * len(D_MODELS) * len(HEAD_COUNTS) <= 32


def test_explorer_has_one_png_frame_per_size():
    explorer = diagram_explorer(seqs=(3,), d_models=(64,), head_counts=(1, 4))
    assert explorer.kind == "image"
    assert set(explorer.frames) == {(3, 64, 1), (3, 64, 4)}
    assert all(frame[:4] == b"\x89PNG" for frame in explorer.frames.values())
    assert list(explorer.sliders) == ["seq", "d_model", "n_heads"]


def test_explorer_refuses_a_head_count_that_does_not_divide_the_width():
    with pytest.raises(ValueError, match=r"\(64, 3\)"):
        diagram_explorer(seqs=(3,), d_models=(64,), head_counts=(2, 3))
