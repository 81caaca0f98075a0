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
- The phone pass (390x844, touch, 3 device px a CSS px, light and dark, every page): no display
  equation cut (each is whole, or scrolls as a named, shaded Tab stop), no figure or widget frame
  with overprinted or cut text (the check each PNG records), no printed table wrapped mid-row.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlparse

import pytest

from book.site_weight import PHONE, first_visit
from tests.browser.conftest import toc_docnames
from tests.browser.test_pages import (
    PROFILES,
    open_page,
    unexpected,
    wait_for_math,
    wait_for_widgets,
    wait_until_measured,
)

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


#: Display equations whose type is smaller than 12 px.
SMALL_MATH_JS = """() => [...document.querySelectorAll('.bd-article .katex-display')]
  .filter((c) => c.getBoundingClientRect().width > 0)
  .map((c) => [c.querySelector('.katex-mathml annotation')?.textContent.slice(0, 60),
               parseFloat(getComputedStyle(c.querySelector('.katex')).fontSize)])
  .filter(([, size]) => size < 12)"""


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", toc_docnames())
def test_every_display_equation_stays_readable(browser, site_url, site_pages, docname, profile):
    """Scaled to fit the column, an equation never gets type under 12 px (mha-site.js stops at 80 %);
    whether each is then whole or scrolls as a reader can scroll it is the phone pass below."""
    page, _ = _load(browser, site_url, site_pages, docname, profile)
    try:
        assert page.evaluate(SMALL_MATH_JS) == [], f"{docname} ({profile}): equations too small"
    finally:
        page.context.close()


# --- The phone pass: every page, 390x844, touch, 3 device pixels a CSS px, light and dark ----------
# Nothing a reader needs is cut off: no display equation (each is whole, or the element that really
# scrolls it is a named Tab stop with a shade on the side that has more), no figure or widget frame
# with text on text or past its edge (each PNG records its own check: mha.plotting.style.save_png),
# and no printed table wrapped mid-row.

#: For each display equation: the equation's first TeX characters, how far its drawn content reaches
#: past the box that shows it (px: KaTeX's drawing is wider than its box by its scrollWidth, which
#: leaves out what KaTeX clips itself, such as a root sign's 400em-wide path), and each element inside it
#: (itself included) that scrolls sideways: its tag and class, Tab stop, role, name, and the shade on
#: its right edge.
EQUATIONS_JS = """() => [...document.querySelectorAll('.bd-article .katex-display')]
  .filter((display) => display.getBoundingClientRect().width > 0)
  .map((display) => {
    const tex = display.querySelector('.katex-mathml annotation')?.textContent.trim().slice(0, 50);
    const drawing = display.querySelector('.katex-html');
    const reach = drawing.getBoundingClientRect().left + display.scrollLeft + drawing.scrollWidth
      - (display.getBoundingClientRect().left + display.clientLeft + display.clientWidth);
    const scrollers = [display, ...display.querySelectorAll('*')]
      .filter((el) => el.scrollWidth > el.clientWidth + 1
                      && /auto|scroll/.test(getComputedStyle(el).overflowX))
      .map((el) => ({what: el.tagName + '.' + el.className, tab: el.tabIndex,
                     hidden: !!el.closest('[aria-hidden="true"]'), role: el.getAttribute('role'),
                     name: el.getAttribute('aria-label'),
                     shade: getComputedStyle(el).boxShadow}));
    return {tex, reach, scrollers};
  })"""

#: For each printed output of several lines: each line's words and how many lines it is set on.
#: Each line is measured by a Range over its own characters (whatever elements hold them). A
#: traceback (a cell that failed) is no printed table.
OUTPUT_LINES_JS = """() => [...document.querySelectorAll('.bd-article .cell_output pre')]
  .filter((pre) => pre.getBoundingClientRect().width > 0 && !pre.closest('.output.traceback'))
  .map((pre) => {
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
    const at = (offset) => {  // the text node and offset of the pre's offset-th character
      for (const node of nodes) {
        if (offset <= node.length) return [node, offset];
        offset -= node.length;
      }
      return [nodes[nodes.length - 1], nodes[nodes.length - 1].length];
    };
    const text = nodes.map((n) => n.data).join('');
    const lines = [];
    let start = 0;
    for (const line of text.replace(/\\n+$/, '').split('\\n')) {
      const range = document.createRange();
      range.setStart(...at(start));
      range.setEnd(...at(start + line.length));
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0)
        .map((r) => Math.round(r.top)));
      lines.push([line, Math.max(1, tops.size)]);
      start += line.length + 1;
    }
    return lines;
  })
  .filter((lines) => lines.length > 1)"""

#: A check's message (a tick, a cross, an error) is a sentence: it may wrap wherever it is printed.
MESSAGE = re.compile(r"^\s*(\u2714|\u2718|\u2717|[A-Za-z]*(Error|Warning|Exception)\b)")


def cut_equations(equations: list[dict]) -> list[str]:
    """What is wrong with a page's display equations (EQUATIONS_JS), in words."""
    wrong = []
    for eq in equations:
        scrollers = eq["scrollers"]
        if eq["reach"] <= 1 and not scrollers:
            continue  # whole
        if not scrollers:
            wrong.append(f"{eq['tex']!r} is cut {eq['reach']:.0f} px short and nothing scrolls it")
        for sc in scrollers:
            problems = [why for why, bad in [
                ("no Tab stop", sc["tab"] < 0), ("aria-hidden", sc["hidden"]), ("no name", not sc["name"]),
                ("no role to carry its name", not sc["role"]), ("no shade", sc["shade"] in ("", "none"))]
                if bad]
            if problems:
                wrong.append(f"{eq['tex']!r} scrolls in {sc['what']}: {', '.join(problems)}")
    names = [sc["name"] for eq in equations for sc in eq["scrollers"] if sc["name"]]
    wrong += [f"two scrolling equations are both named {name!r}" for name in set(names)
              if names.count(name) > 1]
    return wrong


def wrapped_rows(outputs: list[list]) -> list[str]:
    """The lines of printed outputs of several lines (OUTPUT_LINES_JS: tables, arrays, aligned lines)
    that a browser set on more than one line; a check's message among them may wrap."""
    return [f"{line.strip()[:50]!r} on {count} lines" for lines in outputs for line, count in lines
            if count > 1 and not MESSAGE.match(line) and line.strip()]


def overprinted_figures(page_file, shown: list[str]) -> list[str]:
    """The figures and widget frames of a page (every one the page holds, and those shown, ``shown``)
    whose PNG records text on text or past its edge, or records no check."""
    from tests.browser.test_figures import page_figures, text_check_problems

    shown_paths = {(page_file.parent / unquote(urlparse(src).path)).resolve() for src in shown}
    return text_check_problems(set(page_figures(page_file)) | shown_paths)


SHOWN_IMAGES_JS = """() => [...document.querySelectorAll('.bd-article img')]
  .map((img) => img.getAttribute('src')).filter((src) => /_images[/].*[.]png$/.test(src || ''))
  .filter((src) => !src.endsWith('-1x.png'))"""


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("docname", toc_docnames())
def test_phone_pass_nothing_cut_overprinted_or_wrapped_mid_row(browser, site_url, site_pages, docname,
                                                                mode):
    context = browser.new_context(**PHONE, color_scheme=mode)
    page = context.new_page()
    try:
        page.goto(f"{site_url}/{docname}.html", wait_until="load")
        html = site_pages[docname].read_text(encoding="utf8")
        wait_until_measured(page)
        wait_for_math(page, html)
        wait_for_widgets(page, html)
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # every section drawn
        wait_until_measured(page)
        problems = cut_equations(page.evaluate(EQUATIONS_JS))
        problems += [f"table row wrapped: {row}" for row in wrapped_rows(page.evaluate(OUTPUT_LINES_JS))]
        problems += overprinted_figures(site_pages[docname], page.evaluate(SHOWN_IMAGES_JS))
        assert problems == [], f"{docname} ({mode}, 390 px phone): {problems}"
    finally:
        context.close()


def test_the_phone_pass_sees_what_it_looks_for():
    """The judges of the phone pass on made-up measurements: a cut equation, a scroller missing each
    of its marks, two scrollers with one name, a wrapped row, and what passes."""
    whole = {"tex": "a", "reach": 0, "scrollers": []}
    cut = {"tex": "b", "reach": 40, "scrollers": []}
    good = {"what": "SPAN.katex-display", "tab": 0, "hidden": False, "role": "group",
            "name": "Equation 1 (scrolls sideways)",
            "shade": "rgba(128, 128, 128, 0.8) -14px 0px 10px -10px inset"}
    assert cut_equations([whole, {"tex": "c", "reach": 40, "scrollers": [good]}]) == []
    assert cut_equations([cut]) == ["'b' is cut 40 px short and nothing scrolls it"]
    inner = {**good, "what": "SPAN.katex-html", "tab": -1, "hidden": True, "name": None, "role": None,
             "shade": "none"}
    [message] = cut_equations([{"tex": "d", "reach": 40, "scrollers": [inner]}])
    assert all(why in message for why in ("no Tab stop", "aria-hidden", "no name", "no role", "no shade"))
    twice = cut_equations([{"tex": "e", "reach": 9, "scrollers": [good]}] * 2)
    assert twice == ["two scrolling equations are both named 'Equation 1 (scrolls sideways)'"]
    table = [["heads d_head  parameters", 1], ["    1    512   1,050,624", 2],
             ["    2    256   1,050,624", 1],
             ["\u2714 check_parameters passed: a long sentence that wraps", 3]]
    assert wrapped_rows([table]) == ["'1    512   1,050,624' on 2 lines"]
    lines = [["previous-token head: layer 0 head 3, 0.98 of its weight", 2], ["induction share: 0.9", 1]]
    assert wrapped_rows([lines]) == ["'previous-token head: layer 0 head 3, 0.98 of its w' on 2 lines"]


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
            # it looks like a link inside JupyterLab's stylesheet too: underlined, not the text's colour
            looks = link.evaluate("a => [getComputedStyle(a).textDecorationLine, getComputedStyle(a).color,"
                                  " getComputedStyle(a.closest('p')).color]")
            assert "underline" in looks[0] and looks[1] != looks[2], (name, looks)
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
