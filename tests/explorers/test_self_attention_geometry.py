"""mha.explorers.self_attention_geometry: the plane ships the package's keys and query, self-contained,
with room around the longest arrow; what it draws is mha.lab.geometry_weights."""

import json
import re

import numpy as np
import pytest

from mha.explorers import geometry_view
from mha.explorers.browser import static_text
from mha.lab import KeyGeometry, geometry_weights, key_geometry


def _payload(html: str) -> dict:
    found = re.search(r'<script type="application/json" class="mha-gv-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_plane_carries_keys_and_query_and_room_around_them():
    geometry = key_geometry()
    view = geometry_view(geometry, title="t")
    payload = _payload(view.to_html(element_id="g"))
    np.testing.assert_allclose(payload["keys"], geometry.keys, rtol=1e-5)
    np.testing.assert_allclose(payload["query"], geometry.query, rtol=1e-5)
    np.testing.assert_allclose(view.weights(), geometry_weights(geometry.query, geometry.keys), rtol=1e-5)
    longest = max(np.abs(geometry.keys).max(), np.abs(geometry.query).max())
    assert longest < payload["extent"] <= 1.25 * longest + 0.5
    assert payload["extent"] * 2 == int(payload["extent"] * 2)  # grid lines fall on halves
    assert payload["tokens"] == geometry.tokens and payload["query_token"] == "it"
    assert payload["title"] == "t"


def test_weights_follow_a_query_the_reader_moves():
    keys = [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]
    view = geometry_view(KeyGeometry(["a", "b", "c"], np.array(keys), np.array([0.5, 0.0]), "a"))
    towards_b = view.weights([0.0, 8.0])
    assert towards_b.argmax() == 1 and towards_b[1] > 0.9
    np.testing.assert_allclose(view.weights([0.0, 0.0]), 1 / 3)
    assert not np.allclose(view.weights(), towards_b)  # the default is the first query, not the moved one


def test_the_fragment_is_self_contained_and_mounts_its_own_element():
    html = geometry_view().to_html(element_id="gv")
    assert html.startswith('<div class="mha-gv" id="gv">')
    assert 'window.mhaGeometryView.mount(document.getElementById("gv"))' in html
    for name in ("view_base.js", "geometry_view.js", "geometry_view.css"):
        assert static_text(name) in html  # inlined: the static site fetches nothing
    assert not re.search(r"(src|href)=|https?://(?!www.w3.org/2000/svg)", html)
    assert "<noscript>The query-key plane needs JavaScript.</noscript>" in html
    assert geometry_view().to_html() != geometry_view().to_html()  # two planes on a page: two ids
    assert repr(geometry_view()) == "GeometryView(8 keys, query of 'it')"


def test_a_token_cannot_close_the_data_script():
    geometry = KeyGeometry(["</script><b>", "x"], np.eye(2), np.ones(2), "</script><b>")
    html = geometry_view(geometry).to_html(element_id="g")
    assert html.count("</script>") == 2  # the data's and the script's own
    assert _payload(html)["tokens"][0] == "</script><b>"


def test_twelve_keys_fit_and_thirteen_do_not():
    rng = np.random.default_rng(0)
    names = [f"w{i}" for i in range(13)]
    keys = rng.standard_normal((13, 2))
    assert len(geometry_view(KeyGeometry(names[:12], keys[:12], keys[0], "w0")).payload["keys"]) == 12
    with pytest.raises(ValueError, match="1 to 12 keys"):
        geometry_view(KeyGeometry(names, keys, keys[0], "w0"))


@pytest.mark.parametrize(("geometry", "error", "words"), [
    ("it", TypeError, "KeyGeometry"),
    (KeyGeometry(["a", "b"], np.ones((3, 2)), np.ones(2), "a"), ValueError, "3 keys and 2 tokens"),
    (KeyGeometry(["a"], np.ones((1, 3)), np.ones(2), "a"), ValueError, r"shape \(seq_k, 2\)"),
    (KeyGeometry(["a"], np.ones((1, 2)), np.array([np.inf, 0.0]), "a"), ValueError, "finite"),
])
def test_a_bad_plane_is_refused_with_what_was_expected(geometry, error, words):
    with pytest.raises(error, match=words):
        geometry_view(geometry)
