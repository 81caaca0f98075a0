"""The three pictures in Chromium, with no kernel: the query-key plane (its weights are mha's, wherever the
query is dragged, tapped or moved by keyboard), and in the built book the step-by-step head, the plane
and the circuits: each responds to its control and fits a phone's column (358 px).

The first test needs no built site: the plane's HTML is loaded into a blank page, every request refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from mha.explorers import geometry_view
from mha.lab import geometry_weights, key_geometry
from tests.browser.test_pages import (
    PROFILES,
    open_enclosing_dropdowns,
    open_page,
    unexpected,
    wait_for_widgets,
)

pytestmark = pytest.mark.browser

COLUMN = 358  # the text column on a 390-px phone


def _drawn(page, root: str) -> tuple[np.ndarray, np.ndarray]:
    """The query the page holds and the weights it drew."""
    query = np.array([float(v) for v in page.get_attribute(root, "data-query").split(",")])
    weights = page.eval_on_selector_all(f"{root} rect.mha-gv-weight",
                                        "bars => bars.map(b => [+b.dataset.key, +b.dataset.weight])")
    drawn = np.zeros(len(weights))
    for key, weight in weights:
        drawn[int(key)] = weight
    return query, drawn


@pytest.mark.parametrize("profile", PROFILES)
def test_the_plane_draws_mhas_weights_wherever_the_query_goes(browser, profile):
    view = geometry_view(title="Drag the query")
    keys = np.asarray(view.payload["keys"])
    context = browser.new_context(**PROFILES[profile])
    page = context.new_page()
    errors = []
    page.route("**/*", lambda route: route.abort())
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_content('<html lang="en"><head><meta name="viewport" content="width=device-width"></head>'
                     f"<body>{view.to_html(element_id='gv')}</body></html>")
    query, drawn = _drawn(page, "#gv")
    np.testing.assert_allclose(query, view.payload["query"], rtol=1e-8)
    np.testing.assert_allclose(drawn, geometry_weights(query, keys), atol=1e-8)

    plane = page.locator("#gv svg.mha-gv-plane")
    box = plane.bounding_box()
    seen = {tuple(query)}
    for fx, fy in ((0.8, 0.2), (0.15, 0.6), (0.6, 0.9)):  # drag (desktop) or tap (phone) the query there
        x, y = box["x"] + fx * box["width"], box["y"] + fy * box["height"]
        if profile == "phone":
            page.touchscreen.tap(x, y)
        else:
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.mouse.move(x, y, steps=4)
            page.mouse.up()
        query, drawn = _drawn(page, "#gv")
        np.testing.assert_allclose(drawn, geometry_weights(query, keys), atol=1e-8)
        extent = view.payload["extent"]
        assert np.sign(query[0]) == np.sign(fx - 0.5) and np.sign(query[1]) == np.sign(0.5 - fy)
        assert np.all(np.abs(query) <= extent)
        seen.add(tuple(query))
    plane.focus()  # the keyboard path
    before = _drawn(page, "#gv")[0]
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowUp")
    after, drawn = _drawn(page, "#gv")
    assert after[0] > before[0] and after[1] > before[1]
    np.testing.assert_allclose(drawn, geometry_weights(after, keys), atol=1e-8)
    page.keyboard.press("Home")
    np.testing.assert_allclose(_drawn(page, "#gv")[0], view.payload["query"], rtol=1e-8)
    assert len(seen) == 4
    assert "most weight on" in page.inner_text("#gv .mha-gv-status")
    if profile == "phone":
        assert plane.bounding_box()["width"] <= COLUMN
        bars = page.locator("#gv .mha-gv-bars").bounding_box()
        assert bars["x"] + bars["width"] <= 390  # the score and weight columns fit beside the keys
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert errors == []
    context.close()


@pytest.mark.parametrize("profile", PROFILES)
def test_no_two_key_names_sit_on_each_other_in_the_plane(browser, profile):
    """Keys that lean one way (the chapter's key bias) point close together: their names are moved apart."""
    context = browser.new_context(**PROFILES[profile])
    page = context.new_page()
    views = "".join(geometry_view(key_geometry(rng=seed)).to_html(element_id=f"gv{seed}")
                    for seed in range(6))
    page.set_content(f'<html lang="en"><body>{views}</body></html>')
    for seed in range(6):
        boxes = page.eval_on_selector_all(f"#gv{seed} text.mha-gv-token",
                                          "names => names.map(n => {const b = n.getBoundingClientRect(); "
                                          "return [b.left, b.top, b.right, b.bottom];})")
        plane = page.locator(f"#gv{seed} svg.mha-gv-plane").bounding_box()
        assert len(boxes) == 8 and all(b[2] > b[0] for b in boxes)
        for i, a in enumerate(boxes):
            assert plane["y"] - 1 <= a[1] and a[3] <= plane["y"] + plane["height"] + 1, seed
            for b in boxes[i + 1:]:
                overlap = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
                assert min(overlap) <= 0.5, (seed, a, b)
    context.close()


def _frame_src(explorer) -> str:
    return explorer.evaluate("e => [...e.querySelectorAll('img.widget-image')]"
                             ".filter(i => i.offsetParent !== null).map(i => i.src.slice(-64)).join()")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("docname", "title"), [
    ("chapters/self_attention", "One head, step by step"),
    ("chapters/heads_that_learn", "Each head's circuits"),
])
def test_a_picture_in_the_book_moves_with_its_slider_and_fits_a_phone(browser, site_url, site_pages, docname,
                                                                      title, profile):
    html = site_pages[docname].read_text(encoding="utf8")
    page, visit = open_page(browser, f"{site_url}/{docname}.html", profile=profile)
    try:
        wait_for_widgets(page, html)
        explorer = page.locator(".mha-box", has=page.locator(f"text={title}")).first
        open_enclosing_dropdowns(explorer)  # the circuits sit in a deep dive, which a reader opens
        explorer.scroll_into_view_if_needed()
        assert explorer.locator("img.widget-image:visible").count() == 1  # one frame shown at a time
        first = _frame_src(explorer)
        explorer.locator("input[type=range]").first.press("ArrowRight")  # the keyboard moves the frame
        page.wait_for_timeout(200)
        assert _frame_src(explorer) not in ("", first)
        shown = explorer.locator("img.widget-image:visible").first.bounding_box()
        if profile == "phone":
            assert shown["width"] <= COLUMN + 1
        assert page.evaluate("document.documentElement.scrollWidth") <= PROFILES[profile]["viewport"]["width"]
        if docname == "chapters/self_attention":  # the plane is on the same page, and works there too
            plane = page.locator(".mha-gv svg.mha-gv-plane").first
            plane.scroll_into_view_if_needed()
            root = "#" + page.locator(".mha-gv").first.get_attribute("id")
            before = _drawn(page, root)[0]
            plane.focus()
            page.keyboard.press("ArrowLeft")
            after, drawn = _drawn(page, root)
            assert after[0] < before[0]
            keys = np.asarray(page.evaluate(f"JSON.parse(document.querySelector('{root} script').textContent)"
                                            ".keys"))
            np.testing.assert_allclose(drawn, geometry_weights(after, keys), atol=1e-8)
            view = page.locator(root)
            assert view.evaluate("v => v.scrollWidth <= v.clientWidth")  # nothing cut at the column's edge
            if profile == "phone":
                assert plane.bounding_box()["width"] <= COLUMN
    finally:
        page.context.close()
    assert visit.foreign == [] and visit.failed == []
    assert unexpected(visit.console_errors) == []
