"""The head view, model view and query-key view (mha.explorers.attention_view) in headless Chromium.

Each check runs on a page made here from a hand-made encoding (needs only Chromium) and, when the book
is built, on the real-heads chapter (the real model). What the page draws is compared with the arrays
embedded in it, decoded independently in Python.
"""

from __future__ import annotations

import numpy as np
import pytest

from book.site_weight import PHONE
from mha.explorers import head_view, model_view
from mha.explorers.attention_view import decode_sentence
from tests.browser.test_pages import open_page, unexpected
from tests.explorers.test_attention_view import make_encoding

pytestmark = pytest.mark.browser

HEAD_VIEW = ".mha-av[data-views~='head']"


def standalone_html() -> str:
    encoding = make_encoding(["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"], seed=5)
    return ("<!doctype html><html><body>" + head_view(encoding, layer=1, heads=[2]).to_html()
            + model_view({"one": encoding, "two": make_encoding(seed=6)}, layer=0, head=1).to_html()
            + "</body></html>")


@pytest.fixture(params=["standalone", "real_heads"])
def view_page(request, browser):  # noqa: F811 - the imported fixture
    """(page, console errors) with the views drawn: a page made here, or the built chapter."""
    errors: list[str] = []
    if request.param == "standalone":
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.set_content(standalone_html())
    else:
        site_url = request.getfixturevalue("site_url")
        page, visit = open_page(browser, f"{site_url}/chapters/real_heads.html")
        errors = visit.console_errors
        views = page.locator(".mha-av")
        for i in range(views.count()):  # each view's data loads as it nears the screen: visit them all
            views.nth(i).evaluate("v => v.scrollIntoView()")
            page.wait_for_function("i => document.querySelectorAll('.mha-av')[i].dataset.mounted === 'true'",
                                   arg=i)
        page.locator(HEAD_VIEW).first.evaluate("v => v.scrollIntoView()")
    page.wait_for_selector(f"{HEAD_VIEW} .mha-av-head svg line", state="attached")
    yield page
    page.close()
    assert unexpected(errors) == []


def payload(root) -> dict:
    """The view's data: inline, or (on the site, when large) in the file book/view_data.py wrote."""
    return root.locator("script.mha-av-data").first.evaluate(
        "s => s.dataset.src ? fetch(new URL(s.dataset.src, document.baseURI)).then(r => r.json())"
        " : JSON.parse(s.textContent)")


def drawn(root) -> list[dict]:
    """Every line the head view shows: its head, query, key and weight."""
    return root.locator(".mha-av-head svg line").evaluate_all(
        "lines => lines.map(l => ({head: +l.dataset.head, query: +l.dataset.query, key: +l.dataset.key,"
        " weight: +l.dataset.weight, opacity: +l.getAttribute('stroke-opacity')}))")


def expected_lines(data: dict, layer: int, heads, *, query=None, key=None, sentence=0) -> set:
    weights = decode_sentence(data, sentence)["attentions"]  # (n_layers, n_heads, seq, seq)
    lines = set()
    for head in heads:
        for (i, j), w in np.ndenumerate(weights[layer, head]):
            if w >= data["threshold"] and query in (None, i) and key in (None, j):
                lines.add((head, i, j))
    return lines


def check_lines(root, layer, heads, *, sentence=0, **focus):
    data, lines = payload(root), drawn(root)
    weights = decode_sentence(data, sentence)["attentions"]
    assert {(line["head"], line["query"], line["key"]) for line in lines} == expected_lines(
        data, layer, heads, sentence=sentence, **focus)
    for line in lines:
        w = weights[layer, line["head"], line["query"], line["key"]]
        assert line["weight"] == pytest.approx(w, abs=1e-4) and line["opacity"] == pytest.approx(w, abs=1e-4)
    return lines


def test_hovering_a_token_shows_only_its_lines_with_the_embedded_weights(view_page):
    root = view_page.locator(HEAD_VIEW).first
    data = payload(root)
    layer, heads = data["layer"], data["heads"]
    every = check_lines(root, layer, heads)
    token = root.locator(".mha-av-head .mha-av-token[data-side='query'][data-index='2']")
    token.hover()
    only = check_lines(root, layer, heads, query=2)
    assert 0 < len(only) < len(every)
    root.locator(".mha-av-head .mha-av-token[data-side='key'][data-index='1']").hover()
    check_lines(root, layer, heads, key=1)
    root.locator(".mha-av-title").hover()  # away from the tokens: every line again
    assert len(check_lines(root, layer, heads)) == len(every)


def test_heads_switch_on_and_off(view_page):
    root = view_page.locator(HEAD_VIEW).first
    data = payload(root)
    other = (data["heads"][0] + 1) % data["n_heads"]
    root.locator(f".mha-av-head-toggle[data-head='{other}']").click()
    assert root.locator(f".mha-av-head-toggle[data-head='{other}']").get_attribute("aria-pressed") == "true"
    check_lines(root, data["layer"], sorted({*data["heads"], other}))
    root.locator(".mha-av-layer").select_option(str(data["n_layers"] - 1))
    check_lines(root, data["n_layers"] - 1, sorted({*data["heads"], other}))


def test_clicking_a_model_view_cell_opens_that_head(view_page):
    root = view_page.locator(".mha-av[data-views~='model']").first
    data = payload(root)
    layer, head = data["n_layers"] - 1, data["n_heads"] - 1
    assert root.locator(".mha-av-cell").count() == data["n_layers"] * data["n_heads"]
    cell = root.locator(f".mha-av-cell[data-layer='{layer}'][data-head='{head}']")
    cell.click()
    assert cell.get_attribute("aria-pressed") == "true"
    assert root.locator(".mha-av-cell[aria-pressed='true']").count() == 1
    assert root.locator(".mha-av-layer").input_value() == str(layer)
    assert root.locator(".mha-av-head-toggle[aria-pressed='true']").evaluate_all(
        "buttons => buttons.map(b => +b.dataset.head)") == [head]
    check_lines(root, layer, [head])
    # Every map is painted: its pixels are not all one colour.
    colours = cell.locator("canvas").evaluate(
        "c => new Set(Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data)).size")
    assert colours > 4


def test_keyboard_reaches_tokens_moves_pins_and_lets_go(view_page):
    page = view_page
    root = page.locator(HEAD_VIEW).first
    data = payload(root)
    layer, heads = data["layer"], data["heads"]
    root.locator(".mha-av-head-toggle").last.focus()  # the last head button, then Tab: the first query token
    page.keyboard.press("Tab")
    focused = page.evaluate("[document.activeElement.dataset.side, document.activeElement.dataset.index]")
    assert focused == ["query", "0"]
    check_lines(root, layer, heads, query=0)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.index") == "2"
    check_lines(root, layer, heads, query=2)
    page.keyboard.press("Enter")  # keep it
    token = root.locator(".mha-av-head .mha-av-token[data-side='query'][data-index='2']")
    assert token.get_attribute("aria-pressed") == "true"
    root.locator(".mha-av-layer").focus()  # focus leaves the tokens: the kept token still shows alone
    check_lines(root, layer, heads, query=2)
    token.focus()
    page.keyboard.press("ArrowRight")  # across to the keys
    assert page.evaluate("document.activeElement.dataset.side") == "key"
    check_lines(root, layer, heads, key=2)
    page.keyboard.press("Escape")
    root.locator(".mha-av-layer").focus()
    check_lines(root, layer, heads)
    assert "lines" in root.locator(".mha-av-status").first.inner_text()


def test_query_key_view_rebuilds_scores_and_weights(view_page):
    root = view_page.locator(".mha-av[data-views~='query-key']").first
    if root.count() == 0:
        pytest.skip("no query-key view on this page")
    data = payload(root)
    arrays = decode_sentence(data)
    root.locator(".mha-av-query").select_option("3")
    layer, head = data["layer"], data["heads"][0]
    rows = root.locator(".mha-av-qk-row").evaluate_all(
        "rows => rows.map(r => [+r.dataset.key, +r.dataset.score, +r.dataset.weight])")
    q, k = arrays["queries"][layer, head, 3], arrays["keys"][layer, head]  # (d_head,), (seq, d_head)
    scores = (q * k).sum(axis=-1) / np.sqrt(data["d_head"])  # (seq,)
    assert [key for key, _, _ in rows] == list(range(len(scores)))
    np.testing.assert_allclose([s for _, s, _ in rows], scores, atol=1e-3)
    np.testing.assert_allclose([w for _, _, w in rows], arrays["attentions"][layer, head, 3], atol=3e-3)
    assert root.locator(".mha-av-query-key svg rect").count() > (len(scores) + 1) * data["d_head"]


@pytest.mark.parametrize("docname", ["chapters/multi_head", "chapters/self_attention", "chapters/positions"])
def test_static_site_shows_no_kernel_only_control(browser, site_url, site_pages, docname):  # noqa: F811
    """Live controls (text boxes, menus, free sliders) are left out of the page, which has no kernel."""
    page, visit = open_page(browser, f"{site_url}/{docname}.html")
    try:
        assert page.locator(".widget-subarea input[type=text], .widget-subarea select").count() == 0
        assert page.locator(".widget-subarea input[type=range]:visible").count() > 0  # the frame sliders
    finally:
        page.close()
    assert unexpected(visit.console_errors) == []


def test_the_sentence_menu_switches_every_view(view_page):
    root = view_page.locator(".mha-av[data-views~='model']").first
    data = payload(root)
    if len(data["sentences"]) < 2:
        pytest.skip("one sentence on this page")
    root.locator(".mha-av-sentence").select_option("1")
    tokens = data["sentences"][1]["tokens"]
    assert root.locator(".mha-av-head .mha-av-token[data-side='query']").count() == len(tokens)
    assert root.locator(".mha-av-cell canvas").first.get_attribute("width") == str(len(tokens))
    check_lines(root, data["layer"], data["heads"], sentence=1)


def _contrast(rgb_a: str, rgb_b: str) -> float:
    """WCAG contrast of two CSS colours given as rgb(r, g, b), computed from the definition."""
    def luminance(rgb):
        channels = [int(v) / 255 for v in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3]]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    light, dark = sorted((luminance(rgb_a), luminance(rgb_b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_a_head_button_that_is_on_reads_clearly_on_its_colour(view_page):
    buttons = view_page.locator(HEAD_VIEW).first.locator(".mha-av-head-toggle")
    for i in range(buttons.count()):
        if buttons.nth(i).get_attribute("aria-pressed") != "true":
            buttons.nth(i).click()
    shown = buttons.evaluate_all("bs => bs.map(b => [b.getAttribute('aria-pressed'), "
                                 "getComputedStyle(b).color, getComputedStyle(b).backgroundColor])")
    assert all(pressed == "true" for pressed, _, _ in shown)
    worst = min(_contrast(ink, fill) for _, ink, fill in shown)
    assert worst >= 4.5, f"a head's label has contrast {worst:.2f} on its colour (WCAG AA asks 4.5)"


def test_a_tap_on_a_query_key_cell_writes_its_numbers(view_page):
    root = view_page.locator(".mha-av[data-views~='query-key']").first
    if root.count() == 0:
        pytest.skip("no query-key view on this page")
    cells = root.locator(".mha-av-query-key svg rect:has(title)")  # the cells of q, k and q·k
    reading = root.locator(".mha-av-query-key .mha-av-status")
    for index in (1, cells.count() // 2):  # a cell of q, then one of some key's row
        cell = cells.nth(index)
        cell.scroll_into_view_if_needed()
        cell.click()
        assert reading.inner_text() == cell.locator("title").text_content()
        assert "=" in reading.inner_text()  # numbers, not the prompt


def test_the_model_view_is_one_tab_stop_with_arrow_keys_between_maps(view_page):
    page = view_page
    root = page.locator(".mha-av[data-views~='model']").first
    data = payload(root)
    cells = root.locator(".mha-av-cell")
    assert cells.count() == data["n_layers"] * data["n_heads"]
    assert root.locator(".mha-av-cell[tabindex='0']").count() == 1, "one Tab stop for every map"
    root.locator(".mha-av-sentence, .mha-av-layer").first.focus()
    for _ in range(data["n_heads"] + 2):  # Tab through the controls to the maps
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('mha-av-cell')"):
            break
    where = "[+document.activeElement.dataset.layer, +document.activeElement.dataset.head]"
    start = page.evaluate(where)
    assert start == [data["layer"], data["heads"][0]], "Tab lands on the open head's map"
    page.keyboard.press("Control+Home")
    assert page.evaluate(where) == [0, 0]
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    assert page.evaluate(where) == [1, 1]
    page.keyboard.press("End")
    assert page.evaluate(where) == [1, data["n_heads"] - 1]
    assert root.locator(".mha-av-cell[tabindex='0']").count() == 1
    page.keyboard.press("Enter")  # opens that head
    assert root.locator(".mha-av-layer").input_value() == "1"
    check_lines(root, 1, [data["n_heads"] - 1])
    page.keyboard.press("Tab")  # and Tab leaves the grid at once
    assert not page.evaluate("document.activeElement.classList.contains('mha-av-cell')")


def test_focus_rings_reach_3_to_1_and_differ_from_every_head_colour(view_page):
    page = view_page
    root = page.locator(HEAD_VIEW).first
    for target in (root.locator(".mha-av-head-toggle").last, root.locator(".mha-av-layer")):
        target.focus()
        page.keyboard.press("Shift+Tab")  # by the keyboard, as a reader does
        page.keyboard.press("Tab")
        ring = target.evaluate("""(el) => { const s = getComputedStyle(el);
            return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor, s.boxShadow]; }""")
        background = target.evaluate("""(el) => { for (let n = el; n; n = n.parentElement) {
            const c = getComputedStyle(n).backgroundColor; if (c !== 'rgba(0, 0, 0, 0)') return c; }
            return 'rgb(255, 255, 255)'; }""")
        assert ring[0] != "none" and ring[1] >= 2
        assert _contrast(ring[2], background) >= 3, f"ring {ring[2]} on {background}"
        assert "255, 255, 255" in ring[3], "a white halo keeps the ring seen on a dark page"
        assert ring[2] not in {"rgb(230, 159, 0)"}, "head 4's colour"
    token = root.locator(".mha-av-head .mha-av-token[tabindex='0']").first
    token.focus()
    stroke = token.locator("rect").evaluate("r => getComputedStyle(r).stroke")
    assert _contrast(stroke, "rgb(255, 255, 255)") >= 3 and _contrast(stroke, "rgb(206, 214, 221)") >= 3


def test_the_query_key_view_shows_every_digit_in_dark_mode(browser, site_url):  # noqa: F811
    """The dark theme pads outputs by 8 px, which cut the last digit at 1280 px: the drawing now fits
    its column there; on a phone it still scrolls sideways rather than shrink its numbers past 85 %."""
    screens = {"desktop": {"viewport": {"width": 1280, "height": 800}}, "phone": PHONE}
    for screen, options in screens.items():
        context = browser.new_context(**options, color_scheme="dark")
        page = context.new_page()
        try:
            page.goto(f"{site_url}/chapters/real_heads.html", wait_until="load")
            view = page.locator(".mha-av[data-views~='query-key']").first
            view.evaluate("v => v.scrollIntoView()")  # its data loads as it nears the screen
            page.wait_for_selector(".mha-av-query-key svg text", state="attached")
            boxes = page.locator(".mha-av-query-key .mha-av-scroll").evaluate_all(
                "bs => bs.map(b => [b.scrollWidth, b.clientWidth,"
                " b.querySelector('svg').getBoundingClientRect().width,"
                " parseFloat(b.querySelector('svg').getAttribute('width'))])")
            assert boxes
            for scroll_width, client_width, drawn, natural in boxes:
                if screen == "desktop":
                    assert scroll_width <= client_width, f"{drawn:.0f} px drawn in a {client_width} px column"
                else:
                    assert drawn >= 0.85 * natural - 1, f"{drawn:.0f} px of {natural:.0f}: numbers too small"
        finally:
            context.close()
