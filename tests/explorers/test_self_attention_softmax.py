"""mha.explorers.self_attention_softmax: the payload the browser reads, and the maths it must reproduce."""

import json
import re

import numpy as np
import pytest

import mha
from mha.explorers import softmax_view
from mha.explorers.self_attention_softmax import view_weights


def _payload(html: str) -> dict:
    found = re.search(r'<script type="application/json" class="mha-sv-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_weights_are_the_package_softmax_of_the_scaled_masked_scores():
    scores = np.random.default_rng(0).normal(size=(5, 5))
    for temperature in (0.05, 0.3, 1.0, 7.0, 20.0):
        expected = mha.softmax(scores / temperature, axis=-1)
        np.testing.assert_allclose(view_weights(scores, temperature), expected, atol=1e-15)
        masked = view_weights(scores, temperature, causal=True)
        assert np.all(masked[~mha.causal_mask(5)] == 0)
        np.testing.assert_allclose(masked.sum(-1), 1.0)
    sharp, flat = view_weights(scores, 0.05), view_weights(scores, 20.0)
    assert np.all(sharp.max(-1) > flat.max(-1))  # low temperature sharpens, high flattens
    assert np.all(flat.max(-1) - flat.min(-1) < 0.2)


def test_html_carries_scores_tokens_and_settings_and_ids_are_deterministic():
    scores = [[1.0, 2.5, -0.5], [0.0, 0.25, 3.0]]
    view = softmax_view(scores, ["a", "b"], ["x", "y", "z"], temperature=2.0, title="T")
    payload = _payload(view.to_html(element_id="v"))
    assert payload["scores"] == scores and payload["tokens_q"] == ["a", "b"]
    assert payload["temperature"] == 2.0 and payload["mask_toggle"] is False  # not square: no causal switch
    assert 'window.mhaSoftmaxView.mount(document.getElementById("v"))' in view.to_html(element_id="v")
    first, second = view.to_html(), view.to_html()
    assert first != second  # two views on one page get two ids
    np.testing.assert_allclose(view.weights(), view_weights(scores, 2.0))


@pytest.mark.parametrize(("call", "words"), [
    (lambda: softmax_view(np.ones((2, 2, 2)), ["a", "b"]), r"shape \(seq_q, seq_k\)"),
    (lambda: softmax_view(np.ones((2, 3)), ["a", "b"]), "need 2 query and 3 key tokens, got 2 and 2"),
    (lambda: softmax_view(np.ones((2, 2)), ["a", "b"], temperature=0.0), "from 0.05 to 20, got 0.0"),
    (lambda: softmax_view([[np.nan, 0.0]], ["a"], ["x", "y"]), "must be finite"),
    (lambda: softmax_view(np.ones((17, 17)), list("abcdefghijklmnopq")), "at most 16 tokens"),
])
def test_bad_input_says_what_was_expected(call, words):
    with pytest.raises(ValueError, match=words):
        call()
