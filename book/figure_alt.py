"""Sphinx extension: give notebook figures their alt text.

Figures from ``mha.plotting`` store a description in their PNG (the ``Description`` text chunk, see
``mha.plotting.style``). myst-nb writes notebook images without alt text unless a cell sets
``mystnb: {image: {alt: ...}}``; this extension reads the description back for every image node that
has none, so screen readers and the alt-text test get words, not a file name.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes

from mha.plotting.style import png_description


def _image_path(app, docname: str, uri: str) -> Path:
    if uri.startswith("/"):  # myst-nb: relative to the source folder
        return Path(app.srcdir) / uri.lstrip("/")
    return Path(app.srcdir) / Path(docname).parent / uri


def add_alt_text(app, doctree) -> None:
    docname = app.env.docname
    for image in doctree.findall(nodes.image):
        if image.get("alt"):
            continue
        path = _image_path(app, docname, image.get("uri", ""))
        if path.suffix.lower() == ".png" and path.is_file():
            description = png_description(path.read_bytes())
            if description:
                image["alt"] = description


def setup(app):
    # Before Sphinx's image collector (priority 500) rewrites the URIs.
    app.connect("doctree-read", add_alt_text, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
