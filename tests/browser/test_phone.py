"""What a reader needs on a phone (390x844, touch) and a desktop: navigation, the column, weight.

- The visible sidebar buttons work: on a phone the menu button opens the chapter list and
  "Contents" the page's sections; on a desktop the menu button folds the sidebar away.
- Nothing is wider than the text column: display equations, figures, widget frames; on a desktop
  tables too (long identifiers in them break at their punctuation), while a phone keeps identifiers
  whole and lets a table scroll, and stacks the rows of a table of prose.
- Clicking a folded solution's title opens it; JupyterLite says so when its Python cannot load.
- On a touch screen, a figure shown far below its own size (the multi-head diagram) has a line
  saying a tap opens it full size, readable in light and dark mode; a desktop shows none.
- A first visit to each page stays within its weight budget (gzip bytes of every file it loads).
"""

from __future__ import annotations

import pytest

from book.site_weight import first_visit
from tests.browser.conftest import toc_docnames
from tests.browser.test_accessibility import BACKGROUND_JS
from tests.browser.test_head_view import _contrast
from tests.browser.test_pages import PROFILES, open_page, unexpected, wait_for_math, wait_for_widgets

pytestmark = pytest.mark.browser

#: Gzip kB a first visit may load from the site's shared files (scripts, styles, fonts: everything
#: but the page's own HTML and figures). Measured: 1.13-1.61 MB on widget pages (the widget manager
#: is 0.46 MB of it, MathJax and its fonts up to 0.4 MB, the theme's icon fonts 0.27 MB), 0.46-0.83 MB
#: on text pages; before this budget, 2.2-2.4 MB and 0.88 MB.
SHARED_BUDGET_KB = {"widgets": 1_700, "text": 900}
#: Gzip kB of a whole first visit, the page's HTML (embedded widget frames) and figures included.
FIRST_VISIT_BUDGET_KB = 4_000

CHAPTER = "chapters/multi_head"  # a chapter with sections, equations, figures and a solution


def _load(browser, site_url, site_pages, docname, profile, mode="light"):
    html = site_pages[docname].read_text(encoding="utf8")
    page, visit = open_page(browser, f"{site_url}/{docname}.html", profile=profile, color_scheme=mode)
    wait_for_math(page, html)
    wait_for_widgets(page, html)
    page.wait_for_timeout(300)  # equations are fitted once MathJax is done
    return page, visit


def test_phone_menu_button_opens_the_chapter_list(browser, site_url, site_pages):
    page, visit = _load(browser, site_url, site_pages, CHAPTER, "phone")
    try:
        button = page.locator(".primary-toggle").filter(visible=True)
        assert button.count() == 1, "one visible menu button on a phone"
        button.tap()
        dialog = page.locator("#pst-primary-sidebar-modal")
        dialog.wait_for(state="visible", timeout=3_000)
        assert dialog.get_by_role("link", name="Run it on your computer").is_visible()
        page.keyboard.press("Escape")
        dialog.wait_for(state="hidden", timeout=3_000)
    finally:
        page.context.close()
    assert unexpected(visit.console_errors) == []


def test_phone_contents_button_opens_the_page_sections(browser, site_url, site_pages):
    page, _ = _load(browser, site_url, site_pages, CHAPTER, "phone")
    try:
        button = page.locator(".secondary-toggle").filter(visible=True)
        assert button.count() == 1, "one visible 'Contents' button on a phone"
        button.tap()
        dialog = page.locator("#pst-secondary-sidebar-modal")
        dialog.wait_for(state="visible", timeout=3_000)
        assert dialog.locator("nav a").count() > 2
        section = dialog.locator("nav a").filter(visible=True).nth(1)
        target = section.get_attribute("href")
        section.tap()
        dialog.wait_for(state="hidden", timeout=3_000)  # the drawer no longer covers the section
        assert page.evaluate("location.hash") == target
        heading_top = page.evaluate(f"document.getElementById({target[1:]!r}).getBoundingClientRect().top")
        assert 0 <= heading_top < page.viewport_size["height"] / 2, "the chosen section is in view"
    finally:
        page.context.close()


def test_desktop_menu_button_folds_the_sidebar(browser, site_url, site_pages):
    page, _ = _load(browser, site_url, site_pages, CHAPTER, "desktop")
    try:
        sidebar = page.locator("#pst-primary-sidebar")
        assert sidebar.is_visible()
        page.locator(".primary-toggle").filter(visible=True).click()
        sidebar.wait_for(state="hidden", timeout=3_000)
        page.locator(".primary-toggle").filter(visible=True).click()
        sidebar.wait_for(state="visible", timeout=3_000)
    finally:
        page.context.close()


#: Right edge of every display equation's box, figure and widget frame minus the column's, in px (an
#: equation too wide even at its smallest scale scrolls inside its box).
OVERFLOW_JS = """() => {
  const column = document.querySelector("article.bd-article").getBoundingClientRect();
  const items = [
    ...document.querySelectorAll('mjx-container[display="true"]'),
    ...document.querySelectorAll(".cell_output img, img.widget-image, figure img"),
  ];
  return items
    .filter((el) => el.getBoundingClientRect().width > 0)
    .map((el) => {
      const box = el.getBoundingClientRect();
      const what = el.tagName === "IMG" ? (el.alt || el.src).slice(0, 60) : el.textContent.slice(0, 60);
      return [what, Math.round(box.left - column.left), Math.round(box.right - column.right)];
    })
    .filter(([, left, right]) => left < -1 || right > 1);
}"""


#: Tables whose content is wider than their box (they scroll inside the column), with the width of
#: each and whether a long identifier in them was allowed to break.
WIDE_TABLES_JS = """() => [...document.querySelectorAll('.bd-article table')]
  .filter((t) => t.getBoundingClientRect().width > 0 && t.scrollWidth > t.clientWidth + 1)
  .map((t) => [(t.querySelector('th, td') || t).textContent.trim().slice(0, 30), t.scrollWidth,
               t.clientWidth])"""
#: For each long identifier in a table: its text, and the number of lines it is set on (1 if it
#: kept whole; its pieces between <wbr> each have a box, so boxes are counted by their top edge).
CODE_LINES_JS = """() => [...document.querySelectorAll('.bd-article table code span.pre')]
  .filter((s) => s.textContent.length > 16 && s.getClientRects().length > 0)
  .map((s) => [s.textContent, new Set([...s.getClientRects()].map((r) => Math.round(r.top))).size])"""


#: Long descriptions in table cells: the text's start, the cell's width and the table's, and how
#: its row is laid out (a table row, or a block stacked under its title).
PROSE_CELLS_JS = """() => [...document.querySelectorAll('.bd-article table td')]
  .filter((td) => td.textContent.trim().length > 80 && td.getBoundingClientRect().width > 0)
  .map((td) => [td.textContent.trim().slice(0, 30), Math.round(td.getBoundingClientRect().width),
                Math.round(td.closest('table').getBoundingClientRect().width),
                getComputedStyle(td.closest('tr')).display,
                td.closest('table').querySelectorAll('thead th').length])"""


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", toc_docnames())
def test_equations_and_figures_fit_the_column(browser, site_url, site_pages, docname, profile):
    page, _ = _load(browser, site_url, site_pages, docname, profile)
    try:
        assert page.evaluate(OVERFLOW_JS) == [], f"{docname} ({profile}): wider than the column"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= page.viewport_size["width"], f"{docname} ({profile}) scrolls sideways"
        if profile == "desktop":  # tables fit: long identifiers break at their punctuation
            assert page.evaluate(WIDE_TABLES_JS) == [], f"{docname}: a table scrolls inside the column"
        else:  # a phone keeps identifiers whole; tables scroll instead
            codes = page.evaluate(CODE_LINES_JS)
            assert all(lines == 1 for _, lines in codes), codes
        # a table of prose (two to four columns) stacks its rows on a phone, stays a table on a desktop
        cells = [cell for cell in page.evaluate(PROSE_CELLS_JS) if 2 <= cell[4] <= 4]
        for text, cell_width, table, display, _ in cells:
            if profile == "phone":  # a description gets the column's width, not 100-140 px of it
                assert display == "block" and cell_width >= 0.9 * table, (docname, text, cell_width,
                                                                           table)
            else:
                assert display == "table-row", (docname, text, display)
    finally:
        page.context.close()


#: Display equations whose type is smaller than 12 px, or that are wider than their box without a way
#: to scroll or without the shade that says there is more.
SMALL_MATH_JS = """() => [...document.querySelectorAll('mjx-container[display="true"]')]
  .filter((c) => c.getBoundingClientRect().width > 0)
  .map((c) => [c.textContent.slice(0, 40), parseFloat(getComputedStyle(c).fontSize),
               c.scrollWidth > c.clientWidth + 1 && (getComputedStyle(c).overflowX !== 'auto'
                                                      || !c.classList.contains('mha-scrolls'))])
  .filter(([, size, cut]) => size < 12 || cut)"""


@pytest.mark.parametrize("docname", toc_docnames())
def test_equations_stay_readable_on_a_phone(browser, site_url, site_pages, docname):
    page, _ = _load(browser, site_url, site_pages, docname, "phone")
    try:
        assert page.evaluate(SMALL_MATH_JS) == [], f"{docname}: equations too small or cut off"
    finally:
        page.context.close()


@pytest.mark.parametrize("profile", PROFILES)
def test_a_solution_opens_from_its_title(browser, site_url, site_pages, profile):
    page, _ = _load(browser, site_url, site_pages, CHAPTER, profile)
    try:
        solution = page.locator(".solution.toggle").first
        body = solution.locator("section, .admonition-title ~ *").first
        title = solution.locator(".admonition-title")
        title.scroll_into_view_if_needed()
        url = page.url
        assert not body.is_visible()
        title.get_by_text("Solution to").first.tap() if profile == "phone" else (
            title.get_by_text("Solution to").first.click())
        body.wait_for(state="visible", timeout=3_000)
        assert page.url == url, "the title's link jumped away instead of opening the solution"
    finally:
        page.context.close()


def test_jupyterlite_explains_when_its_python_cannot_load(browser, site_url, site_pages):
    """Offline (the browser tests block every other host), the launch says what failed."""
    page, _ = _load(browser, site_url, site_pages, CHAPTER, "desktop")
    try:
        link = page.locator('a[href*="lite/notebooks/"]').first
        link.evaluate("a => a.click()")  # the entry sits in the launch menu
        dialog = page.locator("dialog.mha-lite-failed")
        dialog.wait_for(state="visible", timeout=15_000)
        assert "cdn.jsdelivr.net" in dialog.inner_text()
        assert dialog.get_by_role("link", name="Run it on your computer").is_visible()
        assert "/lite/" not in page.url
    finally:
        page.context.close()


@pytest.mark.parametrize("docname", toc_docnames())
def test_first_visit_stays_within_the_weight_budget(browser, site_url, site_pages, docname):
    page_url = f"{site_url}/{docname}.html"
    visit = first_visit(browser, page_url)
    html = site_pages[docname].read_text(encoding="utf8")
    kind = "widgets" if "application/vnd.jupyter.widget-state+json" in html else "text"
    shared = sum(packed for url, (_, packed) in visit.files.items()
                 if url != page_url and "/_images/" not in url)  # fmt: skip
    largest = ", ".join(f"{name} {packed / 1e3:.0f} kB" for name, _, packed in visit.largest())
    assert shared <= SHARED_BUDGET_KB[kind] * 1e3, (
        f"{docname}: {shared / 1e3:.0f} kB gzip of shared files, over the {kind} page budget of "
        f"{SHARED_BUDGET_KB[kind]} kB; largest files: {largest}"
    )
    assert visit.gzip <= FIRST_VISIT_BUDGET_KB * 1e3, (
        f"{docname}: a first visit loads {visit.gzip / 1e3:.0f} kB gzip ({visit.raw / 1e3:.0f} kB "
        f"raw), over the {FIRST_VISIT_BUDGET_KB} kB budget; largest: {largest}"
    )


#: For each figure shown: whether a visible "tap" line follows it (after the image, or at the end of
#: its widget), and the width shown over the image's own width.
HINTS_JS = """() => [...document.querySelectorAll('.cell_output img, img.widget-image')]
  .filter((img) => img.getBoundingClientRect().width > 0)
  .map((img) => {
    const widget = img.closest('.widget-subarea');
    const hint = widget ? widget.querySelector(':scope > .mha-enlarge-hint') : img.nextElementSibling;
    const shown = hint && hint.classList.contains('mha-enlarge-hint') && hint.getClientRects().length > 0;
    return {alt: (img.alt || '').slice(0, 50), scale: img.getBoundingClientRect().width / img.naturalWidth,
            shown: !!shown};
  })"""


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("profile", PROFILES)
def test_a_touch_screen_says_that_a_shrunk_figure_opens_full_size(browser, site_url, site_pages,
                                                                   profile, mode):
    """On a phone the multi-head diagram's labels are 5 px and nothing showed that a tap enlarges it."""
    page, _ = _load(browser, site_url, site_pages, CHAPTER, profile, mode)
    try:
        page.wait_for_timeout(500)  # the lines follow the frames' loads
        figures = page.evaluate(HINTS_JS)
        diagrams = [f for f in figures if f["alt"].startswith("Diagram of multi-head attention")]
        assert len(diagrams) == 2, "the diagram and its explorer's frame"
        if profile == "desktop":  # a mouse shows a zoom-in cursor instead
            assert not any(f["shown"] for f in figures)
            return
        assert all(f["shown"] for f in diagrams)
        assert all(f["shown"] == (f["scale"] < 0.6) for f in figures), figures
        assert any(not f["shown"] for f in figures), "a figure near its own size gets no line"
        for hint in page.locator(".mha-enlarge-hint").filter(visible=True).all():
            colour, back = hint.evaluate("h => getComputedStyle(h).color"), hint.evaluate(BACKGROUND_JS)
            assert _contrast(colour, back) >= 4.5, (colour, back)
    finally:
        page.context.close()
