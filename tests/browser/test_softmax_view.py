"""The temperature view in Chromium: the weights the browser draws are mha.softmax's, at every setting.

No built site needed: the view's HTML (data + inlined script) is loaded into a blank page.
"""

import numpy as np
import pytest

from mha.explorers import softmax_view
from mha.explorers.self_attention_softmax import view_weights

pytestmark = pytest.mark.browser

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def _drawn(page) -> np.ndarray:
    cells = page.eval_on_selector_all(
        "rect.mha-sv-cell", "cs => cs.map(c => [+c.dataset.query, +c.dataset.key, +c.dataset.weight])")
    weights = np.zeros((len(TOKENS), len(TOKENS)))
    for i, j, w in cells:
        weights[int(i), int(j)] = w
    return weights


def test_slider_and_mask_redraw_the_package_weights(browser):
    scores = np.random.default_rng(3).normal(scale=2.0, size=(6, 6))
    view = softmax_view(scores, TOKENS, temperature=1.0, title="Temperature")
    page = browser.new_page(viewport={"width": 390, "height": 844}, has_touch=True)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_content(f"<html><body>{view.to_html(element_id='sv')}</body></html>")
    scores = np.asarray(view.payload["scores"])  # what the page holds (6 significant digits)
    np.testing.assert_allclose(_drawn(page), view_weights(scores, 1.0), atol=1e-8)

    for temperature in (0.1, 0.37, 4.2, 20.0):  # values no frame was rendered for: the slider is continuous
        page.eval_on_selector("#sv input[type=range]", "(s, v) => { s.value = v;"
                              " s.dispatchEvent(new Event('input')); }", str(np.log10(temperature)))
        shown = float(page.get_attribute("#sv", "data-temperature"))
        assert shown == pytest.approx(temperature, rel=1e-9)
        np.testing.assert_allclose(_drawn(page), view_weights(scores, shown), atol=1e-8)

    page.check("#sv input[type=checkbox]")  # the causal switch
    drawn = _drawn(page)
    np.testing.assert_allclose(drawn, view_weights(scores, 20.0, causal=True), atol=1e-8)
    assert np.all(drawn[np.triu_indices(6, 1)] == 0)

    page.focus("#sv input[type=range]")  # the keyboard path: arrows move the slider
    before = page.get_attribute("#sv", "data-temperature")
    page.keyboard.press("ArrowLeft")
    assert page.get_attribute("#sv", "data-temperature") != before
    width = page.evaluate("() => document.querySelector('#sv svg').getBoundingClientRect().width")
    assert width <= 390  # fits a phone's screen
    assert not errors
    page.close()
