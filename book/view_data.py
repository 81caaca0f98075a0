"""Sphinx extension: the attention views' arrays and scripts are files the page fetches when needed.

``mha.explorers.attention_view`` and ``mha.explorers.browser`` write each view as one self-contained
output (its arrays as JSON, its script inline), so that a notebook works anywhere. On the site, at
``html-page-context`` (the page's body parsed with BeautifulSoup):

- each JSON larger than ``INLINE_LIMIT`` is written once to ``_images/views/<hash>.json`` and its
  ``<script>`` left empty with a ``data-src`` naming the file: ``attention_view.js`` fetches it when
  the view comes within two screens;
- each inlined copy of a view's script becomes ``<script src="_images/views/view-<hash>.js">``, one
  file per script, fetched once and cached, followed by the output's own one-line call to ``mount``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

VIEWS = "_images/views"
INLINE_LIMIT = 8_000  # characters: small views stay inline (one request fewer)
#: How the views' inlined script begins (attention_view.py; browser.view_html for the softmax,
#: query-key and quiz views): the library, then, on its last line, the call that draws this output.
LIBRARIES = ("/* The course's attention views", "/* What the course's browser views share")


def _stored(text: str, name: str, outdir: Path, url_of) -> str:
    """Write ``text`` once to ``_images/views/<name>`` (named by its hash: same text, same file) and
    return its URL from the page."""
    path = outdir / VIEWS / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf8")
    return url_of(f"{VIEWS}/{name}")


def data_to_files(soup, outdir: Path, url_of) -> int:
    """Move every large view-data script of the parsed page to a file (in place); return how many."""
    moved = 0
    for script in soup.select("script.mha-av-data[type='application/json']"):
        data = (script.string or "").replace("<\\/", "</")  # the output escaped "</" for the script
        if len(data) > INLINE_LIMIT:
            name = hashlib.sha256(data.encode("utf8")).hexdigest()[:20] + ".json"
            script["data-src"] = _stored(data, name, outdir, url_of)
            script.string = ""
            moved += 1
    return moved


def library_to_file(soup, outdir: Path, url_of) -> int:
    """Replace every inlined copy of the views' script by a reference to one file (in place)."""
    moved = 0
    for script in soup.find_all("script", src=False):
        text = script.string or ""
        if not text.startswith(LIBRARIES) or "\n" not in text:
            continue
        library, call = text.rsplit("\n", 1)
        name = f"view-{hashlib.sha256(library.encode('utf8')).hexdigest()[:16]}.js"
        # A script in the body without async runs before the next one: mount exists when it is called.
        script.insert_before(soup.new_tag("script", src=_stored(library, name, outdir, url_of)))
        script.string = call
        moved += 1
    return moved


def move_view_data(app, pagename, templatename, context, doctree) -> None:
    from bs4 import BeautifulSoup

    body = context.get("body")
    if body and ("mha-av" in body or LIBRARIES[1][3:] in body):
        soup = BeautifulSoup(body, "html.parser")

        def url_of(rel):
            return context["pathto"](rel, 1)

        if data_to_files(soup, Path(app.outdir), url_of) + library_to_file(soup, Path(app.outdir), url_of):
            context["body"] = str(soup)


def setup(app):
    app.connect("html-page-context", move_view_data)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
