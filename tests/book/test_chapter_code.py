"""Chapter code reads on a page: no code-cell line longer than 88 characters (no sideways scrolling)."""

from __future__ import annotations

import pytest

from book.toc import notebook_pages
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


@pytest.mark.parametrize("docname", list(notebook_pages(ROOT)))
def test_chapter_code_lines_fit_88_characters(docname):
    path = notebook_pages(ROOT)[docname]
    long = [f"{path.name}:{n} ({len(line)} chars)" for n, line in code_lines(path) if len(line) > LIMIT]
    assert long == [], f"code lines over {LIMIT} characters: {long}"
