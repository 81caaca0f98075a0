"""Static checks of the built site's HTML: nothing loads from a CDN, vendored assets exist."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

#: Hosts the built pages must not load from (the site works offline and behind strict networks).
CDN_HOSTS = ("cdn.jsdelivr.net", "cdnjs.cloudflare.com", "unpkg.com", "fonts.googleapis.com",
             "fonts.gstatic.com", "mathjax.org")

VENDORED = ("vendored/requirejs/require.js", "vendored/html-manager/embed-amd.js",
            "vendored/mathjax/tex-chtml.js")


def test_no_page_names_a_cdn(site):
    offenders = {}
    for page in site.rglob("*.html"):
        hosts = sorted({host for host in CDN_HOSTS if host in page.read_text(encoding="utf8")})
        if hosts:
            offenders[str(page.relative_to(site))] = hosts
    assert offenders == {}


def test_vendored_scripts_are_served_by_the_site(site):
    for path in VENDORED:
        assert (site / "_static" / path).stat().st_size > 10_000, path
    fonts = list((site / "_static/vendored/mathjax/output/chtml/fonts/woff-v2").glob("*.woff"))
    assert len(fonts) > 10


def _script_sources(html: str) -> list[str]:
    return re.findall(r'<script[^>]*\ssrc="([^"]+)"', html)


def test_widget_pages_load_the_vendored_manager_in_order(site_pages):
    """require.js, then the shim that configures it, then html-manager (order matters)."""
    for docname, page in site_pages.items():
        html = page.read_text(encoding="utf8")
        if "application/vnd.jupyter.widget-state+json" not in html:
            continue
        sources = [src.split("?")[0].rsplit("_static/", 1)[-1] for src in _script_sources(html)]
        wanted = ["vendored/requirejs/require.js", "widgets-shim.js",
                  "vendored/html-manager/embed-amd.js"]
        positions = [sources.index(name) for name in wanted if name in sources]
        assert len(positions) == 3 and positions == sorted(positions), (docname, sources)


def test_math_pages_load_the_vendored_mathjax(site_pages):
    for docname, page in site_pages.items():
        html = page.read_text(encoding="utf8")
        if 'class="math' not in html:
            continue
        sources = _script_sources(html)
        assert any(src.split("?")[0].endswith("vendored/mathjax/tex-chtml.js")
                   for src in sources), (docname, sources)
