"""Fixtures shared by the package's tests."""

import pytest


@pytest.fixture
def small_tiles(monkeypatch):
    """Open the annex's door (:mod:`mha.fast`) for problems of any size, cut into tiles of a few rows."""
    from mha import fast

    monkeypatch.setattr(fast, "TILE_MIN_SCORES", 0)
    monkeypatch.setattr(fast.tiles, "TILE_BYTES", 2048)  # a few rows of a head per tile
    return fast
