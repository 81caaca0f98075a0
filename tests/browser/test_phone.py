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
from tests.browser.test_pages import PROFILES, open_page, unexpected, wait_for_math, wait_for_widgets

pytestmark = pytest.mark.browser

#: Gzip kB a first visit may load (issue 38): every file a page pulls in before the network is idle,
#: for a reader who does not scroll. Widgets further down load as they near the screen.
FIRST_VISIT_BUDGET_KB = {"widgets": 1_500, "text": 500}

CHAPTER = "chapters/multi_head"  # a chapter with sections, equations, figures and a solution


def _load(browser, site_url, site_pages, docname, profile, mode="light"):
    html = site_pages[docname].read_text(encoding="utf8")
    page, visit = open_page(browser, f"{site_url}/{docname}.html", profile=profile, color_scheme=mode)
    wait_for_math(page, html)
    wait_for_widgets(page, html)  # and mha-site.js has fitted the equations (wait_until_measured)
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
    ...document.querySelectorAll(".bd-article .katex-display"),
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


#: Display equations whose type is smaller than 12 px, or that are wider than their box (cut: the
#: reader would have to scroll to see all of it).
SMALL_MATH_JS = """() => [...document.querySelectorAll('.bd-article .katex-display')]
  .filter((c) => c.getBoundingClientRect().width > 0)
  .map((c) => [c.querySelector('.katex-mathml annotation')?.textContent.slice(0, 60),
               parseFloat(getComputedStyle(c.querySelector('.katex')).fontSize),
               c.scrollWidth - c.clientWidth])
  .filter(([, size, cut]) => size < 12 || cut > 1)"""


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", toc_docnames())
def test_every_display_equation_fits_and_stays_readable(browser, site_url, site_pages, docname, profile):
    """On a 390-px phone too: long formulas are written over aligned lines in the chapters."""
    page, _ = _load(browser, site_url, site_pages, docname, profile)
    try:
        assert page.evaluate(SMALL_MATH_JS) == [], f"{docname} ({profile}): equations too small or cut"
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


def _lite_dialog(page):
    dialog = page.locator("dialog.mha-lite-failed")
    dialog.wait_for(state="visible", timeout=20_000)
    assert "cdn.jsdelivr.net" in dialog.inner_text()
    return dialog


@pytest.mark.parametrize("way", ["click", "new tab or bookmark"])
def test_jupyterlite_explains_when_its_python_cannot_load(browser, site_url, site_pages, way):
    """Offline (the browser tests block every other host), the live notebook says what failed,
    however it was opened: the launch menu's link, or its address in a new tab or a bookmark."""
    if way == "click":
        page, _ = _load(browser, site_url, site_pages, CHAPTER, "desktop")
        link = page.locator('a[href*="lite/notebooks/"]').first
        if link.get_attribute("target") == "_blank":  # the launch menu opens it in a new tab
            with page.context.expect_page() as opened:
                link.evaluate("a => a.click()")
            page = opened.value
        else:
            link.evaluate("a => a.click()")  # the entry sits in the launch menu
    else:
        page, _ = open_page(browser, f"{site_url}/lite/notebooks/index.html?path={CHAPTER}.ipynb")
    try:
        dialog = _lite_dialog(page)
        for name, target in [("Run it on your computer", "chapters/run_locally.html"),
                             ("download this notebook (.ipynb)", f"_sources/{CHAPTER}.ipynb"),
                             ("Back to the book", f"{CHAPTER}.html")]:
            link = dialog.get_by_role("link", name=name)
            assert link.is_visible(), name
            href = link.evaluate("a => a.href")
            assert href == f"{site_url}/{target}", (name, href)
            response = page.request.get(href)
            assert response.ok, (name, href, response.status)
    finally:
        page.context.close()


@pytest.mark.parametrize("docname", toc_docnames())
def test_first_visit_stays_within_the_weight_budget(browser, site_url, site_pages, docname):
    visit = first_visit(browser, f"{site_url}/{docname}.html")
    html = site_pages[docname].read_text(encoding="utf8")
    kind = "widgets" if "application/vnd.jupyter.widget-state+json" in html else "text"
    largest = ", ".join(f"{name} {packed / 1e3:.0f} kB" for name, _, packed in visit.largest())
    assert visit.gzip <= FIRST_VISIT_BUDGET_KB[kind] * 1e3, (
        f"{docname}: a first visit loads {visit.gzip / 1e3:.0f} kB gzip ({visit.raw / 1e3:.0f} kB "
        f"raw), over the {kind} page budget of {FIRST_VISIT_BUDGET_KB[kind]} kB; largest: {largest}"
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
def test_figures_need_no_tap_to_be_read(browser, site_url, site_pages, profile, mode):
    """Figures are drawn for the column (mha.plotting.style): on a phone none is shrunk below 0.6 of
    its own size, so none needs the "tap to see it full size" line (which still appears for a figure
    that is, on a touch screen only). The multi-head diagram was the worst: labels of 5 px."""
    page, _ = _load(browser, site_url, site_pages, CHAPTER, profile, mode)
    try:
        page.evaluate("""async () => {
          document.querySelectorAll('img[loading="lazy"]').forEach((img) => { img.loading = 'eager'; });
          await Promise.all([...document.images].map((img) => img.decode().catch(() => null)));
        }""")
        page.wait_for_timeout(300)  # the lines follow the frames' loads
        figures = page.evaluate(HINTS_JS)
        diagrams = [f for f in figures if f["alt"].startswith("Diagram of multi-head attention")]
        assert len(diagrams) == 2, "the diagram and its explorer's frame"
        assert all(f["scale"] >= 0.6 for f in figures), [f for f in figures if f["scale"] < 0.6]
        assert not any(f["shown"] for f in figures), "a figure drawn for the column says to tap it"
    finally:
        page.context.close()
