"""Sphinx extension: the search page shows prose around each match, with its formulas typeset.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. Adds ``assets/search-snippets.js``
(deferred) to ``search.html`` only; the other pages no longer load Sphinx's search scripts at all
(``book/lean_site.py``): their search box is a form that opens this page.
"""

from __future__ import annotations


def add_snippet_script(app, pagename, templatename, context, doctree) -> None:
    if pagename == "search":
        app.add_js_file("search-snippets.js", defer="defer")


def setup(app):
    app.connect("html-page-context", add_snippet_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
