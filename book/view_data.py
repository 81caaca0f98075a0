"""Sphinx extension: the attention views' arrays are files the page fetches when the views near the screen.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. ``mha.explorers.attention_view`` writes
each view's arrays (base64 weights, queries and keys) into its HTML output as JSON, so that a notebook
works anywhere. On the book's site those arrays were a quarter of a megabyte of barely compressible
text in "Real heads" before its first paragraph could paint. Every such JSON larger than
``INLINE_LIMIT`` is written once to ``_images/views/<hash>.json`` and its ``<script>`` left empty with
a ``data-src`` that names the file; ``attention_view.js`` fetches it when the view comes within two
screens (``mount``).

A view's script (``attention_view.js``, 28 kB; ``view_base.js`` and the quiz, softmax or query-key
view's own) comes inlined in every output, so that an output runs anywhere; a page with three views
carried it three times. On the site each copy becomes a reference to one file per script,
``_images/views/view-<hash>.js``, fetched once and cached, followed by the output's own one-line call
to ``mount``.
"""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

VIEWS = "_images/views"
INLINE_LIMIT = 8_000  # characters: small views stay inline (one request fewer)
DATA = re.compile(r'<script type="application/json" class="mha-av-data">(.*?)</script>', re.S)
# The scripts the views inline (attention_view.py; browser.view_html for the softmax, query-key and quiz
# views): the library, then the call that draws this output.
LIBRARY = re.compile(r"<script>(/\* (?:The course's attention views"
                     r"|What the course's browser views share).*?)\n"
                     r"(window\.[\w.]+\(document\.getElementById\(\"[\w-]+\"\)\);)</script>",
                     re.S)


def _stored(text: str, name: str, outdir: Path, url_of) -> str:
    """Write ``text`` once to ``_images/views/<name>`` (named by its hash: same text, same file) and
    return its URL from the page, escaped for an attribute."""
    path = outdir / VIEWS / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf8")
    return html.escape(url_of(f"{VIEWS}/{name}"))


def data_to_files(body: str, outdir: Path, url_of) -> tuple[str, int]:
    """``body`` with every large view-data script moved to a file; and how many were moved."""
    moved = 0

    def move(match: re.Match) -> str:
        nonlocal moved
        text = match.group(1)
        if len(text) <= INLINE_LIMIT:
            return match.group(0)
        data = text.replace("<\\/", "</")  # the output escaped "</" for the script element
        name = hashlib.sha256(data.encode("utf8")).hexdigest()[:20] + ".json"
        url = _stored(data, name, outdir, url_of)
        moved += 1
        return f'<script type="application/json" class="mha-av-data" data-src="{url}"></script>'

    return DATA.sub(move, body), moved


def library_to_file(body: str, outdir: Path, url_of) -> tuple[str, int]:
    """``body`` with every inlined copy of the views' script replaced by a reference to one file."""
    moved = 0

    def move(match: re.Match) -> str:
        nonlocal moved
        library, call = match.group(1), match.group(2)
        name = f"view-{hashlib.sha256(library.encode('utf8')).hexdigest()[:16]}.js"
        url = _stored(library, name, outdir, url_of)
        moved += 1
        # A script in the body without async runs before the next one: mount exists when it is called.
        return f'<script src="{url}"></script><script>{call}</script>'

    return LIBRARY.sub(move, body), moved


def move_view_data(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if body and ("mha-av" in body or "What the course's browser views share" in body):
        def url_of(rel):
            return context["pathto"](rel, 1)

        body, _ = data_to_files(body, Path(app.outdir), url_of)
        context["body"], _ = library_to_file(body, Path(app.outdir), url_of)


def setup(app):
    app.connect("html-page-context", move_view_data)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
