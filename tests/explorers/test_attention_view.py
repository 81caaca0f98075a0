"""mha.explorers.attention_view and the real-model views: what the page embeds, on hand-made encodings."""

import json
import re

import numpy as np
import pytest

import mha
from mha.explorers import head_view, model_view, query_key_view
from mha.explorers.attention_view import VIEWS, AttentionView, attention_view, decode_sentence, view_payload
from mha.pretrained import Encoding

N_LAYERS, N_HEADS, D_HEAD = 2, 3, 4
TOKENS = ["[CLS]", "the", "cat", "the", "[SEP]"]


def make_encoding(tokens=TOKENS, n_layers=N_LAYERS, n_heads=N_HEADS, seed=0, with_queries=True):
    """Queries and keys drawn at random; attentions their softmax, as a model computes them."""
    rng = np.random.default_rng(seed)
    seq = len(tokens)
    queries = rng.standard_normal((n_layers, n_heads, seq, D_HEAD)).astype(np.float32) * 2
    keys = rng.standard_normal((n_layers, n_heads, seq, D_HEAD)).astype(np.float32) * 2
    scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(D_HEAD)  # (n_layers, n_heads, seq, seq)
    attentions = mha.softmax(scores, axis=-1)
    ids = np.arange(seq, dtype=np.int64) + 100
    if not with_queries:
        queries = keys = None
    return Encoding(list(tokens), ids, rng.standard_normal((seq, 8)), attentions, queries, keys)


def embedded_payload(html: str) -> dict:
    """The JSON the browser reads, as it sits in the HTML."""
    match = re.search(r'<script type="application/json" class="mha-av-data">(.*?)</script>', html, re.S)
    assert match, "no embedded data"
    return json.loads(match.group(1))


def test_embedded_weights_match_the_encoding_within_one_code():
    encoding = make_encoding()
    view = attention_view(encoding)
    decoded = decode_sentence(embedded_payload(view.to_html()))
    np.testing.assert_allclose(decoded["attentions"], encoding.attentions, atol=0.5 / 255 + 1e-7)
    np.testing.assert_allclose(decoded["queries"], encoding.queries, rtol=0, atol=2 * 2.0**-15 * 10)
    np.testing.assert_allclose(decoded["keys"], encoding.keys, rtol=0, atol=2 * 2.0**-15 * 10)


def test_softmax_of_the_embedded_queries_and_keys_is_the_models_attention():
    """What the query-key view rebuilds in the browser: sum(q * k) / sqrt(d_head), then softmax."""
    encoding = make_encoding(seed=3)
    decoded = decode_sentence(attention_view(encoding).payload)
    q, k = decoded["queries"], decoded["keys"]
    products = q[..., :, None, :] * k[..., None, :, :]  # (n_layers, n_heads, seq_q, seq_k, d_head)
    scores = products.sum(-1).astype(np.float64) / np.sqrt(D_HEAD)  # (n_layers, n_heads, seq_q, seq_k)
    np.testing.assert_allclose(mha.softmax(scores, axis=-1), encoding.attentions, atol=1e-3)


def test_html_is_self_contained_and_mounts_its_own_element():
    html = attention_view(make_encoding()).to_html(element_id="mha-av-test")
    assert 'id="mha-av-test"' in html
    assert 'window.mhaAttentionView.mount(document.getElementById("mha-av-test"))' in html
    assert "<style>" in html and ".mha-av-grid" in html  # the style sheet is inlined
    assert "function Sentence" in html  # the script is inlined
    assert not re.search(r"""(src|href)=["']?https?://""", html)  # nothing from another host
    assert "<noscript>" in html
    ids = {attention_view(make_encoding()).to_html()[:40] for _ in range(3)}
    assert len(ids) == 3  # a fresh element id per output: re-running a cell never mounts an old copy


def test_a_token_cannot_close_the_data_script():
    encoding = make_encoding(tokens=["[CLS]", "</script><b>", "[SEP]"])
    html = attention_view(encoding).to_html()
    payload = embedded_payload(html)
    assert payload["sentences"][0]["tokens"][1] == "</script><b>"
    assert html.count("</script>") == 2  # the data's and the code's, none from the token


def test_views_and_settings_travel_in_the_payload():
    payload = view_payload(make_encoding(), views=["head", "model"], layer=1, heads=[2, 0], query=3,
                           title="T", threshold=0.05)
    assert payload["views"] == ["head", "model"]
    assert (payload["layer"], payload["heads"], payload["query"], payload["title"]) == (1, [2, 0], 3, "T")
    assert (payload["n_layers"], payload["n_heads"], payload["d_head"]) == (N_LAYERS, N_HEADS, None)
    assert payload["threshold"] == 0.05
    assert view_payload(make_encoding(), views=["query_key"])["d_head"] == D_HEAD


def test_several_sentences_share_one_payload():
    a, b = make_encoding(seed=1), make_encoding(["[CLS]", "hi", "[SEP]"], seed=2)
    payload = model_view({"a": a, "b": b}).payload
    assert [s["label"] for s in payload["sentences"]] == ["a", "b"]
    assert payload["views"] == ["model", "head"]
    np.testing.assert_allclose(decode_sentence(payload, 1)["attentions"], b.attentions, atol=0.5 / 255 + 1e-7)
    assert "queries" not in payload["sentences"][0]  # the model view needs no queries: smaller page


def test_head_view_adds_the_query_key_view_when_the_encoding_has_queries():
    assert head_view(make_encoding()).payload["views"] == ["head", "query_key"]
    assert head_view(make_encoding(with_queries=False)).payload["views"] == ["head"]
    assert head_view(make_encoding(), query_key=False).payload["views"] == ["head"]


def test_query_key_view_picks_the_query_by_token():
    view = query_key_view(make_encoding(), layer=1, head=2, query="cat")
    assert (view.payload["query"], view.payload["layer"], view.payload["heads"]) == (2, 1, [2])
    assert head_view(make_encoding(), query="the").payload["query"] == 1  # its first occurrence


def test_repr_names_the_views():
    expected = "AttentionView(views=['model', 'head'], sentences=1, layers=2, heads=3)"
    assert repr(model_view(make_encoding())) == expected
    assert isinstance(attention_view(make_encoding()), AttentionView)
    assert attention_view(make_encoding())._repr_html_().startswith('<div class="mha-av"')


@pytest.mark.parametrize("kwargs, message", [
    ({"views": ["heads"]}, "views must be a non-empty selection"),
    ({"views": []}, "views must be a non-empty selection"),
    ({"layer": N_LAYERS}, r"layer must lie in \[0, 2\)"),
    ({"heads": [N_HEADS]}, r"head must lie in \[0, 3\)"),
    ({"heads": []}, "at least one head"),
    ({"query": 5}, "query must be a token position"),
    ({"query": "dog"}, "token 'dog' appears 0 time"),
    ({"threshold": 1.0}, "threshold"),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        attention_view(make_encoding(), **kwargs)


def test_bad_arrays_are_named():
    good = make_encoding()
    with pytest.raises(ValueError, match="carries no queries and keys"):
        query_key_view(make_encoding(with_queries=False))
    nan = good.attentions.copy()
    nan[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"finite and in \[0, 1\]"):
        head_view(Encoding(good.tokens, good.ids, good.hidden, nan))
    with pytest.raises(ValueError, match="shape"):
        head_view(Encoding(good.tokens[:3], good.ids, good.hidden, good.attentions))
    with pytest.raises(ValueError, match="one model"):
        model_view({"a": good, "b": make_encoding(n_heads=2)})
    with pytest.raises(ValueError, match="non-empty mapping"):
        model_view({})


@pytest.mark.parametrize("kwargs, message", [
    ({"layer": 1.7}, "layer must be an integer, got float 1.7"),  # not silently layer 1
    ({"heads": [1.9]}, "each head must be an integer, got float 1.9"),
    ({"query": 1.5}, "query must be an integer, got float 1.5"),
    ({"layer": True}, "layer must be an integer, got bool"),
])
def test_positions_that_are_not_whole_numbers_are_refused(kwargs, message):
    with pytest.raises(TypeError, match=message):
        attention_view(make_encoding(), **kwargs)


def test_one_head_may_be_given_as_an_int_and_numpy_ints_count():
    payload = view_payload(make_encoding(), heads=np.int64(2), layer=np.int32(1), query=np.int64(3))
    assert (payload["heads"], payload["layer"], payload["query"]) == ([2], 1, 3)
    json.dumps(payload)  # plain Python ints: the page's JSON


def test_what_is_not_an_encoding_is_named():
    with pytest.raises(TypeError, match="must be an Encoding .* got str$"):
        head_view("The cat sat.")
    batch = type("BatchEncoding", (), {"tokens": [TOKENS, TOKENS], "attentions": np.zeros(3)})()
    with pytest.raises(TypeError, match=r"got BatchEncoding: for several sentences, a dict"):
        model_view(batch)
    with pytest.raises(TypeError, match="sentence 'a': expected an Encoding .* got int"):
        model_view({"a": 3})


def test_every_view_name_is_drawn_by_the_script():
    from mha.explorers.attention_view import _static

    script = _static("attention_view.js")
    for name in VIEWS:
        assert f"panels.{name}" in script


# --- the reader's own sentence (a running kernel) -------------------------------------------------------


def fake_encoder(text):
    """Stands in for encoder(text): a made-up encoding of the text's words."""
    if "!" in text:
        raise ValueError("no exclamations, please")
    return make_encoding(["[CLS]", *text.split(), "[SEP]"], seed=len(text))


def test_sentence_explorer_is_hidden_until_live_then_redraws_one_output():
    from mha.explorers import sentence_explorer

    explorer = sentence_explorer(fake_encoder, text="the cat sat", layer=1, heads=[2])
    assert explorer.layout.display == "none" and explorer.output.outputs == ()  # the static site: nothing
    explorer._view_count = 1  # a frontend connected to the kernel draws it
    assert explorer.layout.display is None
    (shown,) = explorer.output.outputs
    payload = embedded_payload(shown["data"]["text/html"])
    assert payload["sentences"][0]["tokens"] == ["[CLS]", "the", "cat", "sat", "[SEP]"]
    assert (payload["layer"], payload["heads"]) == (1, [2])
    explorer.text.value = "a dog ran far away"
    (shown,) = explorer.output.outputs  # replaced, not stacked
    decoded = decode_sentence(embedded_payload(shown["data"]["text/html"]))
    np.testing.assert_allclose(decoded["attentions"], fake_encoder("a dog ran far away").attentions,
                               atol=0.5 / 255 + 1e-7)
    explorer.text.value = "wow!"
    assert "no exclamations" in explorer.message.value
    assert len(explorer.output.outputs) == 1  # the last view stays


def test_sentence_explorer_shows_the_encoders_warnings_then_clears_them():
    import warnings

    from mha.explorers import sentence_explorer

    def cutting_encoder(text):
        if len(text.split()) > 3:
            warnings.warn("the text is longer than the model's 5 positions: only the first 5 were read",
                          stacklevel=2)
        return fake_encoder(" ".join(text.split()[:3]))

    explorer = sentence_explorer(cutting_encoder, text="the cat sat")
    explorer._view_count = 1
    assert explorer.message.value == ""
    explorer.text.value = "the cat sat on the mat"
    assert explorer.message.value.startswith("The text is longer than the model&#x27;s 5 positions")
    assert len(explorer.output.outputs) == 1  # drawn all the same, with what was read
    explorer.text.value = "a dog ran"
    assert explorer.message.value == ""
