"""Fixtures for checks of the built website (``make book`` -> ``_build/html``).

Without a built site (or, for the browser tests, without Chromium) these tests skip with the
reason; with ``MHA_REQUIRE_BROWSER=1`` (set by ``.ci/run``) a missing piece fails them instead.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
CHROMIUM = Path(os.environ.get("MHA_CHROMIUM", "/usr/bin/chromium"))
REQUIRED = os.environ.get("MHA_REQUIRE_BROWSER") == "1"


def missing(reason: str):
    """Skip, or fail when the environment says these checks are required."""
    if REQUIRED:
        pytest.fail(f"{reason} (MHA_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


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


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="session")
def site_url(site):
    """Serve the built site on 127.0.0.1 (a free port) for the session; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
