"""Sphinx extension: the search page shows prose around each match, names glossary hits by their term,
and ranks the chapter that teaches a term right after the term's definition.

Adds ``assets/search-snippets.js`` (deferred) to ``search.html`` only, with the glossary it needs: for
every term of a ``glossary`` directive, its name, its anchor and the chapters its definition links to
with ``{doc}`` ("See {doc}`chapters/efficient_attention`": the chapters where the term is built), or
else the first page that links the term.
Sphinx's search shows every glossary hit under the page's title ("Glossary"); the script titles it
"Glossary > KV cache" and, when the query is a term, ranks its definition first and those chapters
next, above the API entries and the chapters that only mention it. The other pages load no search
script at all (``templates/layout.html``): their search box is a form that opens this page.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util import docname_join

from book.toc import toc_docnames


def glossary_entries(doctree, docname: str) -> list[dict]:
    """Every term of the glossaries in ``doctree``: name, anchor, and the pages its definition links to."""
    entries = []
    for glossary in doctree.findall(addnodes.glossary):
        for item in glossary.findall(nodes.definition_list_item):
            definitions = list(item.findall(nodes.definition))
            links = [docname_join(docname, xref["reftarget"]) for definition in definitions
                     for xref in definition.findall(addnodes.pending_xref) if xref.get("reftype") == "doc"]
            for term in item.findall(nodes.term):
                if not term["ids"]:
                    raise ValueError(f"{docname}: glossary term {term.astext()!r} has no anchor")
                entries.append({"name": term.astext(), "page": docname, "anchor": f"#{term['ids'][0]}",
                                "chapters": list(dict.fromkeys(links))})  # fmt: skip
    return entries


def note_glossary(app, doctree) -> None:
    """Keep each page's glossary entries, and the terms it links with ``{term}``."""
    env, docname = app.env, app.env.docname
    entries = glossary_entries(doctree, docname)
    if entries:
        env.mha_glossary = {**getattr(env, "mha_glossary", {}), docname: entries}
    linked = {xref["reftarget"].lower() for xref in doctree.findall(addnodes.pending_xref)
              if xref.get("reftype") == "term"}  # fmt: skip
    env.mha_term_links = {**getattr(env, "mha_term_links", {}), docname: linked}


def purge_glossary(app, env, docname) -> None:
    for key in ("mha_glossary", "mha_term_links"):
        getattr(env, key, {}).pop(docname, None)


def merge_glossary(app, env, docnames, other) -> None:
    for key in ("mha_glossary", "mha_term_links"):
        setattr(env, key, {**getattr(env, key, {}), **getattr(other, key, {})})


def search_terms(env, book_order: list[str]) -> dict[str, dict]:
    """``term (lower case) -> entry`` for the search page. An entry whose definition names no chapter
    gets the first page, in book order, that links the term: where the reader meets it."""
    links = getattr(env, "mha_term_links", {})
    terms = {}
    for entries in getattr(env, "mha_glossary", {}).values():
        for entry in entries:
            key = entry["name"].lower()
            if not entry["chapters"]:
                pages = [doc for doc in book_order if doc != entry["page"] and key in links.get(doc, ())]
                entry = {**entry, "chapters": pages[:1]}
            terms[key] = entry
    return terms


def add_search_script(app, pagename, templatename, context, doctree) -> None:
    if pagename != "search":
        return
    terms = search_terms(app.env, toc_docnames(Path(app.srcdir)))
    if not terms:
        raise RuntimeError("no glossary term reached the search page: did the glossary directive change?")
    data = json.dumps(terms, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    app.add_js_file(None, body=f"window.mhaGlossary={data};")
    app.add_js_file("search-snippets.js", defer="defer")


def setup(app):
    app.connect("doctree-read", note_glossary)
    app.connect("env-purge-doc", purge_glossary)
    app.connect("env-merge-info", merge_glossary)
    app.connect("html-page-context", add_search_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
