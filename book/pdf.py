"""The whole book as one PDF, printed from the built site: ``make pdf`` (after ``make book``).

Each page of ``_toc.yml`` (the API reference only with ``--api``) is opened from ``_build/html`` in
Debian's Chromium (Playwright, as the browser tests do), made whole for paper, printed, and the pages
are joined in book order with pypdf, one bookmark per page over the headings Chromium outlines.
Nothing is built or executed again (a single-page Sphinx build would re-run every notebook) and no
LaTeX is needed: the math is typeset already (KaTeX), every file comes from the build.

Made whole for paper: every figure loaded (an explorer shows its first frame), every section laid
out, and links to other pages of the site turned into plain text (a printed link to ``127.0.0.1``
leads nowhere); links out of the site and within a page stay links.

Usage: ``python -m book.pdf [--site _build/html] [--out _build/pdf/multi-head-attention.pdf] [--api]
[docname ...]``.
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

from book.site_weight import CHROMIUM_ARGS, serve
from book.toc import toc_docnames

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
MARGINS = {"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"}

#: Load every figure (an explorer shows its first frame) and font; unlink links to the site.
READY_JS = """async () => {
  document.querySelectorAll('img[loading="lazy"]').forEach((img) => { img.loading = 'eager'; });
  document.querySelectorAll('article a[href]').forEach((a) => {
    const target = new URL(a.href, location.href);
    if (target.origin === location.origin && target.pathname !== location.pathname) a.removeAttribute('href');
  });
  await Promise.all([...document.images].map((img) => img.complete ? null
    : new Promise((done) => { img.onload = img.onerror = done; })));
  await document.fonts.ready;
  return document.querySelector('article h1, main h1')?.textContent.replace('#', '').trim() || document.title;
}"""
#: What assets/mha-site.js says when every section is laid out.
DONE = """() => !('mhaMeasured' in document.documentElement.dataset)
  || document.documentElement.dataset.mhaMeasured === 'done'"""


def book_pages(root: Path = ROOT, api: bool = False) -> list[str]:
    """The pages printed, in book order: every page of the toc, the API reference only if ``api``."""
    return [name for name in toc_docnames(root) if api or not name.startswith("api/")]


def print_book(site: Path, out: Path, docnames: list[str]) -> dict[str, int]:
    """Print ``docnames`` of the built ``site`` into one PDF at ``out``; return each page's first PDF page."""
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    missing = [name for name in docnames if not (site / f"{name}.html").is_file()]
    if missing:
        raise SystemExit(f"{site} has no {', '.join(missing)}: build the book first (make book)")
    out.parent.mkdir(parents=True, exist_ok=True)
    writer, starts = PdfWriter(), {}
    url, server = serve(site)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for docname in docnames:
                page.goto(f"{url}/{docname}.html", wait_until="load", timeout=300_000)
                title = page.evaluate(READY_JS)
                page.wait_for_function(DONE, timeout=300_000)
                page.emulate_media(media="print")
                printed = page.pdf(format="A4", print_background=True, outline=True, tagged=True,
                                   margin=MARGINS)
                page.emulate_media(media="screen")
                starts[docname] = len(writer.pages)
                writer.append(PdfReader(io.BytesIO(printed)), outline_item=title)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    writer.add_metadata({"/Title": "Multi-Head Attention, an interactive course"})
    with out.open("wb") as file:
        writer.write(file)
    return starts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "pdf" / "multi-head-attention.pdf")
    parser.add_argument("--api", action="store_true", help="print the API reference's pages too")
    parser.add_argument("docnames", nargs="*", help="only these pages (default: the book)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    starts = print_book(args.site, args.out, args.docnames or book_pages(api=args.api))
    size = args.out.stat().st_size / 1e6
    print(f"printed {len(starts)} pages of {args.site} to {args.out} ({size:.1f} MB) "
          f"in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
