"""book.plain_markdown: the notebooks readers download or open in JupyterLite show no raw MyST markup."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from book.plain_markdown import citation_labels, notebook_as_plain_markdown, plain_markdown
from book.toc import toc_docnames

ROOT = Path(__file__).resolve().parents[2]
#: What Jupyter would show raw: a role, a directive fence, a target line.
MYST = re.compile(r"\{[a-z][a-z:-]*\}`|^\s*(?:`{3,}|:{3,})\{|^\(\S+\)=\s*$", re.M)
CITATIONS = {"v17": ("Vaswani et al.", "2017"), "mg18": ("Milakov and Gimelshein", "2018")}


@pytest.mark.parametrize(("myst", "plain"), [
    ("{term}`heads <attention head>`", "heads"),
    ("{term}`softmax`", "softmax"),
    ("{doc}`multi_head`", "multi head"),
    ("{doc}`the shapes chapter <shapes>`", "the shapes chapter"),
    ("{ref}`how-many-heads`", "how many heads"),
    ("{cite:t}`v17`", "Vaswani et al. (2017)"),
    ("{cite}`v17,mg18`", "(Vaswani et al., 2017; Milakov and Gimelshein, 2018)"),
    ("{cite:p}`unknown`", "(unknown)"),
    ("{math}`\\sqrt{d}`", "$\\sqrt{d}$"),
])
def test_roles_become_their_text(myst, plain):
    assert plain_markdown(f"See {myst} here.", CITATIONS) == f"See {plain} here."


def test_a_box_becomes_a_titled_quote_with_its_roles_resolved():
    myst = "```{exercise} Split heads\n:label: ex-split\n\n**★☆☆** Use {term}`strides <stride>`.\n```"
    assert plain_markdown(myst) == "> **Exercise: Split heads**\n>\n> **★☆☆** Use strides."
    assert plain_markdown("```{admonition} Before you start\n:class: tip\n- one\n```") == \
        "> **Before you start**\n>\n> - one"


def test_nested_directives_and_plain_code_blocks():
    myst = "````{tip}\nOuter.\n```{note}\nInner {term}`head`.\n```\n````"
    assert plain_markdown(myst) == "> **Tip**\n>\n> Outer.\n> > **Note**\n> >\n> > Inner head."
    code = "```python\nx = '{term}`not a role`'\n```"
    assert plain_markdown(code) == code  # code is shown as written


def test_targets_comments_and_markers_are_dropped():
    myst = "(how-many-heads)=\n## How many heads?\n% a note for authors\n````{solution-end}\n````\nText."
    assert plain_markdown(myst) == "## How many heads?\nText."


def test_literalinclude_shows_the_included_source(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text(
        "X = 1\n\n\n@staticmethod\ndef f(a):\n    return a + 1\n\n\ndef g():\n    pass\n")
    page = tmp_path / "chapters" / "page.md"
    page.parent.mkdir()
    shown = plain_markdown("```{literalinclude} ../pkg/mod.py\n:pyobject: f\n```", page=page)
    assert shown == "From `pkg/mod.py`, `f`:\n\n```python\n@staticmethod\ndef f(a):\n    return a + 1\n```"
    missing = plain_markdown("```{literalinclude} ../pkg/nope.py\n```", page=page)
    assert missing == "*(Source: `pkg/nope.py`.)*"


def test_the_book_bibliography_gives_author_year_labels():
    labels = citation_labels(ROOT / "references.bib")
    assert labels["vaswani2017attention"] == ("Vaswani et al.", "2017")
    assert all(year.isdigit() and authors for authors, year in labels.values())


def test_no_chapter_notebook_keeps_raw_myst_in_its_markdown():
    import jupytext

    citations = citation_labels(ROOT / "references.bib")
    for docname in toc_docnames(ROOT):
        page = ROOT / f"{docname}.md"
        if not page.is_file() or "kernelspec" not in page.read_text()[:400]:
            continue
        nb = notebook_as_plain_markdown(jupytext.read(page), citations, page=page)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            outside_code = re.sub(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1\s*$", "", cell.source, flags=re.S | re.M)
            leftover = MYST.findall(outside_code)
            assert not leftover, f"{docname}: {leftover} left in\n{cell.source[:300]}"


def test_a_deep_dive_says_where_the_optional_part_starts_and_ends():
    myst = ("```{deep-dive-start} The {term}`softmax` inside\nHow it guards NaN.\n```\n\nText.\n\n"
            "```{deep-dive-end}\n```\n\nAfter.")
    plain = plain_markdown(myst)
    assert plain.startswith("> **Deep dive (off the core path): The softmax inside.** On the core path, "
                            "skip to the end of the deep dive.\n>\n> How it guards NaN.\n\nText.")
    assert plain.endswith("*End of the deep dive.*\n\nAfter.")
    assert not MYST.search(plain)


def test_glued_numbers_show_the_build_value_formatted_or_say_the_code_computes_them():
    glued = {"exact": "0.921875", "params": "49012"}
    text = ("Solved {glue:text}`exact:.1%` of them with {glue:text}`params:,d` weights; "
            "{glue:text}`later:.2f`.")
    assert plain_markdown(text, glued=glued) == (
        "Solved 92.2% of them with 49,012 weights; *(later: computed by the code)*.")


def test_an_executed_notebook_shows_what_its_cells_glued():
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("glue('share', 0.6133)")
    cell.outputs = [nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "0.6133"},
        metadata={"scrapbook": {"name": "share", "mime_prefix": "application/papermill.record/"}})]
    nb.cells = [cell, nbformat.v4.new_markdown_cell("A share of {glue:text}`share:.2f`.")]
    notebook_as_plain_markdown(nb)
    assert nb.cells[1].source == "A share of 0.61."
    assert MYST.search(nb.cells[1].source) is None


def test_the_downloaded_notebook_quotes_the_values_the_build_kept_beside_it(tmp_path):
    """myst-nb moves glue outputs out of the executed notebook into <page>.glue.json."""
    import json

    import nbformat

    from book.lite_site import downloadable_notebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("glue('share', 0.6133)"),
                nbformat.v4.new_markdown_cell("A share of {glue:text}`share:.1%`.")]
    executed = tmp_path / "page.ipynb"
    nbformat.write(nb, executed)
    without = downloadable_notebook(executed)
    assert "computed by the code" in without.cells[-1].source
    (tmp_path / "page.glue.json").write_text(json.dumps(
        {"share": {"output_type": "display_data", "data": {"text/plain": "0.6133"}, "metadata": {}}}))
    assert downloadable_notebook(executed).cells[-1].source == "A share of 61.3%."
