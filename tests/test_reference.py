"""The reference documents the calls people make: every core class's ``__call__`` has its sections, and the
API pages ask autodoc for it, beside a summary table; the Python names in signatures link out.

The book build renders what these tests check in the sources (``make book``; the pages come from
``book/api_pages.py``).
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ["mha.attention", "mha.masks", "mha.layers", "mha.cost", "mha.positions", "mha.efficient",
        "mha.variants", "mha.latent_attention", "mha.rope_scaling", "mha.linear_attention",
        "mha.model_configs",
        "mha.normalization", "mha.feed_forward", "mha.block", "mha.frameworks", "mha.module"]
SECTIONS = ("Parameters", "Returns", "Raises", "Examples")


def sections(docstring: str | None) -> set[str]:
    """The numpydoc section titles of a docstring (a title underlined with dashes)."""
    return set(re.findall(r"^\s*(\w+)\s*\n\s*-{3,}\s*$", inspect.cleandoc(docstring or ""), re.M))


def called_classes() -> list[tuple[str, type]]:
    found = []
    for name in CORE:
        module = importlib.import_module(name)
        found += [(f"{name}.{cls.__name__}", cls) for cls in vars(module).values()
                  if inspect.isclass(cls) and cls.__module__ == name and "__call__" in vars(cls)]
    return found


@pytest.mark.parametrize(("name", "cls"), called_classes(), ids=[n for n, _ in called_classes()])
def test_every_core_call_documents_its_parameters_returns_errors_and_an_example(name, cls):
    missing = [s for s in SECTIONS if s not in sections(cls.__call__.__doc__)]
    assert missing == [], f"{name}.__call__ lacks {missing}"


def test_the_walk_finds_the_layers_people_call():
    names = {n for n, _ in called_classes()}
    assert {"mha.layers.MultiHeadAttention", "mha.block.TransformerBlock",
            "mha.latent_attention.LatentAttention"} <= names


def test_the_section_reader_reads_numpydoc():
    doc = "Do it.\n\n    Parameters\n    ----------\n    x : int\n\n    Raises\n    ------\n    ValueError\n"
    assert sections(doc) == {"Parameters", "Raises"}


def test_the_pages_ask_for_call_and_open_with_a_summary_table():
    from book.api_pages import pages

    written = pages()
    layers = written["layers.md"]
    assert ":special-members: __call__" in layers and ".. autosummary::" in layers
    assert "   MultiHeadAttention\n" in layers  # the table's row, named as the module's own
    assert all(".. autosummary::" in text for name, text in written.items() if name != "index.md")


def test_python_names_link_to_an_inventory_the_build_carries():
    config = (ROOT / "_config.yml").read_text(encoding="utf8")
    assert "sphinx.ext.intersphinx" in config and "napoleon_use_ivar: false" in config
    inventory = ROOT / "book" / "inventories" / "python.inv"
    assert inventory.read_bytes().startswith(b"# Sphinx inventory version 2")
    assert "book/inventories/python.inv" in config
