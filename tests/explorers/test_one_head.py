"""mha.explorers.one_head, geometry_view and circuits: frames and payloads hold the package's numbers."""

import json
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from mha.explorers import circuits_explorer, geometry_view, head_steps_explorer  # noqa: E402
from mha.explorers.one_head import render_head_step  # noqa: E402
from mha.lab import AttentionOnlyModel, KeyGeometry, geometry_weights, key_geometry  # noqa: E402
from mha.lab.one_head import STEPS  # noqa: E402


def test_one_frame_per_step_and_query_each_tracing_its_query():
    explorer = head_steps_explorer("the cat sat")
    assert list(explorer.sliders) == ["step", "query"]
    assert set(explorer.frames) == {(s, t) for s in STEPS for t in ("the", "cat", "sat")}
    assert explorer.sliders["query"].value == "cat"
    assert all(frame[:4] == b"\x89PNG" for frame in explorer.frames.values())
    assert len(set(explorer.frames.values())) == 15  # no two frames alike


def test_a_readers_sentence_without_the_traced_word_traces_its_last_word():
    fig = render_head_step("softmax", "cat", text="dogs bark loudly")
    assert "\u201cloudly\u201d" in fig.describe()
    with pytest.raises(ValueError, match="once"):
        head_steps_explorer("the cat saw the dog")
    with pytest.raises(TypeError, match="sentence"):
        render_head_step("softmax", "cat", text=3)


def _payload(html: str) -> dict:
    found = re.search(r'<script type="application/json" class="mha-gv-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1))


def test_the_plane_carries_keys_and_query_and_room_around_them():
    geometry = key_geometry()
    view = geometry_view(geometry, title="t")
    payload = _payload(view.to_html(element_id="g"))
    np.testing.assert_allclose(payload["keys"], geometry.keys, rtol=1e-5)
    np.testing.assert_allclose(view.weights(), geometry_weights(geometry.query, geometry.keys), rtol=1e-5)
    longest = max(np.abs(geometry.keys).max(), np.abs(geometry.query).max())
    assert longest < payload["extent"] <= 1.25 * longest + 0.5
    assert payload["tokens"] == geometry.tokens and payload["query_token"] == "it"


@pytest.mark.parametrize(("geometry", "error"), [
    ("it", TypeError),
    (KeyGeometry(["a"] * 13, np.ones((13, 2)), np.ones(2), "a"), ValueError),
    (KeyGeometry(["a", "b"], np.ones((3, 2)), np.ones(2), "a"), ValueError),
    (KeyGeometry(["a"], np.ones((1, 3)), np.ones(2), "a"), ValueError),
])
def test_a_bad_plane_is_refused(geometry, error):
    with pytest.raises(error):
        geometry_view(geometry)


def test_one_circuits_frame_per_head():
    model = AttentionOnlyModel(vocab_size=4, seq_len=6, d_model=8, n_heads=2, n_layers=2, rng=0)
    explorer = circuits_explorer(model, list("ABCD"), previous=1)
    assert set(explorer.frames) == {(layer, head) for layer in (0, 1) for head in (0, 1)}
    assert len(set(explorer.frames.values())) == 4
