"""Which pages the book has and which of them are notebooks, read from ``_toc.yml`` without Sphinx.

The Sphinx extensions (:mod:`book.lite_site`) and the test harness share these helpers, so the tests
can be collected on a machine without the book's build tools.
"""

from __future__ import annotations

import functools
from pathlib import Path


def toc_docnames(root: Path) -> list[str]:
    """Every page in ``root/_toc.yml``, in book order (root page first)."""
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text(encoding="utf8"))
    if not isinstance(toc, dict) or "root" not in toc:
        raise ValueError(f"{root}/_toc.yml must be a mapping with a 'root' entry")
    return [_docname(toc["root"]), *_entries(toc)]


def _entries(node: dict) -> list[str]:
    """Docnames under a toc node (its ``parts``, ``chapters`` or ``sections``), depth first."""
    names = []
    for key in ("parts", "chapters", "sections"):
        for entry in node.get(key) or []:
            if "file" in entry:
                names.append(_docname(entry["file"]))
            names += _entries(entry)
    return names


def _docname(file: str) -> str:
    return str(Path(file).with_suffix("")) if Path(file).suffix in (".md", ".ipynb") else str(file)


def is_notebook(path: Path) -> bool:
    """An ``.ipynb``, or a MyST ``.md`` whose front matter declares a ``kernelspec``."""
    return path.suffix == ".ipynb" or "kernelspec" in front_matter(path)


@functools.lru_cache(maxsize=4)
def notebook_pages(root: Path) -> dict[str, Path]:
    """docname -> source file for every notebook page of the toc, in book order.

    The one place that decides which pages are notebooks: the JupyterLite contents, the launch
    buttons and the test harness (tests/chapters/harness.py) all use it.
    """
    pages = {}
    for docname in toc_docnames(root):
        sources = [Path(root) / f"{docname}{suffix}" for suffix in (".md", ".ipynb")]
        existing = [path for path in sources if path.is_file()]
        if not existing and docname.startswith("api/"):  # the reference: book/api_pages.py writes it at build
            continue
        if not existing:
            raise FileNotFoundError(f"_toc.yml lists {docname!r} but no .md/.ipynb file exists")
        if is_notebook(existing[0]):
            pages[docname] = existing[0]
    return pages


def front_matter(path: Path) -> dict:
    """The YAML front matter of a MyST ``.md`` page ({} for none, or for an ``.ipynb``)."""
    import yaml

    text = path.read_text(encoding="utf8") if path.suffix == ".md" else ""
    if not text.startswith("---"):
        return {}
    return yaml.safe_load(text.split("---", 2)[1]) or {}


@functools.lru_cache(maxsize=4)
def live_pages(root: Path) -> dict[str, Path]:
    """The notebook pages that also open live in JupyterLite.

    A page opts out with ``mha: {jupyterlite: false, jupyterlite_why: ...}`` in its front matter, when
    it needs something the browser's Python cannot have (a model of tens of MB, packages with no
    WebAssembly build); its launch menu shows the reason (:func:`not_live_reason`).
    """
    pages = {}
    for docname, path in notebook_pages(root).items():
        if (front_matter(path).get("mha") or {}).get("jupyterlite", True):
            pages[docname] = path
        else:
            not_live_reason(path)  # an opt-out without its reason fails the build here
    return pages


def not_live_reason(path: Path) -> str:
    """Why the page at ``path`` does not open in JupyterLite: its ``mha.jupyterlite_why``, a short phrase."""
    why = (front_matter(path).get("mha") or {}).get("jupyterlite_why")
    if not isinstance(why, str) or not 8 <= len(why.strip()) <= 20:
        raise ValueError(f"{path}: a page with `jupyterlite: false` says why in `jupyterlite_why:` "
                         f"(8 to 20 characters, shown in its launch menu on a phone); found {why!r}")
    return why.strip()
