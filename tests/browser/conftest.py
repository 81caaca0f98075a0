"""Fixtures for checks of the built website (``make book`` -> ``_build/html``).

Without a built site (or, for the browser tests, without Chromium) these tests skip with the
reason; with ``MHA_REQUIRE_BROWSER=1`` (set by ``.ci/run``) a missing piece fails them instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from book.site_weight import serve
from tests.conftest import missing

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("MHA_SITE", ROOT / "_build" / "html"))  # MHA_SITE: another build


def toc_docnames() -> list[str]:
    """Every page of the book, in toc order (root first)."""
    from book.toc import toc_docnames as docnames

    return docnames(ROOT)


@pytest.fixture(scope="session")
def site() -> Path:
    """The built site's folder."""
    if not (SITE / "index.html").is_file():
        missing(f"no built site at {SITE}: run `make book` first")
    return SITE


@pytest.fixture(scope="session")
def site_pages(site) -> dict[str, Path]:
    """docname -> built HTML file, for every page in the toc."""
    pages = {docname: site / f"{docname}.html" for docname in toc_docnames()}
    absent = [str(path) for path in pages.values() if not path.is_file()]
    if absent:
        pytest.fail(f"the built site lacks toc pages {absent}: rebuild with `make book`")
    return pages


@pytest.fixture(scope="session")
def site_url(site):
    """Serve the built site on 127.0.0.1 (gzip, as a static host does); yield its base URL."""
    url, server = serve(site)
    yield url
    server.shutdown()
    server.server_close()
