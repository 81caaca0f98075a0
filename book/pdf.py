"""Print the whole book to one PDF, offline: ``make pdf`` (not part of ``make book``).

``make pdf`` first builds the book as a single HTML page (``jupyter-book build --builder singlehtml``,
into ``_build/singlehtml``), then this script prints that page with Debian's Chromium (Playwright,
as the browser tests do), after drawing every widget (each explorer shows its first frame) and
loading every figure. No LaTeX installation is needed, and nothing is fetched from the network: the
math is already typeset (KaTeX) and every file comes from the build.

Usage: ``python -m book.pdf [--site _build/singlehtml] [--out _build/pdf/multi-head-attention.pdf]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from book.site_weight import CHROMIUM_ARGS, serve

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"

#: Every lazy figure loads now, every formula's fonts have arrived.
READY_JS = """async () => {
  document.querySelectorAll('img[loading="lazy"]').forEach((img) => { img.loading = 'eager'; });
  await Promise.all([...document.images].map((img) => img.complete ? null
    : new Promise((done) => { img.onload = img.onerror = done; })));
  await document.fonts.ready;
  return document.images.length;
}"""


def print_book(site: Path, out: Path, page_name: str = "index.html") -> Path:
    """Print ``site/<page_name>`` (by default a single-page build's one page) to ``out``; return ``out``."""
    from playwright.sync_api import sync_playwright

    page_file = site / page_name
    if not page_file.is_file():
        raise SystemExit(f"{page_file} is missing: build it first (make pdf does)")
    out.parent.mkdir(parents=True, exist_ok=True)
    url, server = serve(site)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{url}/{page_name}", wait_until="load", timeout=300_000)
            views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
            if views:
                page.evaluate("window.mhaWidgets.load()")
                page.wait_for_function(f"document.querySelectorAll('.widget-subarea').length >= {views}",
                                       timeout=300_000)  # fmt: skip
            images = page.evaluate(READY_JS)
            page.emulate_media(media="print")
            page.pdf(path=str(out), format="A4", print_background=True, outline=True, tagged=True,
                     margin={"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"})
            browser.close()
    finally:
        server.shutdown()
    print(f"printed {page_file} ({views} widgets, {images} images) to {out} "
          f"({out.stat().st_size / 1e6:.1f} MB)")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "singlehtml")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "pdf" / "multi-head-attention.pdf")
    parser.add_argument("--page", default="index.html", help="one page of --site (e.g. to try a chapter)")
    args = parser.parse_args()
    print_book(args.site, args.out, args.page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
