"""The API reference in the built site: every public name has its entry, chapters and entries link
to each other (followed in Chromium, on a desktop and on a phone), and every reference page reads on
a 1280 px desktop and a 390 px phone, light and dark: nothing scrolls the page sideways, signatures
wrap inside the column, their type stays at least 12 px, and text keeps 4.5:1 contrast.

``book/api_links.py`` makes the links; ``tests/book/test_api_pages.py`` checks the pages' sources.
"""

from __future__ import annotations

import importlib
import re
from html.parser import HTMLParser

import pytest

from book import api_links
from book.api_pages import own_names
from tests.browser.test_accessibility import BACKGROUND_JS
from tests.browser.test_head_view import _contrast
from tests.browser.test_pages import PROFILES, open_page, unexpected

pytestmark = pytest.mark.browser


class _Anchors(HTMLParser):
    """Element ids, and the API links (href, title) of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.api_links: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and "mha-api-link" in (attrs.get("class") or "").split():
            self.api_links.append((attrs.get("href", ""), attrs.get("title", "")))


def _parse(path) -> _Anchors:
    parser = _Anchors()
    parser.feed(path.read_text(encoding="utf8"))
    return parser


def test_every_public_name_has_its_entry(site_pages):
    ids = set().union(*(_parse(path).ids for name, path in site_pages.items() if name.startswith("api/")))
    expected = {f"{module}.{name}" for module in api_links.documented_modules()
                for name in own_names(importlib.import_module(module))}
    assert len(expected) > 250
    assert sorted(expected - ids) == []


def test_no_entry_shows_a_builtin_type_s_docstring(site_pages):
    """A constant without its own doc comment shows its value, not what tuple or str is."""
    import html

    builtin_docs = [html.escape(t.__doc__.split("\n")[0].split("'")[0], quote=False)  # no smartquotes
                    for t in (tuple, str, int, float, dict, list, frozenset, bool)]
    shown = [(docname, doc) for docname, path in site_pages.items() if docname.startswith("api/")
             for doc in builtin_docs if doc in path.read_text(encoding="utf8")]
    assert shown == []


def test_every_link_from_a_chapter_reaches_its_entry(site, site_pages):
    followed = 0
    for docname, path in site_pages.items():
        for href, title in _parse(path).api_links:
            page, _, anchor = href.partition("#")
            target = (path.parent / page).resolve()
            assert anchor == title or anchor == f"module-{title}", (docname, href, title)
            assert anchor in _parse(target).ids, f"{docname} links {href}, which has no such entry"
            followed += 1
    assert followed > 80  # the chapters name the package's functions often


def test_each_chapter_links_a_name_once(site_pages):
    for docname, path in site_pages.items():
        if docname.startswith("chapters/"):
            titles = [title for _, title in _parse(path).api_links]
            assert len(titles) == len(set(titles)), f"{docname} links a name twice"


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_chapter_and_its_entries_lead_to_each_other(browser, site_url, site_pages, profile):
    page, visit = open_page(browser, f"{site_url}/chapters/efficient_attention.html", profile=profile)
    try:
        link = page.locator('a.mha-api-link[title="mha.efficient.chunked_attention"]')
        assert link.count() == 1
        link.scroll_into_view_if_needed()
        link.tap() if profile == "phone" else link.click()
        page.wait_for_url(re.compile(r"/api/efficient\.html#mha\.efficient\.chunked_attention$"))
        entry = page.locator('[id="mha.efficient.chunked_attention"]')
        in_view = ("el => { const r = el.getBoundingClientRect(); "
                   "return r.top >= 0 && r.top < innerHeight; }")
        page.wait_for_function(in_view, arg=entry.element_handle())
        width = page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= page.viewport_size["width"], "the entry's page scrolls sideways"
        entry_block = page.locator("dl.py.function").filter(has=entry)
        back = entry_block.get_by_role("link", name="Efficient attention")
        assert back.count() == 1, "the entry says which chapter teaches it"
        back.first.click()
        page.wait_for_url(re.compile(r"/chapters/efficient_attention\.html$"))
    finally:
        page.context.close()
    assert unexpected(visit.console_errors) == []


#: The two widths the reference is read at (the phone is the PHONE profile's 390 px).
WIDTHS = {"desktop": 1280, "phone": 390}

#: Per reference page: how far past the article column (px) the page, any signature or any example
#: reaches, signatures that scroll inside their own box, and the smallest signature type (px).
LAYOUT_JS = """() => {
  const column = document.querySelector("article.bd-article").getBoundingClientRect();
  const shown = (el) => el.getBoundingClientRect().width > 0;
  const sigs = [...document.querySelectorAll("dl.py > dt.sig")].filter(shown);
  const boxes = [...sigs, ...document.querySelectorAll("dl.py div.highlight, .bd-article h1")]
    .filter(shown);
  const past = boxes
    .map((el) => [(el.id || el.textContent).trim().slice(0, 60),
                  Math.round(el.getBoundingClientRect().right - column.right)])
    .filter(([, right]) => right > 1);
  const scrolling = sigs.filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.id);
  const sizes = sigs.flatMap((el) => [...el.querySelectorAll("span.pre")])
    .map((el) => parseFloat(getComputedStyle(el).fontSize));
  return {page: document.scrollingElement.scrollWidth, past, scrolling, sigs: sigs.length,
          smallest: Math.min(...sizes)};
}"""

#: Text colour and the background it sits on, for the first visible sample of each kind of text in
#: an entry: its name, a parameter, its prose, a parameter's description, the link to its chapter.
SAMPLES = {"name": "dt.sig .sig-name", "parameter": "dt.sig .sig-param",
           "prose": "dl.py > dd > p", "field": "dl.py dl.field-list li p",
           "chapter link": "dl.py > dd > p a.reference.internal"}


def _colours(page, selector: str) -> tuple[str, str] | None:
    sample = page.locator(f"article.bd-article {selector}").filter(visible=True).first
    if sample.count() == 0:
        return None
    return sample.evaluate("el => getComputedStyle(el).color"), sample.evaluate(BACKGROUND_JS)


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("profile", list(WIDTHS))
def test_every_reference_page_reads_at_both_widths(browser, site_url, site_pages, profile, mode):
    pages = [docname for docname in site_pages if docname.startswith("api/")]
    assert len(pages) > 15
    page, visit = open_page(browser, f"{site_url}/{pages[0]}.html", profile=profile,
                            color_scheme=mode)  # fmt: skip
    width = WIDTHS[profile]
    page.set_viewport_size({"width": width, "height": page.viewport_size["height"]})
    signatures, contrasts = 0, []
    try:
        for docname in pages:
            page.goto(f"{site_url}/{docname}.html", wait_until="load")
            assert page.evaluate("document.documentElement.dataset.theme") == mode
            layout = page.evaluate(LAYOUT_JS)
            assert layout["page"] <= width, f"{docname} ({profile}) scrolls sideways"
            assert layout["past"] == [], f"{docname} ({profile}): wider than the column"
            assert layout["scrolling"] == [], f"{docname} ({profile}): signatures scroll, not wrap"
            if layout["sigs"]:
                assert layout["smallest"] >= 12, f"{docname} ({profile}): signature type too small"
            signatures += layout["sigs"]
            for kind, selector in SAMPLES.items():
                colours = _colours(page, selector)
                if colours is not None:
                    contrasts.append((docname, kind, round(_contrast(*colours), 2), *colours))
    finally:
        page.context.close()
    assert signatures > 250  # every page was laid out with its entries, not just its title
    assert [c for c in contrasts if c[2] < 4.5] == []
    assert {kind for _, kind, *_ in contrasts} == set(SAMPLES)
    assert unexpected(visit.console_errors) == []
    # A request the next page's goto cuts off is aborted (under load, a font still loading); what
    # must not happen is a file the site lacks (an HTTP error) or a request to another host.
    assert [failure for failure in visit.failed if failure[:3].isdigit()] == []
    assert visit.foreign == []
