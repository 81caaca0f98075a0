"""The lean site's page hooks: what a page loads before its first text."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from book.lean_site import THEME_SCRIPT, assets_where_used, no_whole_page_tab_stop_pass


class _Sheet:
    """Like Sphinx's stylesheet entries: a file name (with a cache-busting query) and attributes."""

    def __init__(self, filename: str):
        self.filename = filename


def _context(body: str) -> dict:
    names = ["_static/pygments.css", "_static/sphinx-design.min.css?v=6a604523", "_static/mha-site.css"]
    scripts = ["_static/doctools.js", "_static/design-tabs.js?v=1", "_static/jupyterlite_sphinx.js"]
    return {"body": body, "css_files": [_Sheet(name) for name in names],
            "script_files": [_Sheet(name) for name in scripts]}


def _scripts(context: dict) -> list[str]:
    return [sheet.filename.split("?")[0].rsplit("/", 1)[-1] for sheet in context["script_files"]]


def _names(context: dict) -> list[str]:
    return [sheet.filename.split("?")[0].rsplit("/", 1)[-1] for sheet in context["css_files"]]


def test_a_page_without_design_components_does_not_load_their_stylesheet():
    context = _context('<p class="lead">text</p><div class="cell_output">sd-card in prose</div>')
    assets_where_used(None, "chapters/x", "page.html", context, None)
    assert _names(context) == ["pygments.css", "mha-site.css"]
    assert _scripts(context) == ["doctools.js"]


def test_a_page_that_uses_a_design_component_keeps_it():
    for body in ('<div class="sd-card">', '<div class="sd-container-fluid sd-mb-4">',
                 '<div class="docutils sd-tab-set">'):
        context = _context(body)
        assets_where_used(None, "chapters/x", "page.html", context, None)
        assert "sphinx-design.min.css" in _names(context), body


def test_a_page_with_tabs_or_an_embedded_notebook_keeps_their_scripts():
    context = _context('<div class="sd-tab-set"><div class="jupyterlite_sphinx_iframe_container">')
    assets_where_used(None, "chapters/x", "page.html", context, None)
    assert _scripts(context) == ["doctools.js", "design-tabs.js", "jupyterlite_sphinx.js"]


def _theme_script() -> str:
    """The pinned pydata-sphinx-theme's built script, as Sphinx copies it into ``_static``."""
    import pydata_sphinx_theme

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"
    return (theme / "scripts" / THEME_SCRIPT.name).read_text(encoding="utf8")


def _built(tmp_path: Path, text: str) -> SimpleNamespace:
    script = tmp_path / THEME_SCRIPT
    script.parent.mkdir(parents=True)
    script.write_text(text, encoding="utf8")
    return SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"))


def test_the_theme_script_loses_only_its_whole_page_tab_stop_call(tmp_path):
    original = _theme_script()
    app = _built(tmp_path, original)
    no_whole_page_tab_stop_pass(app, None)
    patched = (tmp_path / THEME_SCRIPT).read_text(encoding="utf8")
    assert 'addEventListener("load"' in original and 'addEventListener("load"' not in patched
    assert 'scrollWidth>e.clientWidth' in patched  # the pass itself is left, only never called
    assert len(original) - len(patched) < 80  # nothing else of the theme went
    assert patched.count("addEventListener(") == original.count("addEventListener(") - 1


def test_a_theme_script_without_that_call_stops_the_build(tmp_path):
    app = _built(tmp_path, "(()=>{console.log('another version')})();")
    with pytest.raises(RuntimeError, match="tab-stop call once, found it 0 times"):
        no_whole_page_tab_stop_pass(app, None)
