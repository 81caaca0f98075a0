"""Write ``book/inventories/numpy.inv``: where NumPy's documentation explains each NumPy name the book uses.

The build is offline, so intersphinx cannot download NumPy's own ``objects.inv``, and no package on PyPI
ships one. This writes a Sphinx inventory (version 2, zlib-compressed, the format intersphinx reads) for
the names the chapters and the package use, ``np.exp`` or ``numpy.random.Generator``, with the addresses
NumPy's documentation gives them for the NumPy version ``requirements.txt`` pins: a routine or class on
its own generated page (``reference/generated/numpy.exp.html``), a constant, a scalar type, a typing
alias, ``default_rng`` and ``Generator`` on the page that lists them.

Run ``python -m book.numpy_inventory`` after a chapter or the package starts using a NumPy name;
``tests/book/test_numpy_inventory.py`` fails until it is run. ``--check`` only says whether the
committed inventory is current.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
INVENTORY = ROOT / "book" / "inventories" / "numpy.inv"
HEADER = "# Sphinx inventory version 2\n# Project: NumPy\n# Version: {version}\n" \
         "# The remainder of this file is compressed using zlib.\n"

#: ``np.name.attr`` or ``numpy.name`` in code or prose; ``from numpy.typing import A, B`` too.
_DOTTED = re.compile(r"\b(?:np|numpy)((?:\.[A-Za-z_]\w*)+)")
_FROM = re.compile(r"\bfrom[ \t]+(numpy(?:\.\w+)*)[ \t]+import[ \t]+(?:\(([\w\s,]+)\)|([\w \t,]+))")
#: Names NumPy documents on a page of their kind rather than on a generated page of their own: the
#: page, and the role its directive gives them (constants and typing aliases are ``.. data::``).
PAGES = {
    "numpy.e": ("reference/constants.html", "py:data"),
    "numpy.euler_gamma": ("reference/constants.html", "py:data"),
    "numpy.inf": ("reference/constants.html", "py:data"),
    "numpy.nan": ("reference/constants.html", "py:data"),
    "numpy.newaxis": ("reference/constants.html", "py:data"),
    "numpy.pi": ("reference/constants.html", "py:data"),
    "numpy.random.default_rng": ("reference/random/generator.html", "py:function"),
    "numpy.random.Generator": ("reference/random/generator.html", "py:class"),
    "numpy.typing.ArrayLike": ("reference/typing.html", "py:data"),
    "numpy.typing.DTypeLike": ("reference/typing.html", "py:data"),
    "numpy.typing.NDArray": ("reference/typing.html", "py:data"),
}
#: Where a module's page is (its anchor is ``module-<name>``).
MODULE_PAGES = {"numpy": "reference/index.html", "numpy.random": "reference/random/index.html",
                "numpy.testing": "reference/routines.testing.html", "numpy.typing": "reference/typing.html",
                "numpy.linalg": "reference/routines.linalg.html", "numpy.fft": "reference/routines.fft.html"}


class Entry(NamedTuple):
    """One line of an inventory: ``name domain:role priority uri dispname``."""

    name: str
    role: str  # "py:function", "py:class", "py:method", "py:data" or "py:module"
    uri: str  # relative to the documentation's root; "$" stands for the name

    def line(self) -> str:
        return f"{self.name} {self.role} 1 {self.uri} -"


def pinned_version(requirements: Path = ROOT / "requirements.txt") -> str:
    """The NumPy version ``requirements.txt`` pins (``numpy==2.4.6`` -> ``2.4.6``)."""
    found = re.findall(r"^numpy==([\w.]+)\s*$", requirements.read_text(encoding="utf8"), re.M)
    if len(found) != 1:
        raise ValueError(f"{requirements} must pin NumPy exactly once (numpy==X.Y.Z), found {found}")
    return found[0]


def base_url(version: str) -> str:
    """NumPy's documentation of one minor version: ``2.4.6`` -> ``https://numpy.org/doc/2.4/``."""
    major_minor = re.match(r"(\d+)\.(\d+)(?:\.|$)", version)
    if major_minor is None:
        raise ValueError(f"not a NumPy version: {version!r}")
    return f"https://numpy.org/doc/{major_minor[1]}.{major_minor[2]}/"


def used_names(texts: Iterable[str]) -> set[str]:
    """Every ``numpy.<dotted>`` name the texts write, ``np.`` spelled out (``np.exp`` -> ``numpy.exp``)."""
    names = set()
    for text in texts:
        names |= {f"numpy{match}" for match in _DOTTED.findall(text)}
        for module, in_parentheses, on_the_line in _FROM.findall(text):
            imported = (in_parentheses or on_the_line).split(",")
            names |= {f"{module}.{name.strip()}" for name in imported if name.strip()}
    return names


def source_texts(root: Path = ROOT) -> list[str]:
    """The book's pages listed in the table of contents, and the package's sources (its docstrings)."""
    from book.toc import toc_docnames

    pages = [root / f"{docname}.md" for docname in toc_docnames(root)]
    return [path.read_text(encoding="utf8") for path in pages if path.is_file()] + \
        [path.read_text(encoding="utf8") for path in sorted((root / "mha").rglob("*.py"))]


def _resolve(name: str) -> tuple[Any, Any] | None:
    """(owner, object) for a dotted NumPy name, or None when NumPy has no such name."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):  # the longest prefix that imports as a module
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        owner = None
        for part in parts[cut:]:
            if not hasattr(obj, part):
                return None
            owner, obj = obj, getattr(obj, part)
        return owner, obj
    return None


def entry(name: str) -> Entry | None:
    """Where NumPy's documentation explains ``name``; None for what it documents under no such name
    (a missing name, or a method reached through an instance, such as ``numpy.add.at``)."""
    if name in PAGES:
        page, role = PAGES[name]
        return Entry(name, role, f"{page}#$")
    found = _resolve(name)
    if found is None:
        return None
    owner, obj = found
    if inspect.ismodule(obj):
        page = MODULE_PAGES.get(name)
        return None if page is None else Entry(name, "py:module", f"{page}#module-$")
    if inspect.isclass(owner):  # a method of a documented class: its own generated page
        folder = "random/generated" if name.startswith("numpy.random.") else "generated"
        return Entry(name, "py:method", f"reference/{folder}/{name}.html#$") if callable(obj) else None
    if not inspect.ismodule(owner) or not callable(obj):
        return None  # reached through an instance (numpy.add.at), or a constant NumPy does not list
    if inspect.isclass(obj):
        if issubclass(obj, importlib.import_module("numpy").generic) and name.count(".") == 1:
            return Entry(name, "py:class", "reference/arrays.scalars.html#$")  # float32, bool_, floating
        return Entry(name, "py:class", f"reference/generated/{name}.html#$")
    documented = f"{owner.__name__}.{getattr(obj, '__name__', name.rsplit('.', 1)[1])}"
    if documented != name and getattr(owner, documented.rsplit(".", 1)[1], None) is obj:
        return Entry(name, "py:function", f"reference/generated/{documented}.html#{documented}")  # np.abs
    folder = "random/generated" if name.startswith("numpy.random.") else "generated"  # legacy np.random.*
    return Entry(name, "py:function", f"reference/{folder}/{name}.html#$")


def entries(names: Iterable[str]) -> list[Entry]:
    """The inventory's entries for ``names``, sorted; names NumPy does not document are left out."""
    found = [entry(name) for name in set(names)]
    return sorted((e for e in found if e is not None), key=lambda e: e.name)


def inventory_bytes(found: list[Entry], version: str) -> bytes:
    """The inventory file: four plain header lines, then the entries compressed with zlib."""
    body = "".join(f"{e.line()}\n" for e in found).encode("utf8")
    return HEADER.format(version=version).encode("utf8") + zlib.compress(body, 9)


def build(root: Path = ROOT) -> bytes:
    """The inventory for the NumPy names ``root``'s book and package use, for the pinned NumPy."""
    import numpy

    version = pinned_version(root / "requirements.txt")
    if numpy.__version__ != version:
        raise RuntimeError(f"requirements.txt pins NumPy {version} but NumPy {numpy.__version__} is "
                           f"installed: the inventory must list what the pinned version documents "
                           f"(pip install numpy=={version})")
    return inventory_bytes(entries(used_names(source_texts(root))), version)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed inventory is stale")
    args = parser.parse_args(argv)
    data, where = build(), INVENTORY.relative_to(ROOT)
    if args.check:
        current = INVENTORY.is_file() and INVENTORY.read_bytes() == data
        print(f"{where} is current" if current else f"{where} is stale: run python -m book.numpy_inventory")
        return 0 if current else 1
    INVENTORY.write_bytes(data)
    print(f"wrote {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
