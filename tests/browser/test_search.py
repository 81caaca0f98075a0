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


@pytest.mark.parametrize(("query", "teaching"), [
    ("KV cache", "chapters/efficient_attention"),
    ("causal mask", "chapters/self_attention"),
    ("d_head", None),  # its entry names no chapter: the first chapter that links the term
])
def test_a_term_ranks_its_definition_then_the_chapters_its_entry_names(browser, site_url, query, teaching):
    """The teaching chapter is the glossary entry's own {doc} link, read from glossary.md here too."""
    import re as regex

    from tests.browser.conftest import ROOT, toc_docnames

    if teaching is None:
        sources = {page: (ROOT / f"{page}.md").read_text(encoding="utf8") for page in toc_docnames()
                   if page != "glossary" and (ROOT / f"{page}.md").is_file()}
        teaching = next(page for page, text in sources.items()
                        if f"{{term}}`{query}`" in text or f"<{query}>`" in text)
    else:
        text = (ROOT / "glossary.md").read_text(encoding="utf8")
        entry = regex.search(rf"^{regex.escape(query)}\n((?:  .*\n)+)", text, regex.M | regex.I)
        assert entry and f"{{doc}}`{teaching}`" in entry[1], f"glossary.md's {query} names no {teaching}"
    results, _ = search(browser, site_url, query)
    pages = [r["href"].split("#")[0].removesuffix(".html") for r in results]
    first = results[0]
    assert first["title"] == f"Glossary > {query}" and "#term-" in first["href"], results[:3]
    named = [index for index, page in enumerate(pages) if page.endswith(teaching)]
    api = [index for index, page in enumerate(pages) if "/api/" in f"/{page}"]
    assert named and named[0] <= 2, (query, pages[:6])
    assert not api or named[0] < api[0], (query, pages[:6])


def test_every_glossary_hit_is_titled_by_its_own_term(browser, site_url):
    results, _ = search(browser, site_url, "kv cache")  # "KV cache" and "rolling KV cache"
    glossary = [r for r in results if "glossary" in r["href"] and "#term-" in r["href"]]
    assert len(glossary) >= 2, results[:6]
    titles = [r["title"] for r in glossary]
    assert len(set(titles)) == len(titles) and all(t.startswith("Glossary > ") and "cache" in t.lower()
                                                    for t in titles), titles  # fmt: skip
