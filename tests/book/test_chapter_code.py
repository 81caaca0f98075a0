"""Chapter code reads on a page: no line of a code cell, or of a plain code block (```python, ```bash,
```text ...) in the prose, longer than 88 characters (no sideways scrolling)."""

from __future__ import annotations

import re

import pytest

from book.toc import notebook_pages, toc_docnames
from tests.chapters.harness import ROOT

LIMIT = 88


def code_lines(path):
    """(line number, text) of every line inside a code cell's code (not its metadata)."""
    lines = path.read_text(encoding="utf8").splitlines()
    inside = header = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```{code-cell}"):
            inside, header = True, True
            continue
        if inside and line.startswith("```"):
            inside = False
        elif inside and header and (line.startswith(":") or line.strip() in {"", "---"}):
            if line.strip() == "---":  # a YAML metadata block: skip to its closing ---
                header = "yaml" if header is True else False
            continue
        elif inside and header == "yaml":
            continue
        elif inside:
            header = False
            yield number, line


def block_lines(path):
    """(line number, text) of every line of a plain fenced code block (not a directive, not a cell)."""
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
        opening = re.match(r"^\s*(`{3,}|~{3,})([^`{\s]*)\s*$", line)
        if fence is None and opening and opening.group(2):  # ```python, ```text ... (not ``` alone)
            fence = opening.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is not None:
            yield number, line


@pytest.mark.parametrize("docname", list(notebook_pages(ROOT)))
def test_chapter_code_lines_fit_88_characters(docname):
    path = notebook_pages(ROOT)[docname]
    lines = [*code_lines(path), *block_lines(path)]
    long = [f"{path.name}:{n} ({len(line)} chars)" for n, line in lines if len(line) > LIMIT]
    assert long == [], f"code lines over {LIMIT} characters: {long}"


@pytest.mark.parametrize("docname", [name for name in toc_docnames(ROOT) if name not in notebook_pages(ROOT)])
def test_code_blocks_of_the_other_pages_fit_88_characters(docname):
    """The pages that run no code (the teachers' guide, the glossary ...) show code blocks too."""
    (path,) = [path for path in (ROOT / f"{docname}.md", ROOT / f"{docname}.ipynb") if path.is_file()]
    long = [f"{path.name}:{n} ({len(line)} chars)" for n, line in block_lines(path) if len(line) > LIMIT]
    assert long == [], f"code lines over {LIMIT} characters: {long}"
