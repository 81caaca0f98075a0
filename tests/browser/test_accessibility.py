"""What a keyboard, screen-reader or dark-mode reader gets from the built site's controls.

- Explorer sliders (native ranges): named by their label, announcing the option shown.
- Off/on rows: a named group; the chosen button is pressed (aria-pressed) and visibly distinct.
- Dark mode: native controls on the light output panel are drawn light (an unticked checkbox looked
  ticked), slider handles stand out from the panel, and an empty (hidden) widget leaves no bar.
- Focus rings reach 3:1 against the panel in both modes: a dark ring with a white halo.
- Enlargeable figures are buttons that say so; ``index.html`` names the site's icon (the browser
  asked for ``/favicon.ico``, a 404).
"""

from __future__ import annotations

import pytest

from tests.browser.test_head_view import _contrast
from tests.browser.test_pages import open_page, wait_for_widgets

pytestmark = pytest.mark.browser

WIDGET_PAGE = "chapters/self_attention"  # sliders, a toggle-button row and the softmax view's checkbox
MODES = ("light", "dark")

#: The colour a reader sees around an element (where its focus ring is drawn): the nearest
#: ancestor's opaque background.
BACKGROUND_JS = """(el) => {
  for (let node = el.parentElement; node; node = node.parentElement) {
    const colour = getComputedStyle(node).backgroundColor;
    const alpha = colour.startsWith("rgba") ? parseFloat(colour.split(",")[3]) : 1;
    if (alpha > 0.5) return colour;
  }
  return document.documentElement.dataset.theme === "dark" ? "rgb(18, 18, 18)" : "rgb(255, 255, 255)";
}"""


def _load(browser, site_url, site_pages, docname, mode="light", profile="desktop"):
    html = site_pages[docname].read_text(encoding="utf8")
    page, visit = open_page(browser, f"{site_url}/{docname}.html", color_scheme=mode, profile=profile)
    wait_for_widgets(page, html)
    return page, visit


def _background(element) -> str:
    return element.evaluate(BACKGROUND_JS)


@pytest.mark.parametrize("mode", MODES)
def test_explorer_controls_have_names_and_states(browser, site_url, site_pages, mode):
    """A slider is a named range that says its option; an off/on row is a named group, one pressed,
    the pressed one distinct and legible."""
    page, _ = _load(browser, site_url, site_pages, WIDGET_PAGE, mode)
    try:
        sliders = page.locator(".mha-control input[type=range]")
        assert sliders.count() > 0
        for i in range(sliders.count()):
            slider = sliders.nth(i)
            label = page.locator(f'label[for="{slider.get_attribute("id")}"]').inner_text().strip()
            assert label and page.get_by_role("slider", name=label).count() >= 1, f"slider {i} is unnamed"
            shown = page.locator(f'output[for="{slider.get_attribute("id")}"]').inner_text()
            assert slider.get_attribute("aria-valuetext") == shown, f"slider {i} says another value"
        groups = page.locator(".mha-control[role=group]")
        assert groups.count() > 0
        for i in range(groups.count()):
            group = groups.nth(i)
            name = group.locator("span").first.inner_text().strip()
            assert name and page.get_by_role("group", name=name).count() >= 1
            chosen = group.locator("button[aria-pressed=true]")
            other = group.locator("button[aria-pressed=false]")
            assert chosen.count() == 1 and other.count() >= 1
            fills = [b.evaluate("b => getComputedStyle(b).backgroundColor") for b in (chosen, other.first)]
            assert _contrast(*fills) >= 3, f"toggle {i}: the chosen button is not distinct ({fills})"
            assert _contrast(chosen.evaluate("b => getComputedStyle(b).color"), fills[0]) >= 4.5
            other.first.click()
            assert group.locator("button[aria-pressed=true]").count() == 1
    finally:
        page.context.close()


def test_dark_mode_draws_native_controls_light_on_the_light_panel(browser, site_url, site_pages):
    page, _ = _load(browser, site_url, site_pages, WIDGET_PAGE, "dark")
    try:
        controls = page.locator(
            ".cell_output input[type=checkbox]:visible, .cell_output input[type=range]:visible")
        assert controls.count() > 0
        for i in range(controls.count()):
            control = controls.nth(i)
            scheme = control.evaluate("c => getComputedStyle(c).colorScheme")
            panel = _background(control)
            assert _contrast(panel, "rgb(255, 255, 255)") < 2, "the panel is light in dark mode"
            assert scheme == "light", f"control {i} is drawn dark ({scheme}) on the light panel {panel}"
    finally:
        page.context.close()


@pytest.mark.parametrize("mode", MODES)
def test_slider_handles_stand_out_from_the_panel(browser, site_url, site_pages, mode):
    """A native range draws its handle in the accent colour: 3:1 at least against the panel."""
    page, _ = _load(browser, site_url, site_pages, WIDGET_PAGE, mode)
    try:
        sliders = page.locator(".mha-control input[type=range]")
        for i in range(sliders.count()):
            accent = sliders.nth(i).evaluate("s => getComputedStyle(s).accentColor")
            panel = _background(sliders.nth(i))
            assert _contrast(accent, panel) >= 3, f"slider {i}: handle {accent} on {panel}"
    finally:
        page.context.close()


def _ring(element) -> dict:
    return element.evaluate("""(el) => { const s = getComputedStyle(el);
        return {style: s.outlineStyle, width: parseFloat(s.outlineWidth), colour: s.outlineColor,
                halo: s.boxShadow}; }""")


@pytest.mark.parametrize("mode", MODES)
def test_focus_rings_reach_3_to_1_on_the_panel(browser, site_url, site_pages, mode):
    """A toggle button, a slider handle and the softmax view's controls, focused from the keyboard."""
    page, _ = _load(browser, site_url, site_pages, WIDGET_PAGE, mode)
    try:
        targets = [page.locator(".mha-toggles button").first,
                   page.locator(".mha-control input[type=range]").first,
                   page.locator(".mha-sv input[type=range]").first,
                   page.locator(".mha-sv input[type=checkbox]").first]
        for target in targets:
            target.scroll_into_view_if_needed()
            target.focus()
            page.keyboard.press("Shift+Tab")  # reach it by the keyboard, as a reader does
            page.keyboard.press("Tab")
            assert target.evaluate("t => t === document.activeElement && t.matches(':focus-visible')")
            ring, panel = _ring(target), _background(target)
            what = target.evaluate("t => t.className || t.type")
            assert ring["style"] != "none" and ring["width"] >= 2, f"{what}: no focus ring ({ring})"
            assert _contrast(ring["colour"], panel) >= 3, f"{what}: ring {ring['colour']} on {panel}"
            assert "255, 255, 255" in ring["halo"], f"{what}: no white halo, unseen on dark ({ring})"
    finally:
        page.context.close()


def test_a_hidden_widget_leaves_no_empty_bar(browser, site_url, site_pages):
    page, _ = _load(browser, site_url, site_pages, "chapters/real_heads", "dark")
    try:
        empty = page.locator(".widget-subarea").evaluate_all(
            """areas => areas.filter(a => a.getBoundingClientRect().height > 0
                 && [...a.children].every(c => getComputedStyle(c).display === 'none'))
               .map(a => a.getBoundingClientRect().height)""")
        assert empty == [], f"empty widget panels shown, heights {empty}"
    finally:
        page.context.close()


def test_enlargeable_figures_are_buttons_that_say_so(browser, site_url, site_pages):
    page, _ = _load(browser, site_url, site_pages, "chapters/multi_head")
    try:
        page.wait_for_timeout(500)  # frame alt texts arrive from their PNGs
        figures = page.locator(".mha-enlargeable")
        assert figures.count() > 0
        for name, alt, role in figures.evaluate_all("fs => fs.map(f => [f.getAttribute('aria-label'),"
                                                    " f.getAttribute('alt'), f.getAttribute('role')])"):
            assert role == "button"
            assert name == f"{alt}, press Enter to enlarge", (name, alt)
        figure = figures.first
        figure.focus()
        page.keyboard.press("Enter")
        page.locator("dialog.mha-figure-viewer").wait_for(state="visible", timeout=3_000)
    finally:
        page.context.close()


def test_the_home_page_names_the_site_icon(site):
    html = (site / "index.html").read_text(encoding="utf8")
    assert 'rel="icon"' in html and "url=intro.html" in html
    icon = html.split('rel="icon" href="', 1)[1].split('"', 1)[0]
    assert (site / icon).is_file(), icon

