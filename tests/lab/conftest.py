"""Fixtures of the lab's tests."""

import sys

import pytest


@pytest.fixture
def without_tqdm(monkeypatch):
    """A Python in which ``import tqdm`` fails, as in the NumPy-only install and in JupyterLite."""
    for name in [name for name in sys.modules if name == "tqdm" or name.startswith("tqdm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # None in sys.modules: the import raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError):
        import tqdm.auto  # noqa: F401
