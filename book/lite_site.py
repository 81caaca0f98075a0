"""Sphinx extension: every notebook page can be downloaded and opened live in JupyterLite.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``, next to ``jupyterlite_sphinx``
(which builds the JupyterLite site into ``_build/html/lite/`` when the HTML build finishes).

At ``config-inited`` it

- builds a wheel of the ``mha`` package from this repository into ``jupyterlite/pypi/``, which
  JupyterLite's piplite indexes and serves from the site, so ``%pip install mha-course`` works
  in the browser with the book's own version of the package, and
- writes each notebook page of ``_toc.yml`` as an ``.ipynb`` into JupyterLite's contents, with the
  Pyodide kernel (``python``) preselected and a first cell that installs the package (pages whose
  front matter says ``mha: {jupyterlite: false}`` are left out: see :func:`live_pages`).

On each notebook page it offers the executed notebook as ``.ipynb`` in the theme's download menu
(the theme only does that when a Binder-like launch service is configured), next to the ``.md``
source. The launch menu that opens it in JupyterLite is :mod:`book.launch`'s.

When the build is done it adds ``assets/lite-guard.js`` to every page of the JupyterLite app: when
Pyodide cannot be downloaded, the reader is told why and where to go, however the notebook was
opened (a click, a new tab, a bookmark).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

from book.launch import REPOSITORY, ROOT
from book.plain_markdown import citation_labels, glue_file_values, notebook_as_plain_markdown
from book.toc import live_pages

LOGGER = logging.getLogger(__name__)

PYODIDE_KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
INSTALL_NOTE = (
    "This notebook runs in your browser with JupyterLite: "
    "Python is Pyodide, nothing is installed on your computer, and your changes stay in this "
    "browser. The next cell installs the course package `mha` (served by this website), "
    "Matplotlib for the figures and the widgets library; run it first."
)
#: What a live chapter may import beyond Python's own library and IPython: NumPy (the wheel's one
#: dependency), the wheel, the widgets and the figures. tests/chapters/test_lite_install.py runs every
#: live chapter with exactly this install.
INSTALL_CELL = "%pip install -q ipywidgets matplotlib mha-course"
#: First cell of a downloaded notebook: how to get the package it imports.
DOWNLOAD_NOTE = (
    f"This notebook is a page of the course *Multi-head attention* ({REPOSITORY}). It imports "
    "the course package `mha`. To run it on your computer, install it first (Python {python}):\n\n"
    "```bash\n"
    f'pip install "mha-course[widgets] @ git+{REPOSITORY}"\n'
    "```\n\n"
    "or clone the repository and follow the page *Run it on your computer*."
)


def requires_python() -> str:
    """The Python versions the package supports, as ``pyproject.toml`` says (``>=3.11``)."""
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))["project"]["requires-python"]


def build_wheel(srcdir: Path, wheel_dir: Path) -> Path:
    """``pip wheel`` this repository (no dependencies) into ``wheel_dir``; return the wheel.

    The wheel must hold the ``mha`` package and its metadata only: every reader's browser installs
    it, and the grader (``classroom/``, its own distribution) must not ride along.
    """
    if wheel_dir.exists():
        shutil.rmtree(wheel_dir)
    wheel_dir.mkdir(parents=True)
    # setuptools builds in the source tree and puts all of build/lib into the wheel, modules that
    # no longer exist included (a checkout that built the book before the grader moved out of mha/
    # still has build/lib/mha/classroom): start from an empty build/lib.
    shutil.rmtree(srcdir / "build" / "lib", ignore_errors=True)
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
               "--wheel-dir", str(wheel_dir), str(srcdir)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(wheel_dir.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise ExtensionError(f"building the mha wheel failed:\n{done.stdout}\n{done.stderr}")
    foreign = foreign_files(wheels[0])
    if foreign:
        raise ExtensionError(f"the mha wheel holds more than the mha package: {', '.join(foreign[:5])}")
    return wheels[0]


def foreign_files(wheel: Path) -> list[str]:
    """The files of ``wheel`` outside the ``mha`` package and its ``.dist-info``, and any module
    or folder named ``classroom`` (the grader's old place) inside them."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    return [name for name in names
            if not (name.startswith("mha/") or name.split("/")[0].endswith(".dist-info"))
            or "classroom" in Path(name).with_suffix("").parts]


@functools.lru_cache(maxsize=4)
def citations_of(srcdir: Path) -> dict:
    """The book's citations, ``key -> (authors, year)`` (parsed once per build)."""
    bibfile = srcdir / "references.bib"
    return citation_labels(bibfile) if bibfile.is_file() else {}


def lite_notebook(path: Path, citations=None):
    """The page as a notebook for JupyterLite: Pyodide kernel, install cell first, no outputs.

    Markdown cells are plain Markdown (:mod:`book.plain_markdown`): Jupyter does not render MyST.
    """
    import jupytext
    import nbformat

    nb = jupytext.read(path, fmt="md:myst" if path.suffix == ".md" else None)
    notebook_as_plain_markdown(nb, citations, page=path)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = dict(PYODIDE_KERNELSPEC)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells[:0] = [
        nbformat.v4.new_markdown_cell(INSTALL_NOTE),
        nbformat.v4.new_code_cell(INSTALL_CELL),
    ]
    return nb


def prepare_lite(app, config) -> None:
    """Build the wheel and write the lite notebooks (after jupyterlite-sphinx reset its folder)."""
    import nbformat

    srcdir = Path(app.srcdir)
    lite_dir = srcdir / config.jupyterlite_dir
    # JupyterLite caches wheel metadata by file name; a rebuilt wheel keeps its name, so a stale
    # cache would publish the old wheel's hash. Start clean.
    shutil.rmtree(lite_dir / ".cache", ignore_errors=True)
    wheel = build_wheel(srcdir, lite_dir / "pypi")
    LOGGER.info(f"[lite_site] built {wheel.name} for JupyterLite")
    contents = srcdir / config.jupyterlite_content_dir
    citations = citations_of(srcdir)
    for docname, path in live_pages(srcdir).items():
        target = contents / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(lite_notebook(path, citations), target)


def downloadable_notebook(executed: Path, page: Path | None = None, citations=None):
    """The executed notebook, opened by a cell that says how to install ``mha``; plain Markdown."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    glued = glue_file_values(executed.with_suffix(".glue.json"))
    notebook_as_plain_markdown(nb, citations, page=page, glued=glued)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(DOWNLOAD_NOTE.format(python=requires_python())))
    return nb


def offer_ipynb_download(app, pagename, templatename, context, doctree) -> None:
    """Write the executed notebook next to the page's sources so the download menu lists it."""
    import nbformat

    if pagename not in app.env.metadata or "kernelspec" not in app.env.metadata[pagename]:
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.is_file():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    page = Path(app.env.doc2path(pagename))  # the page's source (.md or .ipynb)
    nbformat.write(downloadable_notebook(executed, page, citations_of(Path(app.srcdir))), target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def guard_lite_pages(app, exception) -> None:
    """Add the lite guard (assets/lite-guard.js) to every page of the built JupyterLite app."""
    lite = Path(app.outdir) / "lite"
    if exception is not None or not lite.is_dir():
        return
    from bs4 import BeautifulSoup

    for page in lite.rglob("index.html"):
        soup = BeautifulSoup(page.read_text(encoding="utf8"), "html.parser")
        if soup.find("script", src=lambda src: src and src.endswith("lite-guard.js")):
            continue
        src = Path(*[".."] * (len(page.relative_to(Path(app.outdir)).parts) - 1), "_static", "lite-guard.js")
        (soup.body or soup.html or soup).append(soup.new_tag("script", src=src.as_posix()))
        page.write_text(str(soup), encoding="utf8")


def setup(app):
    # After jupyterlite_sphinx's own config-inited handler, which empties its contents folder.
    app.connect("config-inited", prepare_lite, priority=600)
    # Before / after sphinx-book-theme builds its header buttons (priority 501).
    app.connect("html-page-context", offer_ipynb_download, priority=450)
    # After jupyterlite_sphinx has built the lite app (its build-finished handler, priority 500).
    app.connect("build-finished", guard_lite_pages, priority=700)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
