"""The lean site's page hooks: what a page loads before its first text."""

from __future__ import annotations

from book.lean_site import design_css_where_used


class _Sheet:
    """Like Sphinx's stylesheet entries: a file name (with a cache-busting query) and attributes."""

    def __init__(self, filename: str):
        self.filename = filename


def _context(body: str) -> dict:
    names = ["_static/pygments.css", "_static/sphinx-design.min.css?v=6a604523", "_static/mha-site.css"]
    return {"body": body, "css_files": [_Sheet(name) for name in names]}


def _names(context: dict) -> list[str]:
    return [sheet.filename.split("?")[0].rsplit("/", 1)[-1] for sheet in context["css_files"]]


def test_a_page_without_design_components_does_not_load_their_stylesheet():
    context = _context('<p class="lead">text</p><div class="cell_output">sd-card in prose</div>')
    design_css_where_used(None, "chapters/x", "page.html", context, None)
    assert _names(context) == ["pygments.css", "mha-site.css"]


def test_a_page_that_uses_a_design_component_keeps_it():
    for body in ('<div class="sd-card">', '<div class="sd-container-fluid sd-mb-4">',
                 '<div class="docutils sd-tab-set">'):
        context = _context(body)
        design_css_where_used(None, "chapters/x", "page.html", context, None)
        assert "sphinx-design.min.css" in _names(context), body
