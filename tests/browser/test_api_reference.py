"""The API reference in the built site: every public name has its entry, and chapters and entries link
to each other (followed in Chromium, on a desktop and on a phone).

``book/api_links.py`` makes the links; ``tests/book/test_api_pages.py`` checks the pages' sources.
"""

from __future__ import annotations

import importlib
import re
from html.parser import HTMLParser

import pytest

from book import api_links
from book.api_pages import own_names
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
