"""Sphinx extension: keep every built page free of requests to other sites.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. On each page it drops

- sphinx-thebe's scripts (Jupyter Book adds them unconditionally; they name a CDN URL, are
  unused here since thebe is off, and declare ``THEBE_JS_URL`` twice, a console error), and
- stylesheets served from font CDNs (jupyterlite-sphinx links Google Fonts on every page; the
  theme's own fonts are used instead).

The vendored scripts themselves are configured in ``_config.yml`` (``mathjax_path``,
``nb_ipywidgets_js``); this module only removes what would still reach out.

It also names the site's icon on ``index.html``, the redirect page sphinx-external-toc writes (a bare
``<meta http-equiv="Refresh">``): without a ``<link rel="icon">`` the browser asked for
``/favicon.ico``, which the site does not have (a 404 on every first visit).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

#: Hosts a built page must not load anything from.
BLOCKED_HOSTS = ("fonts.googleapis.com", "fonts.gstatic.com", "unpkg.com/thebe")


def _is_thebe(script: Any) -> bool:
    filename = getattr(script, "filename", None) or ""
    body = (getattr(script, "attributes", None) or {}).get("body", "")
    return filename.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body


def _is_blocked(asset: Any) -> bool:
    filename = getattr(asset, "filename", None) or str(asset)
    return any(host in filename for host in BLOCKED_HOSTS)


def drop_online_assets(app, pagename, templatename, context, doctree) -> None:
    """Remove thebe scripts and font-CDN stylesheets from this page's asset lists (in place)."""
    scripts = context.get("script_files")
    if scripts is not None:
        scripts[:] = [js for js in scripts if not (_is_thebe(js) or _is_blocked(js))]
    stylesheets = context.get("css_files")
    if stylesheets is not None:
        stylesheets[:] = [css for css in stylesheets if not _is_blocked(css)]


REDIRECT = '<meta http-equiv="Refresh" content="0; url='


def redirect_page(target: str, icon: str | None) -> str:
    """A complete redirect page to ``target``: title, the site's icon, and a link if it does not move."""
    target = html.escape(target, quote=True)
    icon_link = f'<link rel="icon" href="_static/{html.escape(icon, quote=True)}">\n' if icon else ""
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>Redirecting to {target}</title>\n{icon_link}"
            f'{REDIRECT}{target}" />\n</head>\n<body><p><a href="{target}">Go to the course</a></p></body>\n'
            "</html>\n")


def complete_redirect_page(app, exception) -> None:
    """Rewrite the bare ``index.html`` redirect (sphinx-external-toc) as a page that names the icon."""
    index = Path(app.outdir) / "index.html"
    if exception is not None or app.builder.format != "html" or not index.is_file():
        return
    text = index.read_text(encoding="utf8").strip()
    if not text.startswith(REDIRECT) or "\n" in text:  # a real page, or already rewritten
        return
    target = text[len(REDIRECT):].split('"', 1)[0]
    favicon = app.config.html_favicon
    icon = Path(favicon).name if favicon and "://" not in favicon else None
    index.write_text(redirect_page(target, icon), encoding="utf8")


def setup(app):
    # Late priority: run after the extensions that add these assets during page rendering.
    app.connect("html-page-context", drop_online_assets, priority=900)
    # After sphinx-external-toc has written the redirect (default priority 500).
    app.connect("build-finished", complete_redirect_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
