"""mha.explorers.shapes: one HTML frame per size combination, each the trace of those sizes."""

import itertools

import pytest

from mha.explorers.shapes import BATCHES, D_MODELS, HEAD_COUNTS, SEQS, render_shapes, shape_explorer
from mha.lab.shapes import trace_shapes


@pytest.mark.parametrize("batch, seq, d_model, n_heads", [(1, 3, 64, 8), (2, 6, 512, 1)])
def test_frame_lists_every_step_with_its_shape(batch, seq, d_model, n_heads):
    page = render_shapes(batch, seq, d_model, n_heads)
    assert f"d_head = {d_model // n_heads}" in page
    for step in trace_shapes(batch, seq, d_model, n_heads):
        assert f"<td><b>{step.name}</b></td>" in page
        assert str(step.shape) in page


def test_explorer_has_one_html_frame_per_combination_within_the_limit():
    explorer = shape_explorer()
    combos = set(itertools.product(BATCHES, SEQS, D_MODELS, HEAD_COUNTS))
    assert explorer.kind == "html"
    assert set(explorer.frames) == combos
    assert len(combos) <= 64
    assert explorer.frames[(1, 3, 64, 8)] == render_shapes(1, 3, 64, 8)
    assert list(explorer.sliders) == ["batch", "seq", "d_model", "n_heads"]
