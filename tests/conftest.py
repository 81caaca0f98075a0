"""Fixtures shared by the package's tests, the site's and the grader's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("MHA_CHROMIUM", "/usr/bin/chromium"))
REQUIRED = os.environ.get("MHA_REQUIRE_BROWSER") == "1"


def missing(reason: str):
    """Skip, or fail when the environment says these checks are required."""
    if REQUIRED:
        pytest.fail(f"{reason} (MHA_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


@pytest.fixture
def small_tiles(monkeypatch):
    """Open the annex's door (:mod:`mha.fast`) for problems of any size, cut into tiles of a few rows."""
    from mha import fast

    monkeypatch.setattr(fast, "TILE_MIN_SCORES", 0)
    monkeypatch.setattr(fast.tiles, "TILE_BYTES", 2048)  # a few rows of a head per tile
    return fast


@pytest.fixture(scope="session")
def browser():
    """One Chromium for every test of a test process: Playwright's synchronous API runs one at a time
    in a process (a second ``sync_playwright`` inside the first one's event loop fails)."""
    from book.site_weight import CHROMIUM_ARGS  # the repository's, not in the sdist (nor needed there)

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install -r requirements-test.txt)")
    if not CHROMIUM.exists():
        missing(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
