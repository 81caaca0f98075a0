"""The core path as a reader meets it: deep dives folded on a desktop and on a phone, a tap or the
keyboard (Tab, Enter, Space, with a visible focus ring) opens and closes one, an open one fits a
390 px screen with readable text in light and dark mode, and the intro shows the core path with its
totals.

Screenshots of an opened deep dive land in ``test-artifacts/screenshots/`` (``*-deep-dive-*.png``).
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import ROOT
from tests.browser.test_head_view import _contrast
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


#: The colour a reader sees behind an element: every background from the page down to it,
#: composited (the theme tints admonition titles with translucent fills).
SEEN_BACKGROUND_JS = """(el) => {
  const chain = [];
  for (let node = el; node; node = node.parentElement) chain.unshift(node);
  const dark = document.documentElement.dataset.theme === "dark";
  let seen = dark ? [18, 18, 18] : [255, 255, 255];
  for (const node of chain) {
    const parts = getComputedStyle(node).backgroundColor.match(/[\\d.]+/g).map(Number);
    const alpha = parts.length > 3 ? parts[3] : 1;
    seen = seen.map((c, i) => c * (1 - alpha) + parts[i] * alpha);
  }
  return `rgb(${seen.map(Math.round).join(", ")})`;
}"""

#: How a deep dive reads: its box against the screen, its prose's size and colours, its title's.
LEGIBILITY_JS = """(box) => {
  const rect = box.getBoundingClientRect();
  const title = box.querySelector('.admonition-title');
  const prose = box.querySelector(':scope > p, :scope > div > p') || box.querySelector('p');
  return {left: rect.left, right: rect.right, width: innerWidth,
          pageWidth: document.scrollingElement.scrollWidth,
          proseSize: parseFloat(getComputedStyle(prose).fontSize),
          titleSize: parseFloat(getComputedStyle(title).fontSize),
          proseInk: getComputedStyle(prose).color, titleInk: getComputedStyle(title).color};
}"""


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("profile", ["desktop", "phone"])
def test_a_deep_dive_opens_and_closes_from_the_keyboard(browser, site_url, site_pages, profile,
                                                        mode):
    page, visit = open_page(browser, f"{site_url}/{CHAPTER}.html", profile=profile,
                            color_scheme=mode)
    try:
        page.wait_for_function("document.querySelectorAll('.deep-dive .toggle-button').length >= 3",
                               timeout=TIMEOUT_MS)
        button = page.locator(".admonition.deep-dive .toggle-button").first
        button.scroll_into_view_if_needed()
        button.focus()
        page.keyboard.press("Shift+Tab")  # arrive by Tab, as a keyboard reader does
        page.keyboard.press("Tab")
        assert button.evaluate("b => b === document.activeElement && b.matches(':focus-visible')")
        ring = button.evaluate("""(b) => { const s = getComputedStyle(b);
            return {style: s.outlineStyle, width: parseFloat(s.outlineWidth), colour: s.outlineColor,
                    halo: s.boxShadow}; }""")
        behind = button.evaluate(SEEN_BACKGROUND_JS)
        assert ring["style"] != "none" and ring["width"] >= 2, f"no focus ring on the toggle: {ring}"
        # the ring or its white halo stands out from the title it sits on (3:1, WCAG 1.4.11)
        assert _contrast(ring["colour"], behind) >= 3 or (
            "255, 255, 255" in ring["halo"] and _contrast("rgb(255, 255, 255)", behind) >= 3
        ), f"the focus ring {ring} is faint on {behind}"
        label = button.evaluate("b => b.getAttribute('aria-label') || b.textContent.trim()")
        assert label, "the toggle has no accessible name"
        page.keyboard.press("Enter")
        page.wait_for_timeout(400)  # the fold's transition
        opened = page.evaluate(DEEP_DIVES_JS)[0]
        assert not opened["hidden"] and opened["expanded"] == "true", opened
        page.keyboard.press("Space")
        page.wait_for_timeout(400)
        closed = page.evaluate(DEEP_DIVES_JS)[0]
        assert closed["hidden"] and closed["expanded"] == "false", closed
        assert unexpected(visit.console_errors) == []
    finally:
        page.context.close()


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("profile", ["desktop", "phone"])
def test_an_open_deep_dive_reads_at_every_width_in_both_modes(browser, site_url, site_pages,
                                                              profile, mode):
    page, _ = open_page(browser, f"{site_url}/{CHAPTER}.html", profile=profile, color_scheme=mode)
    try:
        page.wait_for_function("document.querySelectorAll('.deep-dive .toggle-button').length >= 3",
                               timeout=TIMEOUT_MS)
        assert page.evaluate("document.documentElement.dataset.theme") == mode
        for i in range(page.locator(".admonition.deep-dive").count()):
            box = page.locator(".admonition.deep-dive").nth(i)
            box.locator(".toggle-button").click()
            page.wait_for_timeout(400)
            seen = box.evaluate(LEGIBILITY_JS)
            assert seen["left"] >= 0 and seen["right"] <= seen["width"], f"dive {i} leaves the screen {seen}"
            assert seen["pageWidth"] <= seen["width"], f"dive {i} widens the page {seen}"
            assert seen["proseSize"] >= 14 and seen["titleSize"] >= 14, seen
            prose = box.locator("p").first
            title = box.locator(".admonition-title")
            for what, ink, element in (("prose", seen["proseInk"], prose),
                                       ("title", seen["titleInk"], title)):
                behind = element.evaluate(SEEN_BACKGROUND_JS)
                assert _contrast(ink, behind) >= 4.5, f"dive {i} {what}: {ink} on {behind}"
            if i == 0:
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                box.screenshot(path=SCREENSHOTS / f"{CHAPTER.replace('/', '__')}-deep-dive-"
                                                  f"{profile}-{mode}.png")
    finally:
        page.context.close()
