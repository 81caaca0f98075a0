"""Sphinx extension: keep what a first visit downloads small.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. ``templates/layout.html`` extends the
theme's page (pydata-sphinx-theme 0.17.1, pinned in requirements.txt) and leaves out what its ``<head>``
loads before any text can paint and this book does not use: the icon script ``fontawesome.js`` (every
Font Awesome icon as SVG; the theme's stylesheet already draws its icons from the web fonts) and
Sphinx's three search scripts (the header's box is a form that opens ``search.html``, which loads
them itself).

At ``html-page-context`` it leaves out the files of extensions a page does not use (sphinx-design's
components, jupyterlite-sphinx's embedded notebooks: the chapters use neither, their JupyterLite link
is the launch menu's), judged from the page's doctree.

When the build is done it takes the call of the theme's whole-page tab-stop pass out of its built
script (``assets/mha-site.js`` does that job a section at a time) and fails if the call is not there
exactly once. Notebooks run with ``TQDM_DISABLE=1``: a progress bar is a widget that shows the build
machine's speed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: Files of an extension Jupyter Book loads on every page, and the class prefixes of the doctree nodes
#: that use them: sphinx-design's components (``sd-...``), jupyterlite-sphinx's embedded notebooks.
UNUSED_UNLESS = {"sphinx-design.min.css": ("sd-",), "design-tabs.js": ("sd-tab",),
                 "jupyterlite_sphinx.css": ("jupyterlite_sphinx", "try_examples"),
                 "jupyterlite_sphinx.js": ("jupyterlite_sphinx", "try_examples")}  # fmt: skip


def _file_name(asset) -> str:
    return str(getattr(asset, "filename", asset)).split("?")[0].rsplit("/", 1)[-1]


def page_marks(doctree) -> set[str]:
    """Every class of every element of the page's doctree, and the modules of its node types."""
    from docutils import nodes

    elements = list(doctree.findall(nodes.Element)) if doctree is not None else []
    return {name for node in elements for name in node.get("classes", [])} | {
        type(node).__module__ for node in elements}


def assets_where_used(app, pagename, templatename, context, doctree) -> None:
    """Leave out the stylesheets and scripts of an extension the page does not use (see UNUSED_UNLESS)."""
    classes = page_marks(doctree)

    def used(asset) -> bool:
        prefixes = UNUSED_UNLESS.get(_file_name(asset))
        return prefixes is None or any(name.startswith(prefixes) for name in classes)

    for key in ("css_files", "script_files"):
        if context.get(key):
            context[key][:] = [asset for asset in context[key] if used(asset)]


THEME_SCRIPT = Path("_static") / "scripts" / "pydata-sphinx-theme.js"
#: The theme's last statement (0.17, minified): run its tab-stop pass now or when the page loads.
TAB_STOP_PASS = re.compile(
    r'"complete"===document\.readyState\?(\w+)\(\):window\.addEventListener\("load",\1\)')


def no_whole_page_tab_stop_pass(app, exception) -> None:
    """Take the call of the theme's whole-page tab-stop pass out of its built script (see above)."""
    if exception is not None or app.builder.format != "html":
        return
    script = Path(app.outdir) / THEME_SCRIPT
    text = script.read_text(encoding="utf8")
    text, found = TAB_STOP_PASS.subn("void 0", text)
    if found != 1:
        raise RuntimeError(f"{script}: expected the theme's tab-stop call once, found it {found} times "
                           "(pydata-sphinx-theme changed: see book/lean_site.py)")
    script.write_text(text, encoding="utf8")


#: The packages whose markup or scripts the site's rewrites read (book/README.md), pinned in requirements.txt.
MARKUP_PACKAGES = ("sphinx", "docutils", "pydata-sphinx-theme", "sphinx-book-theme", "myst-nb",
                   "myst-parser", "sphinx-togglebutton", "sphinx-external-toc", "sphinxcontrib-katex",
                   "sphinxcontrib-bibtex", "jupyterlite-sphinx", "beautifulsoup4", "tinycss2", "pillow",
                   "fonttools")


def pinned_versions(requirements: Path) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of a requirements file (names lower case)."""
    pins = {}
    for line in requirements.read_text(encoding="utf8").splitlines():
        name, sep, version = line.split("#")[0].strip().partition("==")
        if sep:
            pins[name.strip().lower()] = version.strip()
    return pins


def check_pins(app, config) -> None:
    """Stop the build when a package the rewrites read is not the version requirements.txt pins."""
    from importlib.metadata import PackageNotFoundError, version

    from sphinx.errors import ExtensionError

    pins = pinned_versions(TEMPLATES.parent.parent / "requirements.txt")
    wrong = []
    for name in MARKUP_PACKAGES:
        if name not in pins:
            raise ExtensionError(f"requirements.txt pins no {name}: the site's rewrites read its markup")
        try:
            found = version(name)
        except PackageNotFoundError:
            found = "none"
        if found != pins[name]:
            wrong.append(f"{name} {found} (pinned {pins[name]})")
    if wrong:
        raise ExtensionError("the site's rewrites were written against other versions: " + ", ".join(wrong)
                             + ". Install requirements.txt, or upgrade the pin and run the site checks.")


def add_templates(app, config) -> None:
    config.templates_path = [*config.templates_path, str(TEMPLATES)]


def no_progress_bars(app, config) -> None:
    """Notebook kernels inherit the build's environment: tqdm draws no bar in them."""
    os.environ["TQDM_DISABLE"] = "1"


def setup(app):
    app.connect("config-inited", check_pins)
    app.connect("config-inited", add_templates)
    app.connect("config-inited", no_progress_bars)
    app.connect("html-page-context", assets_where_used, priority=900)
    app.connect("build-finished", no_whole_page_tab_stop_pass)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
