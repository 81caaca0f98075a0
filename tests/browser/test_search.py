"""The search page as a reader uses it: results with a snippet of prose, formulas typeset.

Sphinx's own snippet is the page's whole text around the first match, which began with the page's
table of contents ("Contents The softmax without ...") and showed TeX; ``assets/search-snippets.js``
replaces it. These tests type nothing: they open ``search.html?q=...`` as the header's form does.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

RESULTS_JS = """() => [...document.querySelectorAll('#search-results ul.search > li')].map((li) => ({
  title: li.querySelector('a').textContent.trim(),
  href: li.querySelector('a').getAttribute('href'),
  snippet: li.querySelector('p.context')?.textContent ?? null,
  formulas: li.querySelectorAll('p.context .katex').length,
}))"""


def search(browser, site_url, query: str, profile: str = "desktop"):
    from tests.browser.test_pages import open_page

    page, visit = open_page(browser, f"{site_url}/search.html?q={query}", profile=profile)
    try:
        page.wait_for_function(
            "document.querySelector('#search-results h2') && "
            "!document.querySelector('#search-results h2').textContent.includes('Searching')",
            timeout=60_000)  # fmt: skip
        page.wait_for_timeout(500)  # snippets are fetched page by page after the list shows
        return page.evaluate(RESULTS_JS), visit
    finally:
        page.context.close()


@pytest.mark.parametrize("query", ["softmax", "causal mask", "kv cache"])
def test_snippets_are_prose_around_the_match(browser, site_url, query):
    results, visit = search(browser, site_url, query)
    assert visit.console_errors == [] and visit.failed == []
    snippets = [r for r in results if r["snippet"] is not None]
    assert len(snippets) >= 3, results[:5]
    for result in snippets:
        text = result["snippet"]
        toc = re.search(r"(^|…)\s*Contents\b", text)
        assert not toc, f"{result['title']}: a table of contents, not prose: {text[:90]}"
        assert "\\(" not in text and "\\frac" not in text and "$$" not in text, f"TeX in {text[:90]}"
        words = query.split()
        assert any(word in text.lower() for word in words) or len(text) > 40, (result["title"], text)


def test_a_glossary_result_shows_its_definition_with_the_formula_typeset(browser, site_url):
    results, _ = search(browser, site_url, "softmax")
    glossary = [r for r in results if "glossary" in r["href"] and r["href"].endswith("#term-softmax")]
    assert glossary, [r["href"] for r in results[:8]]
    (term,) = glossary
    assert term["formulas"] >= 1, term  # the definition opens with softmax's formula, as KaTeX drew it
    assert "weights" in term["snippet"], term["snippet"]
