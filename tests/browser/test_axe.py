"""No barrier for a keyboard or a screen reader: axe-core on every page, and a walk with the Tab key.

- axe-core (npm, pinned in ``package.json``; ``make book`` installs it) reports no serious and no
  critical violation on any page, on a desktop (1280 px) and a phone (390 px, touch), light and dark,
  once the page's widgets are drawn; and already as the page loads, before the site's script has
  drawn every section (a phone's slower CPU).
- Tabbing through a page never stops on a formula (unless it scrolls sideways: then it is a named
  stop whose arrow keys scroll it), and every stop shows where it is: an outline or a ring that was
  not there before the element took focus.
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import ROOT, missing, toc_docnames
from tests.browser.test_pages import PROFILES, open_page, wait_for_widgets

pytestmark = pytest.mark.browser

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
MODES = ("light", "dark")
BLOCKING = {"serious", "critical"}


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.is_file():
        missing(f"{AXE} is missing: run `npm ci` (make book does)")
    return AXE.read_text(encoding="utf8")


def _violations(page, axe_source, rules: tuple[str, ...] = ()) -> list[str]:
    page.evaluate(axe_source)
    only = f"runOnly: {list(rules)!r}, " if rules else ""
    results = page.evaluate(f"axe.run(document, {{{only}resultTypes: ['violations']}})")
    return [f"{v['id']} ({v['impact']}): {len(v['nodes'])} nodes, e.g. {v['nodes'][0]['target']}"
            for v in results["violations"] if v["impact"] in BLOCKING]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", [*toc_docnames(), "search"])
def test_axe_finds_no_serious_or_critical_violation(browser, site_url, site_pages, axe_source, docname,
                                                     profile, mode):
    url = f"{site_url}/{docname}.html" + ("?q=softmax" if docname == "search" else "")
    page, _ = open_page(browser, url, profile=profile, color_scheme=mode)
    try:
        if docname in site_pages:
            wait_for_widgets(page, site_pages[docname].read_text(encoding="utf8"))
        else:
            page.wait_for_selector("#search-results li", timeout=20_000)
        page.wait_for_timeout(300)
        assert _violations(page, axe_source) == [], f"{docname} ({profile}, {mode})"
    finally:
        page.context.close()


#: The focused element: is it inside a formula, its description, and its outline / ring now.
FOCUSED_JS = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  // an equation that scrolls sideways is a Tab stop on purpose (arrow keys scroll it), named
  const scroller = el.matches('.katex-display.mha-scrolls[aria-label]');
  return {inMath: !scroller && !!el.closest('.math, .katex'), what: (el.outerHTML || '').slice(0, 90),
          outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1,
          ring: style.boxShadow !== 'none', visible: el.getBoundingClientRect().width > 0};
}"""


@pytest.mark.parametrize("docname", ["chapters/self_attention", "chapters/multi_head", "glossary"])
def test_tab_never_stops_on_a_formula_and_every_stop_is_visible(browser, site_url, site_pages, docname):
    page, _ = open_page(browser, f"{site_url}/{docname}.html")
    try:
        wait_for_widgets(page, site_pages[docname].read_text(encoding="utf8"))
        stops = []
        for _ in range(120):
            page.keyboard.press("Tab")
            focused = page.evaluate(FOCUSED_JS)
            if focused and focused["visible"]:
                stops.append(focused)
        assert len(stops) > 20
        assert [s["what"] for s in stops if s["inMath"]] == [], "a formula is a Tab stop"
        unseen = [s["what"] for s in stops if not (s["outline"] or s["ring"])]
        assert unseen == [], f"{docname}: Tab stops with no visible focus: {unseen[:5]}"
    finally:
        page.context.close()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", ["api/lab", "chapters/multi_head"])
def test_a_checker_run_as_soon_as_the_page_loads_finds_nothing(browser, site_url, axe_source, docname,
                                                              profile):
    """mha-site.js draws and measures a chapter a section per task after the page is read. A check
    run before its last turn (a phone's slower CPU, here 4x) sees the page half drawn: the sections
    not yet drawn must not read as failing contrast (their text laid over another section's code
    background), and a region that may scroll must already be a Tab stop."""
    context = browser.new_context(**PROFILES[profile])
    page = context.new_page()
    try:
        cdp = context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        page.goto(f"{site_url}/{docname}.html", wait_until="load")
        undrawn = page.evaluate(
            "document.querySelectorAll('.bd-article > section > section:not(.mha-drawn)').length")
        assert undrawn > 0, "every section was drawn before the check: nothing was tested"
        assert _violations(page, axe_source) == [], f"{docname} ({profile}), {undrawn} sections undrawn"
    finally:
        context.close()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", ["chapters/multi_head", "chapters/transformer_block"])
def test_undrawn_sections_read_right_in_dark_mode(browser, site_url, axe_source, docname, profile):
    """Before mha-site.js draws a section, a checker that measures it (laying it out at its real height)
    found a last section's heading, dark mode's light text, over the light panel of a widget in the
    section before it (1.33:1, at load, on some loads). With the site script held back, every section
    stays undrawn, every load: none may read as failing contrast (the other rules need the script)."""
    context = browser.new_context(**PROFILES[profile], color_scheme="dark")
    page = context.new_page()
    try:
        page.route("**/mha-site.js*", lambda route: route.abort())
        page.goto(f"{site_url}/{docname}.html", wait_until="load")
        drawn = page.evaluate("document.querySelectorAll('.bd-article section.mha-drawn').length")
        assert drawn == 0, "a section was drawn: the case is not tested"
        assert _violations(page, axe_source, ("color-contrast",)) == [], f"{docname} ({profile}, dark)"
    finally:
        context.close()
