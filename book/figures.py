"""Sphinx extension: every figure is shown at its own size, sharp, and loaded when it is needed.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. Figures from ``mha.plotting`` are PNGs
with two pixels per CSS px (``mha.plotting.style.PNG_DPI``). When the HTML build is done, each
``<img>`` of a book page that shows such a PNG from ``_images/`` gets

- ``width`` and ``height`` in CSS px, from the PNG's own resolution (a figure inch is 100 CSS px),
  so the browser reserves its room before it arrives and never stretches it past its size;
- a 1x copy (``NAME-1x.png``, resized with Pillow) and ``srcset="NAME-1x.png 1x, NAME.png 2x"``:
  a phone with a dense screen takes the sharp one, a plain screen half the bytes;
- ``loading="lazy"`` and ``decoding="async"``: a figure loads as the reader nears it (Chrome starts
  well before it is in view, so figures on the first screen still arrive with the text).

:func:`frame_img` writes the same ``<img>`` for an explorer's frame (``book/static_widgets.py``).
"""

from __future__ import annotations

import html
from pathlib import Path

from sphinx.util import logging

from mha.plotting.style import CSS_PX_PER_INCH, png_facts

LOGGER = logging.getLogger(__name__)

def css_size(facts: dict) -> tuple[int, int]:
    """A PNG's size in CSS px: its pixels over its pixels per CSS px (1 without a resolution)."""
    ratio = (facts["dpi"] or CSS_PX_PER_INCH) / CSS_PX_PER_INCH
    return round(facts["width"] / ratio), round(facts["height"] / ratio)


#: Colours a figure keeps: a plot's flat fills, lines and anti-aliased text need far fewer than 256,
#: and a palette PNG is much smaller than a full-colour one (benchmarks/results/site_machinery.md).
PALETTE = 256
COMPACT = "Compacted"  # a text chunk that marks a PNG this module has already reduced


def compact_png(path: Path) -> None:
    """Reduce the PNG at ``path`` to a ``PALETTE``-colour palette (no dithering), keeping its text
    chunks and resolution, when that is smaller. Done once per file."""
    from PIL import Image, PngImagePlugin

    facts = png_facts(path.read_bytes())
    if COMPACT in facts["text"]:
        return
    info = PngImagePlugin.PngInfo()
    for keyword, text in {**facts["text"], COMPACT: "1"}.items():
        info.add_itxt(keyword, text)
    dpi = round(facts["dpi"] or CSS_PX_PER_INCH)
    with Image.open(path) as image:
        palette = image.convert("RGB").quantize(colors=PALETTE, method=Image.Quantize.MEDIANCUT,
                                                dither=Image.Dither.NONE)
    target = path.with_name(path.name + ".tmp")
    palette.save(target, format="png", optimize=True, pnginfo=info, dpi=(dpi, dpi))
    if target.stat().st_size < path.stat().st_size:
        target.replace(path)
    else:
        target.unlink()


def one_x_copy(path: Path, size: tuple[int, int]) -> Path | None:
    """``NAME-1x.png`` beside ``path``, resized to ``size`` (written once); None when ``path`` is 1x."""
    from PIL import Image, PngImagePlugin

    target = path.with_name(f"{path.stem}-1x.png")
    if target.is_file():
        return target
    with Image.open(path) as image:
        if image.width <= size[0]:
            return None
        info = PngImagePlugin.PngInfo()
        for keyword, text in png_facts(path.read_bytes())["text"].items():
            if keyword != COMPACT:  # the copy is reduced on its own below
                info.add_itxt(keyword, text)
        small = image.convert("RGB").resize(size, Image.LANCZOS)
        small.save(target, format="png", optimize=True, pnginfo=info,
                   dpi=(CSS_PX_PER_INCH, CSS_PX_PER_INCH))  # fmt: skip
    compact_png(target)
    return target


def sized_attributes(path: Path, url: str, *, lazy: bool = True) -> dict[str, str]:
    """The ``<img>`` attributes that size, sharpen and defer the figure at ``path`` (served at ``url``).

    The PNG itself is reduced to a palette first (:func:`compact_png`)."""
    compact_png(path)
    facts = png_facts(path.read_bytes())
    width, height = css_size(facts)
    attributes = {"width": str(width), "height": str(height), "decoding": "async"}
    if lazy:
        attributes["loading"] = "lazy"
    small = one_x_copy(path, (width, height))
    if small is not None:
        base = url.rsplit("/", 1)[0]
        attributes["srcset"] = f"{base}/{small.name} 1x, {url} 2x"
    return attributes


def frame_img(path: Path, url: str, alt: str, classes: str = "widget-image") -> str:
    """An ``<img>`` for a widget frame: sized, 1x/2x, lazy (a hidden frame loads when shown)."""
    attributes = {"class": classes, "src": url, "alt": alt, **sized_attributes(path, url)}
    return "<img " + " ".join(f'{name}="{html.escape(value)}"' for name, value in attributes.items()) + ">"


def size_page_figures(page: Path, outdir: Path) -> int:
    """Size the figure ``<img>`` tags of one built page (parsed, changed, written back); return how
    many figures it shows (sized now, or by an earlier build of the same page)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.read_text(encoding="utf8"), "html.parser")
    figures = [img for img in soup.find_all("img", src=True)
               if "/_images/" in f"/{img['src']}" and img["src"].endswith(".png")]  # fmt: skip
    changed = False
    for img in figures:
        path = (page.parent / img["src"]).resolve()
        if not img.has_attr("width") and path.is_file() and outdir in path.parents:
            img.attrs.update(sized_attributes(path, img["src"]))
            changed = True
    if changed:
        page.write_text(str(soup), encoding="utf8")
    return len(figures)


def size_figures(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir).resolve()
    pages = [page for page in outdir.rglob("*.html")
             if page.relative_to(outdir).parts[0] not in {"lite", "_static", "_sources"}]
    total = sum(size_page_figures(page, outdir) for page in pages)
    if total == 0:
        raise RuntimeError("[figures] no <img> of _images/*.png in the built pages: did the markup change?")
    LOGGER.info(f"[figures] {total} figures sized (1x/2x, lazy)")


def setup(app):
    # After Sphinx has copied the images into _images/ (its own build-finished work is done by then).
    app.connect("build-finished", size_figures, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
