"""The smaller rewrites of the built site, on small inputs: figures, icon fonts, citations, KaTeX's
stylesheet, the search page's glossary and the lite app's guard. Each one parses what it rewrites and
stops the build when what it expects is not there."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup
from docutils import nodes
from docutils.utils import new_document
from sphinx import addnodes


def _png(path: Path, width_in: float = 2.0, height_in: float = 1.0) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mha.explorers.png import figure_to_png

    fig, ax = plt.subplots(figsize=(width_in, height_in))
    ax.plot([0, 1], [1, 0])
    path.write_bytes(figure_to_png(fig, description="A falling line"))
    plt.close(fig)
    return path


def test_figures_are_sized_sharp_and_lazy_and_other_images_untouched(tmp_path):
    from book.figures import size_page_figures

    (tmp_path / "_images").mkdir()
    _png(tmp_path / "_images" / "fig.png")
    page = tmp_path / "chapters" / "a.html"
    page.parent.mkdir()
    page.write_text('<p><img alt="x" src="../_images/fig.png"/><img src="../_static/logo.svg"/>'
                    '<img src="../_images/missing.png"/></p>')  # fmt: skip
    assert size_page_figures(page, tmp_path.resolve()) == 2
    first, logo, missing = BeautifulSoup(page.read_text(), "html.parser").find_all("img")
    assert (first["width"], first["height"], first["loading"]) == ("200", "100", "lazy")
    assert first["srcset"] == "../_images/fig-1x.png 1x, ../_images/fig.png 2x"
    assert (tmp_path / "_images" / "fig-1x.png").is_file()
    assert logo.attrs == {"src": "../_static/logo.svg"} and "width" not in missing.attrs
    before = page.read_text()
    assert size_page_figures(page, tmp_path.resolve()) == 2 and page.read_text() == before  # once only


def test_a_site_without_figures_stops_the_build(tmp_path):
    from book.figures import size_figures

    (tmp_path / "a.html").write_text("<p>no figure</p>")
    app = SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"))
    with pytest.raises(RuntimeError, match="did the markup change"):
        size_figures(app, None)


def test_icon_code_points_come_from_the_stylesheet_parsed():
    from book.icon_fonts import icon_code_points

    css = ('.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}.fa-sun::before{content:"\\f185"}'
           '.fa-x:hover{content:"x"}.bars:before{content:"y"}/* .fa-fake:before{content:"\\f000"} */')
    assert icon_code_points(css) == {"fa-bars": 0xF0C9, "fa-navicon": 0xF0C9, "fa-sun": 0xF185}


def test_the_citation_list_loses_its_list_roles_only():
    from book.citations import plain_list_markup

    body = ('<div role="list" class="citation-list"><div class="citation" id="v" role="doc-biblioentry">'
            '<span class="label">Vaswani et al. 2017</span><p role="note">x</p></div></div>')
    context = {"body": body}
    plain_list_markup(None, "references", "page.html", context, None)
    soup = BeautifulSoup(context["body"], "html.parser")
    assert soup.select("[role]") == [soup.find("p")] and soup.select_one("div.citation#v")
    with pytest.raises(RuntimeError, match="citation-list"):
        plain_list_markup(None, "x", "page.html", {"body": '<p class="not-a-citation-list">'}, None)


def test_katex_stylesheet_keeps_only_woff2_sources(tmp_path):
    from book.vendor_js import rewrite_katex_css

    css = tmp_path / "katex.css"
    css.write_text('@font-face{font-family:KaTeX_Main;src:url(fonts/M.woff2) format("woff2"),'
                   'url(fonts/M.woff) format("woff"),url(fonts/M.ttf) format("truetype")}.katex{font:1em x}')
    rewrite_katex_css(css)
    text = css.read_text()
    assert 'url(fonts/M.woff2) format("woff2")' in text and ".ttf" not in text and "M.woff)" not in text
    assert ".katex{font:1em x}" in text
    with pytest.raises(SystemExit, match="no woff/ttf fallback"):
        rewrite_katex_css(css)  # already lean: KaTeX's stylesheet is not what it was written for


def _glossary(*entries: tuple[str, list[str], list[str]]) -> nodes.document:
    doctree = new_document("glossary")
    glossary = addnodes.glossary()
    items = nodes.definition_list()
    for name, ids, docs in entries:
        definition = nodes.definition("", nodes.paragraph("", "See "))
        for doc in docs:
            definition[0] += addnodes.pending_xref("", nodes.inline("", doc), reftype="doc", reftarget=doc)
        items += nodes.definition_list_item("", nodes.term(name, name, ids=ids), definition)
    glossary += items
    doctree += glossary
    return doctree


def test_glossary_terms_name_the_chapters_their_entries_link_or_the_first_page_linking_them():
    from book.search_page import glossary_entries, search_terms

    linked = ["chapters/cost", "chapters/efficient", "chapters/cost"]
    doctree = _glossary(("KV cache", ["term-KV-cache"], linked), ("d_head", ["term-d_head"], []),
                        ("orphan", ["term-orphan"], []))
    entries = glossary_entries(doctree, "glossary")
    assert entries[0] == {"name": "KV cache", "page": "glossary", "anchor": "#term-KV-cache",
                          "chapters": ["chapters/cost", "chapters/efficient"]}  # fmt: skip
    env = SimpleNamespace(mha_glossary={"glossary": entries},
                          mha_term_links={"intro": {"d_head"}, "chapters/a": {"d_head", "kv cache"}})
    terms = search_terms(env, ["intro", "chapters/a", "glossary"])
    assert terms["d_head"]["chapters"] == ["intro"] and terms["orphan"]["chapters"] == []
    assert terms["kv cache"]["chapters"] == ["chapters/cost", "chapters/efficient"]
    with pytest.raises(ValueError, match="no anchor"):
        glossary_entries(_glossary(("lost", [], [])), "glossary")


def test_every_lite_app_page_gets_the_guard_once(tmp_path):
    from book.lite_site import guard_lite_pages

    page = tmp_path / "lite" / "notebooks" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text("<!doctype html><html><head></head><body><div id=main></div></body></html>")
    app = SimpleNamespace(outdir=str(tmp_path))
    guard_lite_pages(app, None)
    guard_lite_pages(app, None)
    scripts = BeautifulSoup(page.read_text(), "html.parser").find_all("script")
    assert [script["src"] for script in scripts] == ["../../_static/lite-guard.js"]
    assert scripts[0].parent.name == "body"
