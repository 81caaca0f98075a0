"""Sphinx extension: keep what a first visit downloads small.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. pydata-sphinx-theme puts
``scripts/fontawesome.js`` on every page (1.5 MB, 0.54 MB gzip: every Font Awesome icon as an
SVG, "so that users can add custom icons"). This book adds none, and the theme's stylesheet
already draws its icons with Font Awesome's web fonts (``fa-solid-900.woff2`` ...), which the page
downloads anyway. ``templates/layout.html`` extends the theme's layout and drops that one script
tag through the ``drop_icon_script`` filter registered here.

It also moves each page's widget state (myst-nb puts it in ``<head>``: every pre-rendered frame,
up to 2.8 MB) to the end of ``<body>``, so the browser paints the text before reading the frames.
The site's widget script (``assets/static-widgets.js``) reads it there once the page is parsed.

Widgets are drawn only on pages with widgets (myst-nb adds the script there), and only when one
nears the screen (``assets/static-widgets.js``, ``_config.yml``).

pydata-sphinx-theme also loads Sphinx's three search scripts (``searchtools.js``,
``language_data.js`` and the 0.1 MB ``searchindex.js``) on every page, in ``<head>`` and not
deferred: they held back the first paint of every page, for a search-as-you-type feature this book
does not use (the header's search box opens a form that goes to ``search.html``, which loads
them itself). ``templates/layout.html`` drops them through the ``drop_search_scripts`` filter.

pydata-sphinx-theme's script, once the page has loaded, reads every code block's and output's
scroll size to make the ones that scroll Tab stops, and again 300 ms after any change under
``<main>`` (a widget drawing a frame): each time the whole page laid out in one task (on a chapter
and a phone's slower CPU, 100-150 ms during which a tap waits). ``no_whole_page_tab_stop_pass``
takes that one call out of the built ``pydata-sphinx-theme.js``; ``assets/mha-site.js`` does the
same job a section at a time, and names the regions too.

Notebooks run during the build with ``TQDM_DISABLE=1``: a progress bar is a widget that shows the
build machine's speed ("161.38it/s") and was wider than a phone's column; readers running the
notebook still get theirs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from markupsafe import Markup

TEMPLATES = Path(__file__).resolve().parent / "templates"
ICON_SCRIPT = re.compile(r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>')
SEARCH_SCRIPTS = re.compile(
    r'\s*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)"></script>')


def drop_icon_script(html: str) -> Markup:
    """``html`` without the theme's ``fontawesome.js`` script tag."""
    return Markup(ICON_SCRIPT.sub("", str(html)))


def drop_search_scripts(html: str) -> Markup:
    """``html`` without the search script tags the theme puts in every page's ``<head>``."""
    return Markup(SEARCH_SCRIPTS.sub("", str(html)))


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _is_widget_state(script) -> bool:
    return (getattr(script, "attributes", None) or {}).get("type") == WIDGET_STATE


def widget_state_after_text(app, pagename, templatename, context, doctree) -> None:
    """Move the page's widget-state scripts from ``<head>`` to the end of the page body."""
    scripts = context.get("script_files")
    if not scripts or "body" not in context:
        return
    states = [script for script in scripts if _is_widget_state(script)]
    if not states:
        return
    scripts[:] = [script for script in scripts if not _is_widget_state(script)]
    tags = "".join(f'<script type="{WIDGET_STATE}">{script.attributes["body"]}</script>\n'
                   for script in states)  # fmt: skip
    context["body"] += tags


# Extensions Jupyter Book loads on every page, whose files block the first paint, and the class a page's
# body carries when it uses them: sphinx-design's components (cards, tabs, grids: ``sd-...``) and
# jupyterlite-sphinx's embedded notebooks (``jupyterlite_sphinx_...``, ``try_examples...``). The
# course's chapters use neither (their JupyterLite link is the launch menu's plain link).
UNUSED_UNLESS = {
    "sphinx-design.min.css": re.compile(r'class="(?:[^"]*\s)?sd-'),
    "design-tabs.js": re.compile(r'class="(?:[^"]*\s)?sd-tab'),
    "jupyterlite_sphinx.css": re.compile(r'class="(?:[^"]*\s)?(?:jupyterlite_sphinx|try_examples)'),
    "jupyterlite_sphinx.js": re.compile(r'class="(?:[^"]*\s)?(?:jupyterlite_sphinx|try_examples)'),
}


def _file_name(asset) -> str:
    return str(getattr(asset, "filename", asset)).split("?")[0].rsplit("/", 1)[-1]


def assets_where_used(app, pagename, templatename, context, doctree) -> None:
    """Leave out the stylesheets and scripts of an extension the page does not use (see UNUSED_UNLESS)."""
    body = context.get("body", "")
    for key in ("css_files", "script_files"):
        assets = context.get(key)
        if assets:
            assets[:] = [asset for asset in assets if _file_name(asset) not in UNUSED_UNLESS
                         or UNUSED_UNLESS[_file_name(asset)].search(body)]


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


def add_templates(app, config) -> None:
    config.templates_path = [*config.templates_path, str(TEMPLATES)]


def register_filter(app) -> None:
    if hasattr(app.builder, "templates"):
        app.builder.templates.environment.filters["drop_icon_script"] = drop_icon_script
        app.builder.templates.environment.filters["drop_search_scripts"] = drop_search_scripts


def no_progress_bars(app, config) -> None:
    """Notebook kernels inherit the build's environment: tqdm draws no bar in them."""
    os.environ["TQDM_DISABLE"] = "1"


def setup(app):
    app.connect("config-inited", add_templates)
    app.connect("config-inited", no_progress_bars)
    app.connect("builder-inited", register_filter)
    # After myst-nb has put the page's scripts in the context.
    app.connect("html-page-context", widget_state_after_text, priority=900)
    app.connect("html-page-context", assets_where_used, priority=900)
    app.connect("build-finished", no_whole_page_tab_stop_pass)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
