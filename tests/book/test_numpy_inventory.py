"""The NumPy inventory (``book/inventories/numpy.inv``, from ``book/numpy_inventory.py``): current, read
by Sphinx as NumPy's own would be, and resolving the roles a docstring or a signature uses."""

from __future__ import annotations

import io
import posixpath
import re
import zlib
from pathlib import Path

import numpy
import pytest
import yaml

from book import numpy_inventory as ni

ROOT = Path(__file__).resolve().parents[2]


def _load(data: bytes) -> dict:
    from sphinx.util.inventory import InventoryFile

    return InventoryFile.load(io.BytesIO(data), "https://numpy.org/doc/2.4/", posixpath.join)


def test_the_committed_inventory_is_what_the_script_writes():
    assert ni.INVENTORY.read_bytes() == ni.build(), "stale: run python -m book.numpy_inventory"


def test_every_numpy_name_the_book_uses_is_in_the_inventory():
    inventory = _load(ni.INVENTORY.read_bytes())
    listed = {name for entries in inventory.values() for name in entries}
    used = ni.used_names(ni.source_texts())
    documented = {name for name in used if ni.entry(name) is not None}
    assert {"numpy.exp", "numpy.random.Generator", "numpy.testing.assert_allclose", "numpy.float32",
            "numpy.ndarray", "numpy.typing.ArrayLike"} <= documented  # the scan reads code and prose
    assert documented - listed == set()
    assert len(documented) >= 100


def test_sphinx_reads_the_header_and_the_compressed_entries():
    data = ni.INVENTORY.read_bytes()
    header = data.split(b"\n", 4)
    assert header[0] == b"# Sphinx inventory version 2" and header[1] == b"# Project: NumPy"
    assert header[2] == f"# Version: {ni.pinned_version()}".encode()
    lines = zlib.decompress(header[4]).decode("utf8").splitlines()
    assert lines == sorted(lines) and all(len(line.split(" ")) == 5 for line in lines)
    inventory = _load(data)
    base = "https://numpy.org/doc/2.4/reference/"
    assert inventory["py:function"]["numpy.exp"][2] == f"{base}generated/numpy.exp.html#numpy.exp"
    assert inventory["py:class"]["numpy.random.Generator"][2] == \
        f"{base}random/generator.html#numpy.random.Generator"
    assert inventory["py:data"]["numpy.inf"][2] == f"{base}constants.html#numpy.inf"
    assert inventory["py:class"]["numpy.float32"][2] == f"{base}arrays.scalars.html#numpy.float32"


@pytest.mark.parametrize(("name", "role", "uri"), [
    ("numpy.exp", "py:function", "reference/generated/numpy.exp.html#$"),
    ("numpy.concatenate", "py:function", "reference/generated/numpy.concatenate.html#$"),
    ("numpy.abs", "py:function", "reference/generated/numpy.absolute.html#numpy.absolute"),  # an alias
    ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html#$"),
    ("numpy.errstate", "py:class", "reference/generated/numpy.errstate.html#$"),
    ("numpy.float32", "py:class", "reference/arrays.scalars.html#$"),
    ("numpy.bool_", "py:class", "reference/arrays.scalars.html#$"),
    ("numpy.inf", "py:data", "reference/constants.html#$"),
    ("numpy.random.default_rng", "py:function", "reference/random/generator.html#$"),
    ("numpy.random.Generator.standard_normal", "py:method",
     "reference/random/generated/numpy.random.Generator.standard_normal.html#$"),
    ("numpy.random.binomial", "py:function", "reference/random/generated/numpy.random.binomial.html#$"),
    ("numpy.ndarray.reshape", "py:method", "reference/generated/numpy.ndarray.reshape.html#$"),
    ("numpy.linalg.norm", "py:function", "reference/generated/numpy.linalg.norm.html#$"),
    ("numpy.testing.assert_allclose", "py:function",
     "reference/generated/numpy.testing.assert_allclose.html#$"),
    ("numpy.typing.ArrayLike", "py:data", "reference/typing.html#$"),
    ("numpy.random", "py:module", "reference/random/index.html#module-$"),
])
def test_each_kind_of_name_gets_the_address_numpy_s_documentation_gives_it(name, role, uri):
    assert ni.entry(name) == ni.Entry(name, role, uri)


@pytest.mark.parametrize("name", ["numpy.nonexistent", "numpy.add.at", "numpy.org", "numpy.exp.nin",
                                  "numpy.little_endian", "numpy.lib.stride_tricks", "numpy.ndarray.nope"])
def test_what_numpy_does_not_document_under_that_name_is_left_out(name):
    assert ni.entry(name) is None


def test_the_scan_reads_np_numpy_and_imports_but_not_across_lines():
    text = ("x = np.exp(y) + numpy.linalg.norm(z)\n`np.random.Generator` in prose\n"
            "from numpy.typing import ArrayLike, NDArray\nfrom numpy import (\n    zeros,\n    ones)\n"
            "from numpy.typing import DTypeLike\n\n__all__ = []\nnumpy_like = 1\n")
    assert ni.used_names([text]) == {
        "numpy.exp", "numpy.linalg.norm", "numpy.random.Generator", "numpy.typing.ArrayLike",
        "numpy.typing.NDArray", "numpy.zeros", "numpy.ones", "numpy.typing.DTypeLike", "numpy.typing"}


def test_the_pin_is_read_from_the_requirements_and_a_missing_or_double_pin_is_named(tmp_path):
    assert re.fullmatch(r"\d+\.\d+\.\d+", ni.pinned_version())
    assert ni.base_url("2.4.6") == "https://numpy.org/doc/2.4/"
    for text in ("scipy==1.0\n", "numpy==2.4.6\nnumpy==2.3.0\n", "numpy>=2\n"):
        (tmp_path / "requirements.txt").write_text(text)
        with pytest.raises(ValueError, match="must pin NumPy exactly once"):
            ni.pinned_version(tmp_path / "requirements.txt")
    with pytest.raises(ValueError, match="not a NumPy version"):
        ni.base_url("stable")


def test_another_installed_numpy_is_refused_with_the_fix(monkeypatch):
    monkeypatch.setattr(numpy, "__version__", "1.26.4")
    with pytest.raises(RuntimeError, match=r"pip install numpy==\d"):
        ni.build()


def test_the_book_links_to_the_documentation_of_the_pinned_numpy():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["sphinx"]["config"]
    url, path = config["intersphinx_mapping"]["numpy"]
    assert url == ni.base_url(ni.pinned_version()) and (ROOT / path).resolve() == ni.INVENTORY


def test_a_sphinx_build_resolves_the_entries_with_no_warning(tmp_path):
    """Roles in a docstring and annotations in a signature find NumPy's pages through this inventory."""
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"extensions = ['sphinx.ext.intersphinx']\nnitpicky = True\n"
        f"intersphinx_mapping = {{'numpy': ('https://numpy.org/doc/2.4/', {str(ni.INVENTORY)!r})}}\n")
    (src / "index.rst").write_text(
        "Links\n=====\n\n:func:`numpy.exp`, :func:`numpy.abs`, :class:`numpy.random.Generator`, "
        ":data:`numpy.inf`, :class:`numpy.float32`, :mod:`numpy.random`, :data:`numpy.typing.ArrayLike`, "
        ":func:`numpy.testing.assert_allclose`.\n\n"
        ".. py:function:: f(x: numpy.ndarray) -> numpy.dtype\n")
    warnings = io.StringIO()
    app = Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"), "html",
                 status=None, warning=warnings, freshenv=True)
    app.build()
    assert warnings.getvalue() == ""
    html = (tmp_path / "out" / "index.html").read_text(encoding="utf8")
    for target in ("generated/numpy.exp.html#numpy.exp", "generated/numpy.absolute.html#numpy.absolute",
                   "random/generator.html#numpy.random.Generator", "constants.html#numpy.inf",
                   "arrays.scalars.html#numpy.float32", "random/index.html#module-numpy.random",
                   "typing.html#numpy.typing.ArrayLike", "generated/numpy.ndarray.html#numpy.ndarray",
                   "generated/numpy.dtype.html#numpy.dtype"):
        assert f'href="https://numpy.org/doc/2.4/reference/{target}"' in html, target
