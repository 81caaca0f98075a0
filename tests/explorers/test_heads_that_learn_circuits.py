"""mha.explorers.heads_that_learn_circuits: one frame per layer and head, each the circuits of that head
(its alt text names it), later layers read through the head given as ``previous``."""

import io

import matplotlib
import pytest
from PIL import Image

matplotlib.use("Agg")

from mha.explorers import circuits_explorer  # noqa: E402
from mha.lab import AttentionOnlyModel, head_circuits  # noqa: E402
from mha.plotting.heads_that_learn_circuits import plot_circuits  # noqa: E402


@pytest.fixture(scope="module")
def model():
    return AttentionOnlyModel(vocab_size=4, seq_len=6, d_model=8, n_heads=2, n_layers=2, rng=0)


def _alt(png: bytes) -> str:
    return Image.open(io.BytesIO(png)).text["Description"]


def test_one_frame_per_head_each_describing_its_own_circuits(model):
    explorer = circuits_explorer(model, list("ABCD"), previous=1)
    assert set(explorer.frames) == {(layer, head) for layer in (0, 1) for head in (0, 1)}
    assert len(set(explorer.frames.values())) == 4
    for (layer, head), png in explorer.frames.items():
        circuits = head_circuits(model, layer, head, previous=1 if layer else None)
        expected = plot_circuits(circuits, list("ABCD"))
        assert _alt(png).startswith(expected.describe())
        assert f"layer = {layer}, head = {head}" in _alt(png)


def test_later_layers_are_read_through_the_previous_head_and_open_on_it(model):
    through = circuits_explorer(model, list("ABCD"), previous=1)
    assert (through.sliders["layer"].value, through.sliders["head"].value) == (0, 1)
    assert "token before the key" in _alt(through.frames[(1, 0)])
    plain = circuits_explorer(model, list("ABCD"))
    assert (plain.sliders["layer"].value, plain.sliders["head"].value) == (0, 0)
    assert "token before the key" not in _alt(plain.frames[(1, 0)])
    assert plain.frames[(0, 1)] == through.frames[(0, 1)]  # layer 0 reads no earlier head either way


def test_bad_names_or_previous_head_are_named(model):
    with pytest.raises(ValueError, match="4"):
        circuits_explorer(model, list("AB"))
    for previous in (2, -1, True, 0.5):
        with pytest.raises(ValueError, match=rf"previous must be a head of layer 0, 0 to 1, got {previous}"):
            circuits_explorer(model, list("ABCD"), previous=previous)
