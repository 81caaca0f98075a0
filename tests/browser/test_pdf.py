"""``make pdf``: the book as one PDF, opened and read back with pypdf.

Runs ``python -m book.pdf`` (what the Makefile target runs after its install step) on the built site,
once per session, in a process of its own, and reads the PDF as a reader's viewer would: its pages,
its bookmarks (one per page of the book, in book order, titled as the page), a chapter's title and
its text on the page the bookmark opens, an equation (KaTeX's glyphs, in KaTeX's embedded fonts) and
the figures (images).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from book.pdf import book_pages
from tests.browser.conftest import ROOT
from tests.conftest import CHROMIUM, missing

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def pdf(site, tmp_path_factory):
    """The printed book."""
    pypdf = pytest.importorskip("pypdf")
    if not CHROMIUM.exists():
        missing(f"no Chromium at {CHROMIUM}")
    out = tmp_path_factory.mktemp("pdf") / "book.pdf"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "book.pdf", "--site", str(site), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    print(f"{done.stdout.strip()} (the test measured {time.perf_counter() - started:.0f} s)")
    return pypdf.PdfReader(out)


def _title(docname: str) -> str:
    """The page's title as its source writes it (its first level-1 heading), as text (no code marks)."""
    text = (ROOT / f"{docname}.md").read_text(encoding="utf8")
    return re.search(r"^# (.+)$", text, re.M)[1].strip().replace("`", "")


def test_every_page_of_the_book_is_a_bookmark_in_book_order(pdf):
    pages = book_pages()
    assert len(pages) >= 20 and not any(name.startswith("api/") for name in pages)
    titles = [item.title for item in pdf.outline if not isinstance(item, list)]
    assert titles == [_title(name) for name in pages]
    starts = [pdf.get_destination_page_number(item) for item in pdf.outline if not isinstance(item, list)]
    assert starts == sorted(starts) and len(set(starts)) == len(starts), "a page printed empty"
    assert len(pdf.pages) > 3 * len(pages)  # a chapter is several sheets of A4


def test_a_chapter_starts_on_its_bookmark_with_its_title_and_its_text(pdf):
    title = _title("chapters/multi_head")
    chapter = next(item for item in pdf.outline if not isinstance(item, list) and item.title == title)
    text = " ".join(pdf.pages[pdf.get_destination_page_number(chapter)].extract_text().split())
    assert title in text and "By the end of this chapter you will be able to" in text
    printed = "".join(page.extract_text() for page in pdf.pages[:40])
    assert "127.0.0.1" not in printed, "a link to the print server"


def test_equations_are_typeset_in_katex_fonts(pdf):
    fonts = set()
    for page in pdf.pages[:60]:
        for font in (page.get("/Resources") or {}).get("/Font", {}).values():
            fonts.add(str(font.get_object().get("/BaseFont")))
    assert any("KaTeX_Math" in font for font in fonts) and any("KaTeX_Main" in font for font in fonts), fonts
    text = " ".join(" ".join(page.extract_text().split()) for page in pdf.pages[:60])
    assert "softmax" in text and "√" in text, "no typeset square root of a scaled dot product"


def test_figures_are_printed_as_images(pdf):
    images = sum(len(page.images) for page in pdf.pages)
    assert images >= 50, f"only {images} images in the PDF"
