"""No number a cell computes is typed into a chapter's prose: measured-looking numbers are glued.

A sentence that quotes "0.61" or "92 %" next to the output that computed it drifts from that output on
the next CPU (another BLAS kernel sums in another order). Chapters hand such numbers to the prose with
``mha.lab.glue`` and ``{glue:text}``. This test reads every notebook page's prose (code, maths and roles
taken out) and lists the numbers that *look* measured: decimals, percentages, "N times". Each must be
listed, with its reason, in ``typed_numbers.toml`` beside this file: a published figure (with its
source), exact arithmetic, an input the code also types, or a recorded benchmark run (with its file).
A listed number that is no longer in the page is stale and fails too.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = Path(__file__).with_name("typed_numbers.toml")

#: What a reader does not read as a quoted number: code, maths, roles (a glued value among them),
#: links, directive and option lines, exercise boxes' difficulty and minutes.
STRIP = [re.compile(pattern, flags) for pattern, flags in [
    (r"```.*?```", re.S), (r"\$\$.*?\$\$", re.S), (r"\$[^$\n]*\$", 0), (r"\{[a-z][\w:-]*\}`[^`]*`", 0),
    (r"`[^`]*`", 0), (r"\]\([^)]*\)", 0), (r"^\s*:[\w-]+:.*$", re.M),
    (r"\*\*(core · )?[★☆]{3} · \d+ min\.\*\*", 0),
]]
NUMBER = r"\d{1,3}(?:[, ]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
MEASURED = re.compile(rf"(?<![\w.,])(?:(?:{NUMBER})\s?(?:%|×|times\b)|\d+\.\d+)")


def prose_numbers(text: str) -> list[str]:
    """The measured-looking numbers of one markdown cell, as written (``0.61``, ``92 %``, ``2 times``)."""
    for pattern in STRIP:
        text = pattern.sub(" ", text)
    return [" ".join(m.group(0).split()) for m in MEASURED.finditer(text)]


def page_numbers() -> dict[str, list[str]]:
    import jupytext

    from book.toc import notebook_pages

    found = {}
    for docname, path in notebook_pages(ROOT).items():
        nb = jupytext.read(path, fmt="md:myst")
        found[docname] = [n for cell in nb.cells if cell.cell_type == "markdown"
                          for n in prose_numbers(cell.source)]
    return found


@pytest.mark.parametrize(("text", "numbers"), [
    ("It puts 0.61 of its weight and 92 % of it, 3.5 times more.", ["0.61", "92 %", "3.5 times"]),
    ("It grew 1,000 times, then 16 384 times; 12 heads in 2024.", ["1,000 times", "16 384 times"]),
    ("Glued: {glue:text}`share:.2f`, code `x = 0.5`, maths $0.25$ and $$1.5$$.", []),
    ("**core · ★☆☆ · 10 min.** Section 3.2 of [a paper](https://x.org/v1.2).", ["3.2"]),
])
def test_the_scanner_finds_what_looks_measured_and_nothing_else(text, numbers):
    assert prose_numbers(text) == numbers


def test_every_typed_measured_looking_number_is_listed_with_its_reason():
    allowed = tomllib.loads(ALLOWED.read_text(encoding="utf8"))
    for entries in allowed.values():
        for entry in entries:
            assert entry.get("why", "").strip(), f"{entry}: say why it is typed"
    unlisted, stale = [], []
    for docname, numbers in page_numbers().items():
        listed = {entry["number"] for entry in allowed.get(docname, [])}
        unlisted += [f"{docname}: {n}" for n in sorted(set(numbers) - listed)]
        stale += [f"{docname}: {n}" for n in sorted(listed - set(numbers))]
    assert unlisted == [], ("glue these numbers from the cells that compute them, or list them with a "
                            f"reason in {ALLOWED.name}: {unlisted}")
    assert stale == [], f"listed in {ALLOWED.name} but no longer in the page: {stale}"
