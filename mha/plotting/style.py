"""The course's figure style: where figures are shown, how big their text is, their colours, alt text.

This module is the one place for sizes, fonts and colours; plot functions (``mha.plotting``) and
frame explorers (``mha.explorers``) take them from here.

Where a figure is shown
-----------------------
The book's text column is ``COLUMN_PX`` (688) CSS px wide on a desktop and ``PHONE_COLUMN_PX``
(358) on a 390-px phone. A figure inch is ``CSS_PX_PER_INCH`` (100) CSS px: a figure is shown at
its own size, never stretched, and shrunk only to fit a narrower column. PNGs carry
``PIXEL_RATIO`` (2) pixels per CSS px (``PNG_DPI``); the book build adds a 1x copy and a
``srcset`` (``book/figures.py``), and sizes each ``<img>`` from the PNG's own resolution.

How big the text is
-------------------
Every text of a figure reads at least ``MIN_TEXT_PX`` (11) CSS px on a desktop and
``MIN_PHONE_TEXT_PX`` (9) on a phone. That holds when no text is smaller than ``MIN_FONT_PT``
(10 pt, 13.9 CSS px at full size) and no figure is wider than ``MAX_WIDTH_IN`` (5.31 in), the
width a phone shrinks to 344 px (``PHONE_FIGURE_PX``: a widget's frame, padded inside the 358-px
column) with 10-pt text still at 9 px. :func:`fit_to_column` enforces
both before a figure is saved: a row of panels wider than that is re-flowed into fewer panels per
row (a taller figure, not a smaller picture), anything else is narrowed, and smaller text is
raised to the floor. Each PNG records its smallest text (``MinFontSize``, in pt) beside its alt
text (``Description``); the browser tests measure the rendered size from them at both widths.

Draw for that: start from ``new_figure(width, height)`` with ``width <= MAX_WIDTH_IN``, keep
``fontsize`` at ``MIN_FONT_PT`` or more (``TITLE_PT`` for titles), put at most
``max_panels_per_row(panel_width)`` panels side by side, and leave out per-cell numbers that
would not fit their cells at 10 pt (say them in the alt text or a table instead).

Colours
-------
``WEIGHTS_CMAP`` for weights (perceptual, colour-blind safe), ``SIGNED_CMAP`` for signed values,
``SERIES_COLORS`` for lines. Figures are white, so they read on the site's dark theme too.

Alt text
--------
Every plot function returns a :class:`CourseFigure`: a matplotlib ``Figure`` not tracked by pyplot
(so a notebook shows it once, when it is the cell's value, and nothing leaks), described in words.
The description travels inside the PNG (its ``Description`` text chunk), where the book build
reads it back as the image's alt text (``book/figure_alt.py``).
"""

from __future__ import annotations

import io
import math
import textwrap
import zlib
from typing import Any

from matplotlib.figure import Figure
from matplotlib.gridspec import GridSpec
from matplotlib.text import Text

#: The text column, in CSS px: on a desktop, and on a 390-px phone.
COLUMN_PX = 688
PHONE_COLUMN_PX = 358
#: CSS px per figure inch: figures are shown at their own size (100 dpi), never stretched.
CSS_PX_PER_INCH = 100
#: Device pixels per CSS px in the PNGs (sharp on high-density screens).
PIXEL_RATIO = 2
PNG_DPI = CSS_PX_PER_INCH * PIXEL_RATIO
#: The smallest text a reader should see, in CSS px (desktop, phone).
MIN_TEXT_PX = 11
MIN_PHONE_TEXT_PX = 9
#: The narrowest place a figure is shown on a phone: a widget's frame, padded inside the column.
PHONE_FIGURE_PX = 344
#: The smallest font a figure may use, and the title size.
MIN_FONT_PT = 10
TITLE_PT = 11
#: The widest figure whose MIN_FONT_PT text still reads MIN_PHONE_TEXT_PX on a phone (5.31 in).
MAX_WIDTH_IN = round(PHONE_FIGURE_PX * MIN_FONT_PT / (72 * MIN_PHONE_TEXT_PX), 2)

#: Perceptually uniform, colour-blind friendly, readable in greyscale.
WEIGHTS_CMAP = "viridis"
#: For signed quantities (scores, differences): diverging and perceptually balanced.
SIGNED_CMAP = "RdBu_r"
#: One colour per series in line plots, from a colour-blind friendly palette.
SERIES_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class CourseFigure(Figure):
    """A Figure with alt text, displayed as PNG by IPython even without ``%matplotlib inline``.

    Set ``fig.alt_text`` to describe what the figure shows; without it :meth:`describe` assembles a
    description from the titles and axis labels.
    """

    alt_text: str | None = None
    #: Filled by :func:`mha.plotting.heads.plot_heads`: one ``HeadPanel`` per head, in head order.
    head_panels: tuple[Any, ...] = ()

    def describe(self) -> str:
        """Alt text: ``alt_text`` if set, else the figure's titles and axis labels in words."""
        if self.alt_text:
            return self.alt_text
        parts = []
        suptitle = self._suptitle  # type: ignore[attr-defined]  # get_suptitle() is matplotlib >= 3.8
        if suptitle is not None and suptitle.get_text():
            parts.append(suptitle.get_text())
        for ax in self.axes:
            if not ax.get_visible() or not ax.has_data():
                continue
            title = ax.get_title() or next((t.get_text() for t in ax.texts if t.get_text()), "")
            axis_labels = (("x", ax.get_xlabel()), ("y", ax.get_ylabel()))
            labels = [f"{name} axis: {text}" for name, text in axis_labels if text]
            parts.append(", ".join(filter(None, [title, *labels])))
        parts = [" ".join(part.split()) for part in parts]  # titles wrapped into lines read as one
        return "Figure: " + "; ".join(p for p in parts if p) if any(parts) else "Figure"

    def draw(self, renderer: Any) -> None:
        """Draw, first wrapping any title wider than the room it has (no clipped titles).

        With a layout engine (constrained layout), titles are wrapped again once the axes are laid
        out: an axes title is centred on its axes, which long tick labels push off the figure's centre.
        """
        _wrap_titles(self, renderer)
        engine = self.get_layout_engine()
        titled = any(ax.get_title(loc) for ax in self.axes for loc in ("center", "left", "right"))
        if engine is not None and titled:
            engine.execute(self)
            _wrap_titles(self, renderer)
        super().draw(renderer)

    def to_png(self, *, dpi: int = PNG_DPI) -> bytes:
        """PNG bytes, fitted to the column first (:func:`fit_to_column`), with :meth:`describe`
        stored as the image's Description, its smallest text as MinFontSize and what its text check
        found (:func:`save_png`)."""
        fit_to_column(self)
        buffer = io.BytesIO()
        save_png(self, buffer, dpi=dpi, description=self.describe())
        return buffer.getvalue()

    def _repr_png_(self):
        return self.to_png(), {"alt": self.describe()}


def _wrap_text(text, room: float, renderer) -> None:
    """Break ``text`` (a matplotlib Text) into lines at spaces until each fits ``room`` pixels.

    A text wrapped before is wrapped again from its own lines (those its author wrote), not from
    the lines of the earlier wrapping: a narrower room re-flows the words instead of splitting the
    earlier lines one more time."""
    content = text.get_text()
    width = text.get_window_extent(renderer).width
    if not content or width <= room:
        return
    original = getattr(text, "_mha_unwrapped", None)
    if original is not None and content == original[1]:
        content = original[0]  # its author's lines
    longest = max(len(line) for line in content.splitlines())
    wrapped_longest = max(len(line) for line in text.get_text().splitlines())
    chars = max(12, int(wrapped_longest * room / width) - 1)  # characters per line that fit, roughly
    wrapped = "\n".join(textwrap.fill(line, min(chars, longest), break_long_words=False)
                        for line in content.splitlines())
    text.set_text(wrapped)
    text._mha_unwrapped = (content, wrapped)


def _wrap_titles(fig: Figure, renderer) -> None:
    """Wrap the suptitle to the figure's width, and each axes title to its grid cell's width and to
    the room it has on the figure from where its axes stand (centred, left- or right-aligned)."""
    figure_width = fig.bbox.width * 0.98
    if fig._suptitle is not None:  # type: ignore[attr-defined]  # matplotlib's own attribute
        _wrap_text(fig._suptitle, figure_width, renderer)  # type: ignore[attr-defined]
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        share = 1.0
        if spec is not None:
            columns = spec.get_gridspec().ncols
            share = (spec.colspan.stop - spec.colspan.start) / columns
        left, right = ax.bbox.x0, ax.bbox.x1  # pixels
        on_figure = {  # the room each title has between its anchor and the figure's edges
            "center": 2 * min((left + right) / 2, fig.bbox.width - (left + right) / 2),
            "left": fig.bbox.width - left, "right": right}
        for loc, title in (("center", ax.title), ("left", ax._left_title),  # type: ignore[attr-defined]
                           ("right", ax._right_title)):  # type: ignore[attr-defined]
            _wrap_text(title, min(figure_width * share, 0.98 * on_figure[loc]), renderer)


def new_figure(width: float, height: float, *, alt_text: str | None = None) -> CourseFigure:
    """A white, constrained-layout :class:`CourseFigure` that pyplot does not track."""
    fig = CourseFigure(figsize=(width, height), layout="constrained", facecolor="white")
    fig.alt_text = alt_text
    return fig


def _texts(fig: Figure) -> list[Text]:
    """The figure's visible, non-empty texts (titles, labels, ticks, legends, annotations)."""
    return [text for text in fig.findobj(Text)
            if text.get_visible() and text.get_text().strip() and _shown(text)]


def _shown(text: Text) -> bool:
    axes = text.axes
    return axes is None or axes.get_visible()


def smallest_font_pt(fig: Figure) -> float | None:
    """The size of the figure's smallest visible text, in points (None when it has none).

    Examples
    --------
    >>> fig = new_figure(3, 2)
    >>> _ = fig.text(0.5, 0.5, "small", fontsize=7)
    >>> smallest_font_pt(fig)
    7.0
    """
    sizes = [text.get_fontsize() for text in _texts(fig)]
    return float(min(sizes)) if sizes else None


def max_panels_per_row(panel_width: float) -> int:
    """How many panels of ``panel_width`` inches fit side by side in ``MAX_WIDTH_IN`` (at least 1).

    Examples
    --------
    >>> max_panels_per_row(2.5), max_panels_per_row(4.0), max_panels_per_row(9.0)
    (2, 1, 1)
    """
    return max(1, int(MAX_WIDTH_IN // panel_width))


def _single_row_grid(fig: Figure):
    """The GridSpec and its panels by column when every visible axes sits in one cell of the same
    one-row grid, else None (also with colour bars: constrained layout places them by the old grid)."""
    if any(getattr(ax, "_colorbar", None) is not None for ax in fig.axes):
        return None
    main = [ax for ax in fig.axes if ax.get_visible() and ax.get_subplotspec() is not None
            and not ax.get_label() == "<colorbar>"]
    specs = [spec for ax in main if (spec := ax.get_subplotspec()) is not None]
    grids = {id(spec.get_gridspec()) for spec in specs}
    if len(main) < 2 or len(grids) != 1:
        return None
    grid = specs[0].get_gridspec()
    nrows, ncols = grid.get_geometry()
    one_cell = all(spec.colspan.stop - spec.colspan.start == 1 for spec in specs)
    if nrows != 1 or ncols < 2 or not one_cell:
        return None
    columns: dict[int, list] = {}  # a twin axes shares its panel's cell: they move together
    for ax, spec in zip(main, specs, strict=True):
        columns.setdefault(spec.colspan.start, []).append(ax)
    return grid, columns


def fit_to_column(fig: Figure) -> Figure:
    """Make ``fig`` readable in the book's column on a desktop and on a phone; return it.

    A figure wider than ``MAX_WIDTH_IN`` whose panels stand in one row is re-flowed into
    ``max_panels_per_row`` panels per row, each row as wide as the figure may be (the figure
    grows taller; a figure with fixed margins has them fitted to its labels once, by
    ``tight_layout``, and keeps them on redraws);
    any other figure wider than that is narrowed to it. Then every text smaller than
    ``MIN_FONT_PT`` is raised to it. Constrained layout re-places everything when the figure is
    drawn. Idempotent.

    Examples
    --------
    >>> fig = new_figure(10.0, 3.0)
    >>> axes = fig.subplots(1, 4)
    >>> _ = fit_to_column(fig)
    >>> [round(float(v), 2) for v in fig.get_size_inches()]
    [5.31, 6.0]
    >>> sorted({ax.get_subplotspec().get_gridspec().get_geometry() for ax in fig.axes})
    [(2, 2)]
    """
    width, height = (float(v) for v in fig.get_size_inches())
    if width > MAX_WIDTH_IN + 1e-6:
        found = _single_row_grid(fig)
        if found is not None:
            grid, columns = found
            ncols = grid.get_geometry()[1]
            per_row = max_panels_per_row(width / ncols)
            nrows = math.ceil(ncols / per_row)
            flowed = GridSpec(nrows, per_row, figure=fig)
            for column, axes in columns.items():
                for ax in axes:
                    ax.set_subplotspec(flowed[column // per_row, column % per_row])
            width, height = MAX_WIDTH_IN, height * nrows  # each row of panels spans the width
            fig.set_size_inches(width, height)
            if fig.get_layout_engine() is None:  # fixed margins (fast redraws): fitted once, here
                fig.tight_layout()
        else:
            width, height = MAX_WIDTH_IN, height * MAX_WIDTH_IN / width
        fig.set_size_inches(width, height)
    for text in _texts(fig):
        size = text.get_fontsize()  # points, or a name such as "small"
        if isinstance(size, (int, float)) and size < MIN_FONT_PT:
            text.set_fontsize(MIN_FONT_PT)
    return fig


def png_metadata(fig: Figure, description: str | None) -> dict[str, str]:
    """PNG text chunks for ``fig``: its alt text (``Description``) and smallest text
    (``MinFontSize``, points), which the book build and the browser tests read back."""
    metadata = {"Description": description} if description else {}
    smallest = smallest_font_pt(fig)
    if smallest is not None:
        metadata["MinFontSize"] = f"{smallest:g}"
    return metadata


#: The PNG text chunks in which :func:`save_png` records its text check.
TEXT_CHECK_KEYS = ("TextOverlaps", "TextOutside", "TextProblems")


def save_png(fig: Figure, file: Any, *, dpi: int = PNG_DPI, description: str | None = None,
             **savefig_kwargs: Any) -> dict[str, str]:
    """Save ``fig`` as PNG to ``file`` with its :func:`png_metadata`, and check the drawing it saves.

    The very drawing written to the file is checked (no second drawing): pairs of texts that overprint
    each other and texts that run past the canvas edge
    (:func:`mha.plotting.text_boxes.problems_in`). Their counts go into the PNG as ``TextOverlaps``
    and ``TextOutside``, and, when there are any, what they are in words as ``TextProblems``; the
    site's tests fail on any figure or widget frame of the book that records a problem, or records
    no check at all.

    Returns
    -------
    dict of str to str
        The text chunks written.

    Examples
    --------
    >>> fig = new_figure(2, 1)
    >>> _ = fig.text(0.1, 0.5, "left"); _ = fig.text(0.12, 0.5, "overprinted")
    >>> chunks = save_png(fig, io.BytesIO(), dpi=50)
    >>> chunks["TextOverlaps"], chunks["TextOutside"], chunks["TextProblems"][:27]
    ('1', '0', "'left' overprints 'overprin")
    """
    from mha.plotting.text_boxes import problems_in

    metadata = png_metadata(fig, description)
    found: dict[str, list[str]] = {}

    def record(event: Any) -> None:  # matplotlib draws, then writes the PNG with this dict
        found.update(problems_in(fig, event.renderer))
        metadata.update(_text_chunks(found))

    callback = fig.canvas.mpl_connect("draw_event", record)
    try:
        fig.savefig(file, format="png", dpi=dpi, metadata=metadata, **savefig_kwargs)
    finally:
        fig.canvas.mpl_disconnect(callback)
    if not found:
        raise RuntimeError("the figure was saved without being drawn: its text was not checked")
    return metadata


def _text_chunks(found: dict[str, list[str]]) -> dict[str, str]:
    problems = found.get("overlaps", []) + found.get("outside", [])
    chunks = {"TextOverlaps": str(len(found.get("overlaps", []))),
              "TextOutside": str(len(found.get("outside", [])))}
    if problems:
        chunks["TextProblems"] = "; ".join(problems)
    return chunks


def png_facts(data: bytes) -> dict:
    """What a PNG says about itself: ``width``, ``height`` (pixels), ``dpi`` (from its ``pHYs``
    chunk, or None) and ``text`` (its tEXt / iTXt chunks, keyword -> text).

    Examples
    --------
    >>> fig = new_figure(2, 1, alt_text="An empty figure")
    >>> facts = png_facts(fig.to_png(dpi=50))
    >>> facts["width"], facts["height"], round(facts["dpi"]), facts["text"]["Description"]
    (100, 50, 50, 'An empty figure')
    """
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG: the data does not start with the PNG signature")
    facts: dict = {"width": None, "height": None, "dpi": None, "text": {}}
    pos = len(PNG_SIGNATURE)
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            facts["width"], facts["height"] = (int.from_bytes(body[i:i + 4], "big") for i in (0, 4))
        elif kind == b"pHYs" and body[8] == 1:  # unit: the metre
            facts["dpi"] = int.from_bytes(body[:4], "big") * 0.0254
        elif kind in (b"tEXt", b"iTXt"):
            keyword, _, rest = body.partition(b"\0")
            facts["text"][keyword.decode("latin-1")] = _chunk_text(kind, rest)
        elif kind == b"IEND":
            break
        pos += 12 + length  # length, type, body, CRC
    return facts


def _chunk_text(kind: bytes, rest: bytes) -> str:
    if kind == b"tEXt":
        return rest.decode("latin-1")
    compressed, rest = rest[0], rest[2:]  # compression flag, method
    _language, _, rest = rest.partition(b"\0")
    _translated, _, text = rest.partition(b"\0")
    return (zlib.decompress(text) if compressed else text).decode("utf8")


def png_description(data: bytes) -> str | None:
    """The ``Description`` text stored in a PNG (tEXt or iTXt chunk), or None.

    Examples
    --------
    >>> fig = new_figure(2, 1, alt_text="An empty figure")
    >>> png_description(fig.to_png(dpi=20))
    'An empty figure'
    >>> png_description(b"not a png") is None
    True
    """
    if not data.startswith(PNG_SIGNATURE):
        return None
    return png_facts(data)["text"].get("Description")


def register_ipython_display() -> None:
    """Inside IPython, show CourseFigures as PNG with alt text (whatever the matplotlib backend)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["image/png"]
    formatter.for_type(CourseFigure, CourseFigure._repr_png_)
