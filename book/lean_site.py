"""Sphinx extension: keep what a first visit downloads small.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. pydata-sphinx-theme puts
``scripts/fontawesome.js`` on every page (1.5 MB, 0.54 MB gzip: every Font Awesome icon as an
SVG, "so that users can add custom icons"). This book adds none, and the theme's stylesheet
already draws its icons with Font Awesome's web fonts (``fa-solid-900.woff2`` ...), which the page
downloads anyway. ``templates/layout.html`` extends the theme's layout and drops that one script
tag through the ``drop_icon_script`` filter registered here.

The widget manager is loaded only on pages with widgets (myst-nb), deferred (``_config.yml``).
"""

from __future__ import annotations

import re
from pathlib import Path

from markupsafe import Markup

TEMPLATES = Path(__file__).resolve().parent / "templates"
ICON_SCRIPT = re.compile(r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>')


def drop_icon_script(html: str) -> Markup:
    """``html`` without the theme's ``fontawesome.js`` script tag."""
    return Markup(ICON_SCRIPT.sub("", str(html)))


def add_templates(app, config) -> None:
    config.templates_path = [*config.templates_path, str(TEMPLATES)]


def register_filter(app) -> None:
    if hasattr(app.builder, "templates"):
        app.builder.templates.environment.filters["drop_icon_script"] = drop_icon_script


def setup(app):
    app.connect("config-inited", add_templates)
    app.connect("builder-inited", register_filter)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
