"""Sphinx extension: the theme's icon fonts hold only the icons the site shows.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. pydata-sphinx-theme draws its header
and sidebar icons with Font Awesome 6's web fonts: every icon Font Awesome has, for the dozen glyphs
the site shows (sizes in ``benchmarks/results/site_machinery.md``). When the HTML build is done, this

- collects the icon classes the site uses (``fa-…`` in the built pages and in the theme's scripts,
  which switch icons such as the light/dark toggle's at run time),
- maps them to code points with the theme's own stylesheet (``.fa-bars:before{content:"\\f0c9"}``,
  read with tinycss2; fewer than a thousand icon rules there stops the build),
- and subsets each font of ``_static/vendor/fontawesome/webfonts/`` to those code points with
  fontTools (woff2 needs the ``brotli`` package), in the built site only.

An icon a later page or script adds without being seen here would show as an empty box: the build
logs the icons it kept, and ``tests/browser/test_built_site.py`` checks every icon class of every
page has its glyph.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)

ICON_CLASS = re.compile(r"\bfa-[a-z0-9]+(?:-[a-z0-9]+)*\b")  # a word that may name an icon
FONTS = "_static/vendor/fontawesome/webfonts"
THEME_CSS = "_static/styles/pydata-sphinx-theme.css"
THEME_SCRIPTS = ("_static/scripts/pydata-sphinx-theme.js", "_static/scripts/sphinx-book-theme.js")


def icon_code_points(css: str) -> dict[str, int]:
    """``fa-name -> code point`` for every icon rule of a Font Awesome stylesheet
    (``.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}``), read with tinycss2."""
    import tinycss2

    from book.first_paint import selectors

    points = {}
    for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
        if rule.type != "qualified-rule":
            continue
        declarations = tinycss2.parse_declaration_list(rule.content, skip_comments=True, skip_whitespace=True)
        content = [t for d in declarations if d.type == "declaration" and d.lower_name == "content"
                   for t in d.value if t.type == "string"]  # fmt: skip
        if len(content) != 1 or len(content[0].value) != 1:
            continue
        for selector in selectors(rule.prelude):
            text = tinycss2.serialize(selector).strip()
            name = text.removeprefix(".").split(":")[0]
            if text.startswith(".fa-") and text.endswith("before") and ICON_CLASS.fullmatch(name):
                points[name] = ord(content[0].value)
    return points


def used_icons(outdir: Path) -> set[str]:
    """Icon classes named in the built pages and the theme's scripts."""
    names: set[str] = set()
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0] not in {"lite", "_static"}:
            names |= set(ICON_CLASS.findall(page.read_text(encoding="utf8")))
    for script in THEME_SCRIPTS:
        if (outdir / script).is_file():
            names |= set(ICON_CLASS.findall((outdir / script).read_text(encoding="utf8")))
    return names


def subset_font(path: Path, code_points: set[int]) -> tuple[int, int]:
    """Keep only ``code_points`` (those the font has) in the font at ``path``; return sizes before/after."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    before = path.stat().st_size
    font = TTFont(path)
    present = set(font.getBestCmap()) & code_points
    options = subset.Options()
    options.flavor = "woff2" if path.suffix == ".woff2" else None
    options.layout_features = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=present)
    subsetter.subset(font)
    font.flavor = options.flavor
    font.save(path)
    return before, path.stat().st_size


def subset_icon_fonts(app, exception) -> None:
    outdir = Path(app.outdir)
    fonts = outdir / FONTS
    if exception is not None or not fonts.is_dir() or not (outdir / THEME_CSS).is_file():
        return
    points = icon_code_points((outdir / THEME_CSS).read_text(encoding="utf8"))
    names = sorted(name for name in used_icons(outdir) if name in points)
    if len(points) < 1000 or not names:
        raise RuntimeError(f"[icon_fonts] {len(points)} icon rules in {THEME_CSS}, {len(names)} icons used: "
                           "did the theme's stylesheet change?")
    wanted = {points[name] for name in names}
    report = []
    for font in sorted(fonts.glob("*.woff2")) + sorted(fonts.glob("*.ttf")):
        before, after = subset_font(font, wanted)
        report.append(f"{font.name} {before // 1000} -> {after // 1000} kB")
    LOGGER.info(f"[icon_fonts] kept {len(names)} icons ({', '.join(names)}): {'; '.join(report)}")


def setup(app):
    app.connect("build-finished", subset_icon_fonts, priority=650)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
