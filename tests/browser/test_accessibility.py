"""What a keyboard, screen-reader or dark-mode reader gets from the built site's controls.

- ipywidgets sliders: the value box beside a slider is read-only and no Tab stop on the static site
  (typing there changed no frame); each handle is named by its label and announces the shown value.
- Toggle buttons: a named group; the chosen button is pressed (aria-pressed) and visibly distinct.
- Dark mode: native controls on the light output panel are drawn light (an unticked checkbox looked
  ticked), slider handles stand out from the panel, and an empty (hidden) widget leaves no bar.
- Focus rings reach 3:1 against the panel in both modes: a dark ring with a white halo.
- Enlargeable figures are buttons that say so; ``index.html`` names the site's icon (the browser
  asked for ``/favicon.ico``, a 404).
"""

from __future__ import annotations

import pytest

from tests.browser.test_head_view import _contrast
from tests.browser.test_pages import open_page, unexpected, wait_for_widgets

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


def test_a_slider_value_box_takes_no_typing(browser, site_url, site_pages):
    page, visit = _load(browser, site_url, site_pages, WIDGET_PAGE)
    try:
        sliders = page.locator(".widget-slider:visible")
        assert sliders.count() > 0
        for i in range(sliders.count()):
            readout = sliders.nth(i).locator(".widget-readout")
            assert readout.evaluate("r => [r.isContentEditable, r.tabIndex]") == [False, -1], (
                f"slider {i}: its value box is editable or a Tab stop")
        slider = sliders.first
        readout, handle = slider.locator(".widget-readout"), slider.locator(".noUi-handle")
        shown = readout.inner_text()
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("16")
        page.keyboard.press("Enter")
        assert readout.inner_text() == shown, "typing changed the value box, not the frame"
        assert handle.get_attribute("aria-valuetext") == shown
    finally:
        page.context.close()
    assert unexpected(visit.console_errors) == []


@pytest.mark.parametrize("mode", MODES)
def test_widget_controls_have_names_and_states(browser, site_url, site_pages, mode):
    page, _ = _load(browser, site_url, site_pages, WIDGET_PAGE, mode)
    try:
        sliders = page.locator(".widget-slider:visible")
        for i in range(sliders.count()):
            label = sliders.nth(i).locator(".widget-label").inner_text().strip()
            handle = sliders.nth(i).locator(".noUi-handle")
            assert label and handle.get_attribute("aria-label") == label, f"slider {i} is unnamed"
            assert page.get_by_role("slider", name=label).count() >= 1
        groups = page.locator(".widget-toggle-buttons:visible")
        assert groups.count() > 0
        for i in range(groups.count()):
            group = groups.nth(i)
            label = group.locator(".widget-label").inner_text().strip()
            assert group.get_attribute("role") == "group" and group.get_attribute("aria-label") == label
            buttons = group.locator("button")

            def states():
                return buttons.evaluate_all(  # noqa: B023 - used within this iteration
                    "bs => bs.map(b => [b.classList.contains('mod-active'), b.getAttribute('aria-pressed')])")

            assert [pressed for _, pressed in states()] == [
                "true" if active else "false" for active, _ in states()]
            chosen, other = group.locator("button.mod-active"), group.locator("button:not(.mod-active)").first
            fills = [b.evaluate("b => getComputedStyle(b).backgroundColor") for b in (chosen, other)]
            assert _contrast(*fills) >= 3, f"toggle {i}: the chosen button is not distinct ({fills})"
            ink = chosen.evaluate("b => getComputedStyle(b).color")
            assert _contrast(ink, fills[0]) >= 4.5, f"toggle {i}: the chosen button's text is faint"
            other = group.locator(f"button[data-value='{other.get_attribute('data-value')}']")
            other.click()
            page.wait_for_timeout(200)
            assert other.get_attribute("aria-pressed") == "true", f"toggle {i}: the state did not follow"
            assert group.locator("button[aria-pressed='true']").count() == 1
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
    page, _ = _load(browser, site_url, site_pages, WIDGET_PAGE, mode)
    try:
        handles = page.locator(".widget-slider:visible .noUi-handle")
        for i in range(handles.count()):
            handle = handles.nth(i)
            rim = handle.evaluate("h => getComputedStyle(h).borderTopColor")
            panel = _background(handle)
            assert _contrast(rim, panel) >= 3, f"handle {i}: rim {rim} on {panel}"
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
        targets = [page.locator(".widget-toggle-buttons:visible button").first,
                   page.locator(".widget-slider:visible .noUi-handle").first,
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

