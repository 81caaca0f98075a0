"""The core path as a reader meets it: deep dives folded on a desktop and on a phone, a tap opens one, and
the intro shows the core path with its totals.

Screenshots of an opened deep dive land in ``test-artifacts/screenshots/`` (``*-deep-dive-*.png``).
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import ROOT
from tests.browser.test_pages import SCREENSHOTS, TIMEOUT_MS, open_page, unexpected

pytestmark = pytest.mark.browser

CHAPTER = "chapters/self_attention"  # the spine: three deep dives

#: Every deep dive on the page: its title, whether its content is hidden, and its toggle button.
DEEP_DIVES_JS = """() => [...document.querySelectorAll('.admonition.deep-dive')].map((box) => {
  const title = box.querySelector('.admonition-title');
  const body = [...box.children].filter((c) => c !== title);
  return {title: title.textContent.trim(),
          // sphinx-togglebutton folds a box by giving its content no height and no visibility
          hidden: body.every((c) => getComputedStyle(c).visibility === 'hidden'
                                    || c.getBoundingClientRect().height === 0),
          button: !!title.querySelector('button.toggle-button'),
          expanded: (title.querySelector('button.toggle-button') || {}).ariaExpanded || null};
})"""


@pytest.mark.parametrize("profile", ["desktop", "phone"])
def test_deep_dives_start_folded_and_open_on_a_tap(browser, site_url, site_pages, profile):
    page, visit = open_page(browser, f"{site_url}/{CHAPTER}.html", profile=profile)
    try:
        page.wait_for_function("document.querySelectorAll('.deep-dive .toggle-button').length >= 3",
                               timeout=TIMEOUT_MS)
        dives = page.evaluate(DEEP_DIVES_JS)
        assert len(dives) == 3, dives
        assert all(d["hidden"] and d["button"] for d in dives), dives
        assert all(d["title"].startswith("Deep dive, about ") for d in dives), dives
        title = page.locator(".admonition.deep-dive .admonition-title").first
        if profile == "phone":
            title.tap()
        else:
            title.click()
        page.wait_for_timeout(400)  # the fold's transition
        opened = page.evaluate(DEEP_DIVES_JS)
        assert not opened[0]["hidden"] and opened[0]["expanded"] == "true", opened[0]
        assert all(d["hidden"] for d in opened[1:]), "opening one deep dive opened others"
        code = page.locator(".admonition.deep-dive").first.locator("pre").first
        assert code.is_visible()  # the listing inside is shown, not only the prose
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(".admonition.deep-dive").first.screenshot(
            path=SCREENSHOTS / f"{CHAPTER.replace('/', '__')}-deep-dive-{profile}.png")
        assert unexpected(visit.console_errors) == []
    finally:
        page.context.close()


def test_the_intro_shows_the_core_path_and_both_totals(browser, site_url, site_pages):
    from book.reading_time import course_time, format_duration, stated_totals

    core, everything = stated_totals(course_time(ROOT))
    page, _ = open_page(browser, f"{site_url}/intro.html")
    try:
        text = page.locator("main").inner_text()
        assert f"The core path: about {format_duration(core)}" in text
        assert f"Everything: about {format_duration(everything)}" in text
        table = page.locator("table", has_text="core path").first
        assert table.is_visible() and table.locator("tr").count() >= 10
        links = table.locator("a")
        assert links.count() >= 10  # every chapter row links its chapter
    finally:
        page.context.close()


def test_a_core_exercise_says_so_in_its_box(browser, site_url, site_pages):
    page, _ = open_page(browser, f"{site_url}/{CHAPTER}.html", profile="phone")
    try:
        box = page.locator(".exercise", has_text="Your own softmax and attention").first
        assert "core · " in box.inner_text()
    finally:
        page.context.close()
