"""Sphinx extension: keep every built page free of requests to other sites.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. On each page it drops

- sphinx-thebe's scripts (Jupyter Book adds them unconditionally; they name a CDN URL, are
  unused here since thebe is off, and declare ``THEBE_JS_URL`` twice, a console error), and
- stylesheets served from font CDNs (jupyterlite-sphinx links Google Fonts on every page; the
  theme's own fonts are used instead).

The vendored scripts themselves are configured in ``_config.yml`` (``mathjax_path``,
``nb_ipywidgets_js``); this module only removes what would still reach out.
"""

from __future__ import annotations

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


def setup(app):
    # Late priority: run after the extensions that add these assets during page rendering.
    app.connect("html-page-context", drop_online_assets, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
