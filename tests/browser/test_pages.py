"""Every page of the built book, as a reader's browser shows it (headless Debian Chromium).

For each page in ``_toc.yml``: it loads from a local server with no failed request and no request
to another host, no console error beyond ``ALLOWED_CONSOLE_ERRORS``, its math is typeset by the
vendored MathJax, every embedded widget renders, and moving each slider changes the frame the
reader sees. Screenshots (light and dark mode) land in ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest

from tests.browser.conftest import CHROMIUM, ROOT, missing, toc_docnames

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"

#: Console errors that are known noise, each with the reason it is harmless.
ALLOWED_CONSOLE_ERRORS = {
    # pydata-sphinx-theme logs this on a first visit, before a light/dark choice is stored.
    "Got invalid theme mode": "theme default on first visit",
}
TIMEOUT_MS = 20_000


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install -r requirements-test.txt)")
    if not CHROMIUM.exists():
        missing(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update"],
        )  # fmt: skip
        yield browser
        browser.close()


@dataclass
class PageVisit:
    """What happened while a page loaded."""

    failed: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)


def open_page(browser, url: str, *, color_scheme: str = "light"):
    """Load ``url`` in a fresh page; record failures, foreign requests and console errors."""
    page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme=color_scheme)
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
    return page, visit


def unexpected(errors: list[str]) -> list[str]:
    return [e for e in errors if not any(allowed in e for allowed in ALLOWED_CONSOLE_ERRORS)]


def wait_for_math(page, html: str) -> None:
    expected = len(re.findall(r'class="math[ "]', html))
    if expected:
        page.wait_for_function(
            f"document.querySelectorAll('mjx-container').length >= {expected}",
            timeout=TIMEOUT_MS,
        )


def wait_for_widgets(page, html: str) -> int:
    views = html.count('type="application/vnd.jupyter.widget-view+json"')
    if views:
        page.wait_for_function(
            f"document.querySelectorAll('.widget-subarea').length >= {views}", timeout=TIMEOUT_MS
        )
        page.wait_for_timeout(300)  # let nested views finish
    return views


def screenshot(page, docname: str, mode: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{docname.replace('/', '__')}-{mode}.png", full_page=True)


@pytest.mark.parametrize("docname", toc_docnames())
def test_page_loads_typesets_and_renders_widgets(browser, site_url, site_pages, docname):
    html = site_pages[docname].read_text(encoding="utf8")
    page, visit = open_page(browser, f"{site_url}/{docname}.html")
    try:
        wait_for_math(page, html)
        views = wait_for_widgets(page, html)
        assert page.locator(".jupyter-widgets-error-widget").count() == 0, docname
        assert page.locator(".widget-subarea").count() >= views
        screenshot(page, docname, "light")
    finally:
        page.close()
    assert visit.foreign == [], f"{docname} requested other hosts"
    assert visit.failed == [], f"{docname} had failed requests"
    assert unexpected(visit.console_errors) == [], f"{docname} logged errors"


@pytest.mark.parametrize("docname", toc_docnames())
def test_page_in_dark_mode(browser, site_url, site_pages, docname):
    html = site_pages[docname].read_text(encoding="utf8")
    page, visit = open_page(browser, f"{site_url}/{docname}.html", color_scheme="dark")
    try:
        wait_for_math(page, html)
        wait_for_widgets(page, html)
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        screenshot(page, docname, "dark")
    finally:
        page.close()
    assert unexpected(visit.console_errors) == [], f"{docname} logged errors in dark mode"


def _frame_pixels(subarea):
    """Screenshot of a widget with its sliders masked: what changes is the frame, not the knob."""
    return subarea.screenshot(mask=[subarea.locator(".widget-slider")], animations="disabled")


@pytest.mark.parametrize("docname", toc_docnames())
def test_moving_a_slider_changes_the_visible_frame(browser, site_url, site_pages, docname):
    html = site_pages[docname].read_text(encoding="utf8")
    if "SelectionSliderModel" not in html and "IntSliderModel" not in html:
        pytest.skip(f"{docname} has no slider")
    page, _ = open_page(browser, f"{site_url}/{docname}.html")
    try:
        wait_for_widgets(page, html)
        subareas = page.locator(".widget-subarea").filter(has=page.locator(".widget-slider"))
        assert subareas.count() > 0, f"{docname} embeds sliders but none is shown"
        for i in range(subareas.count()):
            subarea = subareas.nth(i)
            subarea.scroll_into_view_if_needed()
            sliders = subarea.locator(".widget-slider:visible")  # live-mode sliders stay hidden here
            for j in range(sliders.count()):
                slider = sliders.nth(j)
                readout = slider.locator(".widget-readout")
                before_value, before = readout.inner_text(), _frame_pixels(subarea)
                handle = slider.locator(".noUi-handle")
                handle.focus()
                page.keyboard.press("Home" if handle.get_attribute("aria-valuenow") != (
                    handle.get_attribute("aria-valuemin")) else "End")
                page.wait_for_timeout(300)
                assert readout.inner_text() != before_value, f"{docname}: slider {j} did not move"
                assert _frame_pixels(subarea) != before, (
                    f"{docname}: widget {i}, slider {j} moved to {readout.inner_text()} but the "
                    "frame did not change"
                )
    finally:
        page.close()
