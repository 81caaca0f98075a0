"""Every page of the built book, as a reader's browser shows it (headless Debian Chromium).

For each page in ``_toc.yml``, on a desktop screen (1280x800) and on a phone (390x844, touch): it
loads from a local server with no failed request, no request to another host and no console error,
its math was typeset at build time (KaTeX; no math script), every embedded widget renders (the
widget manager loads when asked, as it does when a widget nears the screen), and moving each slider
(or flipping each toggle) changes the frame the reader sees. Screenshots (light and dark mode, both
widths) land in ``test-artifacts/screenshots/``. What a phone reader needs beyond that is checked in
``test_phone.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest

from book.site_weight import PHONE
from tests.browser.conftest import ROOT, toc_docnames

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"

#: Console errors that are known noise, each with the reason it is harmless (none today).
ALLOWED_CONSOLE_ERRORS: dict[str, str] = {}
TIMEOUT_MS = 20_000

#: The screens a reader uses: browser context options per profile.
PROFILES = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {**PHONE, "device_scale_factor": 2},  # 2x keeps full-page screenshots small
}


@dataclass
class PageVisit:
    """What happened while a page loaded."""

    failed: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)


def open_page(browser, url: str, *, color_scheme: str = "light", profile: str = "desktop"):
    """Load ``url`` in a fresh context; record failures, foreign requests and console errors.

    Close it with ``page.context.close()``.
    """
    context = browser.new_context(**PROFILES[profile], color_scheme=color_scheme)
    page = context.new_page()
    visit = PageVisit()
    origin = urlparse(url).netloc

    def guard(route):
        if urlparse(route.request.url).netloc in {origin, ""}:
            route.continue_()
        else:  # the site must work offline: nothing may leave this machine
            visit.foreign.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    page.on("requestfailed", lambda request: visit.failed.append(request.url))
    page.on("response", lambda r: r.status >= 400 and visit.failed.append(f"{r.status} {r.url}"))
    page.on("pageerror", lambda error: visit.console_errors.append(f"pageerror: {error}"))
    page.on("console", lambda m: m.type == "error" and visit.console_errors.append(m.text))
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, f"{url}: {response and response.status}"
    wait_until_measured(page)
    return page, visit


#: mha-site.js measures the page (fits equations, marks what scrolls) a section per task, and again
#: when fonts arrive or a widget draws; <html data-mha-measured="done"> once its last turn has run.
MEASURED_JS = """() => !document.querySelector('script[src*="mha-site.js"]')
  || (document.fonts.status === 'loaded' && document.documentElement.dataset.mhaMeasured === 'done')"""


def wait_until_measured(page) -> None:
    page.wait_for_function(MEASURED_JS, timeout=TIMEOUT_MS)


def unexpected(errors: list[str]) -> list[str]:
    return [e for e in errors if not any(allowed in e for allowed in ALLOWED_CONSOLE_ERRORS)]


def wait_for_math(page, html: str) -> None:
    """Every formula of the page is typeset (at build time: KaTeX's markup is in the HTML), and the
    fonts its formulas use have arrived (mha-site.js fits equations to the column then)."""
    expected = len(re.findall(r'class="math[ "]', html))
    if expected:
        typeset = page.evaluate("document.querySelectorAll('.math .katex').length")
        assert typeset >= expected, f"{typeset} of {expected} formulas typeset"
        page.evaluate("document.fonts.ready.then(() => true)")


def wait_for_widgets(page, html: str) -> int:
    """The page's explorers (HTML from the build: book/static_widgets.py), each shown frame loaded,
    and the page measured; returns how many explorers it has."""
    views = html.count('<div class="widget-subarea">')
    if views:
        page.evaluate("""() => Promise.all([...document.querySelectorAll('.mha-frame img')]
          .filter((img) => img.checkVisibility()).map((img) => { img.loading = 'eager'; return img.decode()
          .catch(() => null); }))""")
        wait_until_measured(page)
    return views


#: Loads and decodes every figure (lazy ones too), so that a full-page screenshot shows them all.
ALL_IMAGES_JS = """async () => {
  document.querySelectorAll('img[loading="lazy"]').forEach((img) => { img.loading = 'eager'; });
  await Promise.all([...document.images].map((img) => img.decode().catch(() => null)));
}"""


def screenshot(page, docname: str, profile: str, mode: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate(ALL_IMAGES_JS)
    name = f"{docname.replace('/', '__')}-{profile}-{mode}.png"
    page.screenshot(path=SCREENSHOTS / name, full_page=True)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", toc_docnames())
def test_page_loads_typesets_and_renders_widgets(browser, site_url, site_pages, docname, profile):
    html = site_pages[docname].read_text(encoding="utf8")
    page, visit = open_page(browser, f"{site_url}/{docname}.html", profile=profile)
    try:
        wait_for_math(page, html)
        views = wait_for_widgets(page, html)
        assert page.locator(".widget-subarea").count() >= views
        screenshot(page, docname, profile, "light")
    finally:
        page.context.close()
    assert visit.foreign == [], f"{docname} requested other hosts"
    assert visit.failed == [], f"{docname} had failed requests"
    assert unexpected(visit.console_errors) == [], f"{docname} logged errors"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", toc_docnames())
def test_page_in_dark_mode(browser, site_url, site_pages, docname, profile):
    html = site_pages[docname].read_text(encoding="utf8")
    page, visit = open_page(browser, f"{site_url}/{docname}.html", color_scheme="dark",
                            profile=profile)  # fmt: skip
    try:
        wait_for_math(page, html)
        wait_for_widgets(page, html)
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        screenshot(page, docname, profile, "dark")
    finally:
        page.context.close()
    assert unexpected(visit.console_errors) == [], f"{docname} logged errors in dark mode"


CONTROLS = ".mha-control"


def open_enclosing_dropdowns(element) -> None:
    """Opens, as a reader does with a click on its title, each closed dropdown (a deep dive, a worked
    answer) that ``element`` sits in, the outermost first."""
    closed = element.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' toggle-hidden ')]")
    for _ in range(closed.count()):
        closed.first.locator(":scope > .admonition-title").click()
        element.page.wait_for_timeout(100)
    assert closed.count() == 0, "a dropdown around an explorer did not open"


def _frame_pixels(subarea):
    """Screenshot of an explorer with its controls masked: what changes is the frame, not the knob."""
    return subarea.screenshot(mask=[subarea.locator(CONTROLS)], animations="disabled")


def _assert_on_screen(page, element, what: str) -> None:
    """``element`` is shown, entirely within the viewport's width (no sideways scrolling)."""
    assert element.is_visible(), f"{what} is hidden"
    box = element.bounding_box()
    width = page.viewport_size["width"]
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (
        f"{what} spans x = {box and box['x']:.0f} to {box and box['x'] + box['width']:.0f}, "
        f"outside the {width} px screen"
    )


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", toc_docnames())
def test_moving_a_slider_changes_the_visible_frame(browser, site_url, site_pages, docname, profile):
    """Each control's value is on screen and announced, and moving it changes the frame."""
    html = site_pages[docname].read_text(encoding="utf8")
    if 'class="mha-control"' not in html:
        pytest.skip(f"{docname} has no slider")
    page, _ = open_page(browser, f"{site_url}/{docname}.html", profile=profile)
    try:
        wait_for_widgets(page, html)
        subareas = page.locator(".widget-subarea").filter(has=page.locator(CONTROLS))
        assert subareas.count() > 0, f"{docname} has explorers but none is shown"
        for i in range(subareas.count()):
            subarea = subareas.nth(i)
            open_enclosing_dropdowns(subarea)
            subarea.scroll_into_view_if_needed()
            sliders = subarea.locator("input[type=range]")
            for j in range(sliders.count()):
                slider = sliders.nth(j)
                readout = subarea.locator(f'output[for="{slider.get_attribute("id")}"]')
                where = f"{docname} ({profile}): explorer {i}, slider {j}"
                _assert_on_screen(page, readout, f"{where}: its value")
                _assert_on_screen(page, slider, where)
                before_value, before = readout.inner_text(), _frame_pixels(subarea)
                slider.press("End" if slider.input_value() == slider.get_attribute("min") else "Home")
                page.wait_for_timeout(300)
                assert readout.inner_text() != before_value, f"{where} did not move"
                assert slider.get_attribute("aria-valuetext") == readout.inner_text(), where
                assert _frame_pixels(subarea) != before, (
                    f"{where} moved to {readout.inner_text()} but the frame did not change"
                )
            for j in range(subarea.locator(".mha-toggles").count()):
                toggle = subarea.locator(".mha-toggles").nth(j)
                where = f"{docname} ({profile}): explorer {i}, toggle {j}"
                _assert_on_screen(page, toggle, where)
                before = _frame_pixels(subarea)
                toggle.locator('button[aria-pressed="false"]').first.click()
                page.wait_for_timeout(300)
                assert _frame_pixels(subarea) != before, f"{where} flipped but the frame did not change"
            frames = subarea.locator("img.widget-image")
            for k in range(frames.count()):
                assert frames.nth(k).get_attribute("alt"), f"{docname}: widget {i}, frame {k} has no alt"
    finally:
        page.context.close()
