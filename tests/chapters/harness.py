"""The harness that re-executes every notebook page of the book (fixtures in ``conftest.py``).

Notebook harness
----------------
``toc_notebooks()`` lists the pages in ``_toc.yml`` that are notebooks (``.ipynb``, or MyST ``.md``
with a ``kernelspec``), in book order; no chapter list is hard-coded. Any test in this folder that
takes the ``notebook_page`` argument runs once per such page (see ``test_notebooks.py``).

``run_notebook(page)`` converts the page with jupytext into a temporary folder and runs it with
``pytest --nbval-lax --nbval-current-env`` in a subprocess: a cell that raises fails the test.

Determinism: when the book has been built, ``_build/jupyter_execute/`` holds every page executed
with outputs. Those outputs are grafted into the converted notebook and text-only cells are tagged
``nbval-check-output``, so the test run checks that a second execution prints the same text
(after ``nbval_sanitize.cfg``). Cells with images or widgets, cells expected to raise, and
cells the author tagged ``nbval-ignore-output`` (timings, measured memory) are not compared.
Values glued into the prose (:func:`mha.lab.prose.glue`) leave the built notebook: myst-nb keeps them
in ``<page>.glue.json`` beside it. The test run records what each ``glue`` call hands over instead of
displaying it, and a last cell asserts that the record equals that file.
Without a build, or when the build is older than the page, the page is only re-executed.

Another BLAS kernel or thread count sums in another order, so a trained model prints other digits:
a run under a configuration other than the build's sets ``MHA_COMPARE_BUILD=0`` and only re-executes
(every assert still holds or the page fails; ``benchmarks/claims_ledger.py`` measures by how much).
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXECUTED = ROOT / "_build" / "jupyter_execute"
SANITIZE = Path(__file__).resolve().parent / "nbval_sanitize.cfg"

#: MIME types whose text is compared between the build and the test run.
TEXT_MIME_TYPES = {"text/plain", "text/html", "text/markdown", "text/latex"}
#: Tags that keep a cell's output out of the comparison.
UNCOMPARED_TAGS = {"nbval-ignore-output", "nbval-skip", "raises-exception", "skip-execution"}
CHECK_TAG = "nbval-check-output"
CELL_TIMEOUT_SECONDS = 300  # the book build's execute.timeout


@dataclass(frozen=True)
class NotebookPage:
    """A page of the book that is a notebook."""

    docname: str  # e.g. "chapters/multi_head"
    path: Path

    def __str__(self) -> str:  # the test id
        return self.docname


def toc_notebooks(root: Path = ROOT) -> list[NotebookPage]:
    """Every notebook page listed in ``_toc.yml``, in book order."""
    from book.toc import notebook_pages

    return [NotebookPage(docname, path) for docname, path in notebook_pages(root).items()]


def _code_sources(nb) -> list[str]:
    return [cell.source.strip() for cell in nb.cells if cell.cell_type == "code"]


def _text_only(outputs) -> bool:
    """True when every output is text that can be compared verbatim."""
    for output in outputs:
        if output.output_type == "stream":
            continue
        if output.output_type in {"execute_result", "display_data"}:
            if set(output.get("data", {})) <= TEXT_MIME_TYPES:
                continue
        return False
    return True


def graft_build_outputs(nb, executed) -> int | None:
    """Copy outputs of the built notebook into ``nb``; tag text-only cells for comparison.

    Returns the number of cells tagged ``nbval-check-output``, or None (and grafts nothing)
    when the two notebooks' code differs, i.e. the build is stale.
    """
    if _code_sources(nb) != _code_sources(executed):
        return None
    built_cells = [cell for cell in executed.cells if cell.cell_type == "code"]
    tagged = 0
    for cell, built in zip(
        (c for c in nb.cells if c.cell_type == "code"), built_cells, strict=True
    ):
        cell.outputs = built.outputs
        cell.execution_count = built.get("execution_count")
        tags = cell.metadata.setdefault("tags", [])
        if built.outputs and _text_only(built.outputs) and not UNCOMPARED_TAGS & set(tags):
            tags.append(CHECK_TAG)
            tagged += 1
    return tagged


def convert_page(page: NotebookPage, folder: Path, *, executed_root: Path = EXECUTED) -> Path:
    """Write ``page`` as an .ipynb in ``folder``, with build outputs grafted when available."""
    import jupytext
    import nbformat

    # fmt forced: without `extension: .md` in its header jupytext would not see a page as MyST
    nb = jupytext.read(page.path, fmt="md:myst" if page.path.suffix == ".md" else None)
    built = executed_root / f"{page.docname}.ipynb"
    compared = False
    if built.is_file() and os.environ.get("MHA_COMPARE_BUILD", "1") != "0":
        compared = graft_build_outputs(nb, nbformat.read(built, as_version=4)) is not None
        if not compared:
            warnings.warn(
                f"{built} does not match {page.path.name} (stale build?): "
                "re-executing without comparing outputs",
                stacklevel=2,
            )
    # The build runs each page in its own folder; do the same so relative paths resolve.
    chdir = nbformat.v4.new_code_cell(
        f"import os\nos.chdir({str(page.path.parent)!r})",
        metadata={"tags": ["nbval-ignore-output"]},
    )
    nb.cells.insert(0, chdir)
    glue_file = built.with_suffix(".glue.json")
    if compared and glue_file.is_file():
        _compare_glued_values(nb, glue_file)
    target = folder / f"{page.docname.replace('/', '__')}.ipynb"
    nbformat.write(nb, target)
    return target


_RECORD_GLUE = """\
import IPython, myst_nb
_mha_glued, _mha_unchecked, _mha_glue_ignored = {}, set(), False
def _mha_record_glue(name, variable, display=True):
    bundle, _ = IPython.core.formatters.format_display_data(variable)
    _mha_glued[name] = bundle.get("text/plain")
    if _mha_glue_ignored:  # glued by a cell whose output is not compared (a timing, a memory)
        _mha_unchecked.add(name)
myst_nb.glue = _mha_record_glue"""

_CHECK_GLUE = """\
_mha_built = {built!r}
_mha_differ = {{k: (_mha_built.get(k), _mha_glued.get(k))
               for k in (_mha_built.keys() | _mha_glued.keys()) - _mha_unchecked
               if _mha_built.get(k) != _mha_glued.get(k)}}
assert not _mha_differ, f"glued values (build, this run) differ: {{_mha_differ}}"
"""


def _compare_glued_values(nb, glue_file: Path) -> None:
    """Record every ``glue`` of the run (cell 1) and compare the record with the build's (last cell)."""
    import nbformat

    from book.plain_markdown import glue_file_values

    ignore = {"tags": ["nbval-ignore-output"]}
    for cell in nb.cells[1:]:  # after the chdir cell: each says whether its glued values are compared
        if cell.cell_type == "code" and not cell.source.startswith("%%"):
            unchecked = bool(UNCOMPARED_TAGS & set(cell.metadata.get("tags", [])))
            cell.source = f"_mha_glue_ignored = {unchecked}\n{cell.source}"
    nb.cells.insert(1, nbformat.v4.new_code_cell(_RECORD_GLUE, metadata=ignore))
    check = _CHECK_GLUE.format(built=glue_file_values(glue_file))
    nb.cells.append(nbformat.v4.new_code_cell(check, metadata=ignore))


@dataclass
class NotebookRun:
    returncode: int
    output: str


def run_converted(notebook: Path) -> NotebookRun:
    """Run one converted notebook under nbval (lax) in a fresh pytest process."""
    folder = notebook.parent
    ini = folder / "pytest.ini"
    ini.write_text("[pytest]\n", encoding="utf8")  # keep the repo's addopts/filterwarnings out
    command = [
        sys.executable, "-m", "pytest", str(notebook),
        "-c", str(ini), "--rootdir", str(folder), "-p", "no:cacheprovider",
        "--nbval-lax", "--nbval-current-env", "--nbval-sanitize-with", str(SANITIZE),
        "--nbval-cell-timeout", str(CELL_TIMEOUT_SECONDS), "-q", "--color=no",
    ]  # fmt: skip
    # As in the book build (book/lean_site.py): no progress bars, so outputs compare with the build's.
    env = {**os.environ, "TQDM_DISABLE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder, env=env)
    return NotebookRun(done.returncode, done.stdout + done.stderr)
