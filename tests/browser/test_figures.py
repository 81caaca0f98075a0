"""Figure text a reader can read where the figure is shown: >= 11 CSS px on a desktop, >= 9 on a phone,
and never printed over other text or past the figure's edge.

Every PNG the course draws records its smallest text (``MinFontSize``, points) and its resolution
(``mha.plotting.style``). Rendered text size = points / 72 * dpi (image pixels) * shown width / pixel
width (CSS px per image pixel). Two checks:

- every figure and every widget frame of the built book, shown or not, computed for the widths the
  site gives it (its own CSS size, at most the column: 688 px on a desktop, and on a phone 344 px,
  a widget's padded frame in the 358-px column);
- every figure and frame a browser shows, measured from its rendered box at 1280 px and at 390 px,
  with the attention and softmax views' SVG text (font size times the SVG's scale on screen);
- every figure and frame of the built book records that its drawing had no text on text and none
  past the canvas (``TextOverlaps``, ``TextOutside``: ``mha.plotting.style.save_png``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from mha.plotting.style import (
    COLUMN_PX,
    CSS_PX_PER_INCH,
    MIN_PHONE_TEXT_PX,
    MIN_TEXT_PX,
    PHONE_COLUMN_PX,
    PHONE_FIGURE_PX,
    png_facts,
)
from tests.browser.conftest import toc_docnames
from tests.browser.test_pages import PROFILES, open_page, wait_for_widgets

pytestmark = pytest.mark.browser

MINIMUM = {"desktop": MIN_TEXT_PX, "phone": MIN_PHONE_TEXT_PX}
COLUMN = {"desktop": COLUMN_PX, "phone": PHONE_FIGURE_PX}
FIGURE_SRC = re.compile(r'<img [^>]*src="([^"]*_images/[^"]+\.png)"')
FRAME_SRC = re.compile(r'src=\\?"([^"\\]*_images/frames/[^"\\]+\.png)')


def text_px(path: Path, shown_width: float) -> float:
    """The smallest text of the PNG at ``path`` in CSS px, when shown ``shown_width`` CSS px wide."""
    facts = png_facts(path.read_bytes())
    assert "MinFontSize" in facts["text"], f"{path.name} does not record its smallest text"
    dpi = facts["dpi"] or CSS_PX_PER_INCH
    return float(facts["text"]["MinFontSize"]) / 72 * dpi * shown_width / facts["width"]


def css_width(path: Path) -> float:
    facts = png_facts(path.read_bytes())
    return facts["width"] * CSS_PX_PER_INCH / (facts["dpi"] or CSS_PX_PER_INCH)


def page_figures(page: Path) -> list[Path]:
    """The PNG files a built page shows: its figures, and every frame of its widgets."""
    html = page.read_text(encoding="utf8")
    urls = FIGURE_SRC.findall(html) + FRAME_SRC.findall(html)
    return sorted({(page.parent / unquote(url)).resolve() for url in urls if not url.endswith("-1x.png")})


def text_check_problems(paths) -> list[str]:
    """The PNGs among ``paths`` whose own text check (``mha.plotting.style.save_png``) found text on
    text or past the canvas edge, or which record no check at all, with what is wrong in words."""
    wrong = []
    for path in sorted(set(paths)):
        text = png_facts(path.read_bytes())["text"]
        if "TextOverlaps" not in text:
            wrong.append(f"{path.name}: records no text check (not saved by mha.plotting.style.save_png)")
        elif (text["TextOverlaps"], text["TextOutside"]) != ("0", "0"):
            wrong.append(f"{path.name} ({text.get('Description', '')[:50]}): {text.get('TextProblems', '')}")
    return wrong


@pytest.mark.parametrize("docname", toc_docnames())
def test_no_figure_or_frame_prints_text_on_text_or_past_its_edge(site_pages, docname):
    """Every figure and widget frame the build rendered checked its own drawing when it was saved:
    no two texts overlap, none runs off the canvas (the size of the text alone cannot tell)."""
    assert text_check_problems(page_figures(site_pages[docname])) == [], docname


@pytest.mark.parametrize("docname", toc_docnames())
def test_every_figure_and_frame_is_drawn_for_the_column(site_pages, docname):
    small = []
    for path in page_figures(site_pages[docname]):
        width = css_width(path)
        for profile, minimum in MINIMUM.items():
            size = text_px(path, min(width, COLUMN[profile]))
            if size < minimum - 0.05:
                small.append(f"{path.name} on a {profile}: {size:.1f} px (at least {minimum})")
    assert small == [], f"{docname}: figure text too small: {small}"


#: Every shown figure or frame: its src, its CSS box width; and every SVG text of the views: its
#: rendered font size (computed size times the SVG's scale on screen) and its words.
SHOWN_JS = """() => {
  const images = [...document.querySelectorAll('.bd-article img')]
    .filter((img) => img.getBoundingClientRect().width > 0
                     && /_images\\/.*\\.png/.test(img.getAttribute('src')))
    .map((img) => [img.getAttribute('src'), img.getBoundingClientRect().width]);
  const texts = [...document.querySelectorAll('.bd-article svg text')]
    .filter((t) => t.getBoundingClientRect().width > 0 && t.textContent.trim())
    .map((t) => { const m = t.getScreenCTM();  // its scale, whatever its rotation
                  return [parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b),
                          t.textContent.slice(0, 30)]; });
  return {images, texts};
}"""


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("docname", toc_docnames())
def test_shown_figure_text_is_readable(browser, site_url, site_pages, docname, profile):
    html = site_pages[docname].read_text(encoding="utf8")
    page, _ = open_page(browser, f"{site_url}/{docname}.html", profile=profile)
    try:
        wait_for_widgets(page, html)
        shown = page.evaluate(SHOWN_JS)
    finally:
        page.context.close()
    minimum, small = MINIMUM[profile], []
    for src, width in shown["images"]:
        path = (site_pages[docname].parent / unquote(urlparse(src).path)).resolve()
        size = text_px(path, width)
        if size < minimum - 0.05:
            small.append(f"{path.name}: {size:.1f} px")
    small += [f"view text {words!r}: {size:.1f} px"
              for size, words in shown["texts"] if size < minimum - 0.05]
    assert small == [], f"{docname} ({profile}): text under {minimum} px: {small}"


def test_text_size_arithmetic():
    """A 10-pt label of a figure as wide as the column allows: 13.9 px at its own size, and its share of
    that in the phone's column."""
    assert PHONE_FIGURE_PX <= PHONE_COLUMN_PX
    from mha.plotting.style import MAX_WIDTH_IN, new_figure

    fig = new_figure(MAX_WIDTH_IN, 2.0)
    fig.text(0.5, 0.5, "label", fontsize=10)
    data = fig.to_png()
    path = Path(__file__).parent / "_text_size_probe.png"
    try:
        path.write_bytes(data)
        assert json.loads(json.dumps(png_facts(data)["text"]))["MinFontSize"] == "10"
        assert text_px(path, css_width(path)) == pytest.approx(10 / 72 * 100, rel=1e-3)
        shown = 10 / 72 * 100 * PHONE_COLUMN_PX / (MAX_WIDTH_IN * 100)  # 100 CSS px an inch
        assert text_px(path, PHONE_COLUMN_PX) == pytest.approx(shown, rel=1e-3)
    finally:
        path.unlink(missing_ok=True)
