"""Bytes a reader downloads for one page of the built book: its HTML and every local file it references.

Usage (from the repository root, after ``make book``):

    python benchmarks/page_weight.py chapters/real_heads            # reads _build/html
    python benchmarks/page_weight.py chapters/real_heads --site other/_build/html

Prints the HTML's size, the page's own images (``_images/``), the shared theme/vendor files (``_static/``,
cached across pages) and the total. Files loaded later by scripts (MathJax fonts, widget fonts) are not
counted: only what the HTML names; links to other pages and to the page's source download are not.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

REFERENCE = re.compile(r"""(?:src|href)=["']([^"'#?]+)""")


def page_weight(site: Path, docname: str) -> dict[str, int]:
    """``{"html": bytes, "images": bytes, "shared": bytes, "total": bytes}`` for ``docname``."""
    page = site / f"{docname}.html"
    text = page.read_text(encoding="utf8")
    sizes = {"html": page.stat().st_size, "images": 0, "shared": 0}
    seen = set()
    for reference in REFERENCE.findall(text):
        if urlparse(reference).scheme or reference.startswith(("//", "mailto:")):
            continue
        target = (page.parent / unquote(reference)).resolve()
        if target in seen or not target.is_file() or target.suffix == ".html" or "_sources" in target.parts:
            continue  # links to other pages and the source download are not loaded with the page
        seen.add(target)
        kind = "images" if "_images" in target.parts else "shared"
        sizes[kind] += target.stat().st_size
    sizes["total"] = sum(sizes.values())
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docname", help="e.g. chapters/real_heads")
    parser.add_argument("--site", type=Path, default=Path("_build/html"))
    args = parser.parse_args(argv)
    sizes = page_weight(args.site, args.docname)
    print(f"{args.docname}: " + ", ".join(f"{kind} {size / 1e6:.2f} MB" for kind, size in sizes.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
