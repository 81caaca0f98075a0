"""Every notebook page in _toc.yml runs top to bottom, and prints what the book build printed.

The harness lives in harness.py and conftest.py (``toc_notebooks``, ``run_notebook``); this file only asks
for one run per page.
"""

import pytest

pytestmark = pytest.mark.notebooks


def test_page_executes_and_reproduces_build_output(notebook_page, run_notebook):
    run = run_notebook(notebook_page)
    assert run.returncode == 0, f"{notebook_page.path} failed under nbval:\n{run.output}"


# --- the harness itself, on a throwaway page ----------------------------------------------------

PAGE = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---
# A page

```{{code-cell}} ipython3
print(sum(range({n})))
```

```{{code-cell}} ipython3
:tags: [nbval-ignore-output]
import time
print(time.perf_counter())
```
"""


def _page(tmp_path, n, name="page"):
    from tests.chapters.harness import NotebookPage

    path = tmp_path / f"{name}.md"
    path.write_text(PAGE.format(n=n), encoding="utf8")
    return NotebookPage(name, path)


def _build(tmp_path, page):
    """What the book build leaves in _build/jupyter_execute: the page run with outputs."""
    import json

    import jupytext
    import nbformat
    from myst_nb.ext.glue import extract_glue_data
    from nbclient import NotebookClient

    nb = jupytext.read(page.path, fmt="md:myst")
    NotebookClient(nb, kernel_name="python3").execute()
    executed_root = tmp_path / "jupyter_execute"
    executed_root.mkdir()
    # as myst-nb does: the glue outputs leave the notebook for <page>.glue.json
    glued = extract_glue_data(nb, [0] * len(nb.cells), logger=None)
    if glued:
        (executed_root / f"{page.docname}.glue.json").write_text(json.dumps(glued), encoding="utf8")
    nbformat.write(nb, executed_root / f"{page.docname}.ipynb")
    return executed_root


def test_harness_passes_when_a_rerun_prints_the_same(tmp_path):
    from tests.chapters.harness import convert_page, run_converted

    page = _page(tmp_path, 10)
    converted = convert_page(page, tmp_path, executed_root=_build(tmp_path, page))
    run = run_converted(converted)
    assert run.returncode == 0, run.output


def test_harness_fails_when_a_rerun_prints_something_else(tmp_path):
    from tests.chapters.harness import convert_page, run_converted

    built_page = _page(tmp_path, 10)
    executed_root = _build(tmp_path, built_page)
    # Same code, but the printed number changes between build and test (a non-deterministic page)
    executed = executed_root / "page.ipynb"
    executed.write_text(executed.read_text().replace('"45\\n"', '"46\\n"'))
    run = run_converted(convert_page(built_page, tmp_path, executed_root=executed_root))
    assert run.returncode != 0
    assert "46" in run.output and "45" in run.output


def test_harness_fails_when_a_cell_raises(tmp_path):
    from tests.chapters.harness import convert_page, run_converted

    page = _page(tmp_path, "'not a number'")  # range('...') raises TypeError
    run = run_converted(convert_page(page, tmp_path, executed_root=tmp_path / "no-build"))
    assert run.returncode != 0
    assert "TypeError" in run.output


def test_stale_build_is_not_compared(tmp_path):
    import nbformat

    from tests.chapters.harness import convert_page

    executed_root = _build(tmp_path, _page(tmp_path, 10))
    edited = _page(tmp_path, 20)  # the page changed after the build
    with pytest.warns(UserWarning, match="stale build"):
        converted = convert_page(edited, tmp_path, executed_root=executed_root)
    nb = nbformat.read(converted, as_version=4)
    assert not any("nbval-check-output" in c.metadata.get("tags", []) for c in nb.cells)


def test_a_run_under_another_blas_configuration_only_re_executes(tmp_path, monkeypatch):
    """MHA_COMPARE_BUILD=0: another kernel prints other digits; the page must still run to the end."""
    from tests.chapters.harness import convert_page, run_converted

    built_page = _page(tmp_path, 10)
    executed_root = _build(tmp_path, built_page)
    executed = executed_root / "page.ipynb"
    executed.write_text(executed.read_text().replace('"45\\n"', '"46\\n"'))
    monkeypatch.setenv("MHA_COMPARE_BUILD", "0")
    run = run_converted(convert_page(built_page, tmp_path, executed_root=executed_root))
    assert run.returncode == 0, run.output


def test_glued_values_are_compared_with_the_build(tmp_path):
    """A number glued into the prose is output like any other: a rerun must glue the same."""
    from tests.chapters.harness import NotebookPage, convert_page, run_converted

    page = tmp_path / "glued.md"
    cell = "```{code-cell} ipython3\nfrom mha.lab.prose import glue\nglue('total', sum(range(10)))\n```\n"
    page.write_text(PAGE.split("```{code-cell}")[0] + cell, encoding="utf8")
    glued = NotebookPage("glued", page)
    executed_root = _build(tmp_path, glued)
    glue_file = executed_root / "glued.glue.json"
    assert "papermill" not in (executed_root / "glued.ipynb").read_text()  # as in the book's build
    same = run_converted(convert_page(glued, tmp_path, executed_root=executed_root))
    assert same.returncode == 0, same.output
    glue_file.write_text(glue_file.read_text().replace('"45"', '"46"'))
    run = run_converted(convert_page(glued, tmp_path, executed_root=executed_root))
    assert run.returncode != 0 and "'46'" in run.output and "'45'" in run.output


def test_a_value_glued_by_a_cell_whose_output_is_not_compared_is_not_compared(tmp_path):
    """A timing glued from a cell tagged nbval-ignore-output differs on every run, as its output does."""
    from tests.chapters.harness import NotebookPage, convert_page, run_converted

    page = tmp_path / "timed.md"
    cells = ("```{code-cell} ipython3\n:tags: [nbval-ignore-output]\n\nimport time\n"
             "from mha.lab.prose import glue\nglue('now', time.perf_counter())\n```\n\n"
             "```{code-cell} ipython3\nglue('total', sum(range(10)))\n```\n")
    page.write_text(PAGE.split("```{code-cell}")[0] + cells, encoding="utf8")
    timed = NotebookPage("timed", page)
    executed_root = _build(tmp_path, timed)
    run = run_converted(convert_page(timed, tmp_path, executed_root=executed_root))
    assert run.returncode == 0, run.output
    glue_file = executed_root / "timed.glue.json"
    glue_file.write_text(glue_file.read_text().replace('"45"', '"46"'))
    run = run_converted(convert_page(timed, tmp_path, executed_root=executed_root))
    assert run.returncode != 0 and "differ: {'total': ('46', '45')}" in run.output  # 'now' is not compared
