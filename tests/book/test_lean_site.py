"""The lean site's page hooks: what a page loads before its first text."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils import nodes
from docutils.utils import new_document

from book.lean_site import THEME_SCRIPT, assets_where_used, no_whole_page_tab_stop_pass


class _Sheet:
    """Like Sphinx's stylesheet entries: a file name (with a cache-busting query) and attributes."""

    def __init__(self, filename: str):
        self.filename = filename


def _context() -> dict:
    names = ["_static/pygments.css", "_static/sphinx-design.min.css?v=6a604523", "_static/mha-site.css"]
    scripts = ["_static/doctools.js", "_static/design-tabs.js?v=1", "_static/jupyterlite_sphinx.js"]
    return {"css_files": [_Sheet(name) for name in names], "script_files": [_Sheet(name) for name in scripts]}


def _page(*children) -> nodes.document:
    doctree = new_document("page")
    doctree += nodes.paragraph("", "text", classes=["lead"])
    for child in children:
        doctree += child
    return doctree


def _names(context: dict, key: str = "css_files") -> list[str]:
    return [sheet.filename.split("?")[0].rsplit("/", 1)[-1] for sheet in context[key]]


def test_a_page_without_design_components_does_not_load_their_stylesheet():
    context = _context()
    # a class named in prose, or a literal "sd-card", is no component
    assets_where_used(None, "chapters/x", "page.html", context, _page(nodes.literal("", "sd-card")))
    assert _names(context) == ["pygments.css", "mha-site.css"]
    assert _names(context, "script_files") == ["doctools.js"]


@pytest.mark.parametrize("classes", [["sd-card"], ["sd-container-fluid", "sd-mb-4"],
                                     ["docutils", "sd-tab-set"]])
def test_a_page_that_uses_a_design_component_keeps_it(classes):
    context = _context()
    assets_where_used(None, "chapters/x", "page.html", context, _page(nodes.container(classes=classes)))
    assert "sphinx-design.min.css" in _names(context), classes


def test_a_page_with_tabs_or_an_embedded_notebook_keeps_their_scripts():
    lite = type("Iframe", (nodes.Element,), {"__module__": "jupyterlite_sphinx.jupyterlite_sphinx"})
    context = _context()
    assets_where_used(None, "chapters/x", "page.html", context, _page(nodes.container(classes=["sd-tab-set"]),
                                                                       lite()))  # fmt: skip
    assert _names(context, "script_files") == ["doctools.js", "design-tabs.js", "jupyterlite_sphinx.js"]


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


def test_the_build_stops_when_a_package_the_rewrites_read_is_another_version(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from sphinx.errors import ExtensionError

    import book.lean_site as lean_site

    lean_site.check_pins(SimpleNamespace(), None)  # this environment: installed as pinned
    pins = lean_site.pinned_versions(lean_site.TEMPLATES.parent.parent / "requirements.txt")
    assert set(lean_site.MARKUP_PACKAGES) <= set(pins)
    fake = tmp_path / "book" / "templates"
    fake.mkdir(parents=True)
    other = {**pins, "pydata-sphinx-theme": "0.18.0"}
    (tmp_path / "requirements.txt").write_text("".join(f"{name}=={pin}\n" for name, pin in other.items()))
    monkeypatch.setattr(lean_site, "TEMPLATES", fake)
    with pytest.raises(ExtensionError, match=r"pydata-sphinx-theme \S+ \(pinned 0.18.0\)"):
        lean_site.check_pins(SimpleNamespace(), None)
    (tmp_path / "requirements.txt").write_text("sphinx==7.4.7\n")
    with pytest.raises(ExtensionError, match="pins no docutils"):
        lean_site.check_pins(SimpleNamespace(), None)
