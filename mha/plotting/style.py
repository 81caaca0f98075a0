"""Shared look of the course's figures, and figures that carry their own alt text.

Every plot function returns a :class:`CourseFigure`: a matplotlib ``Figure`` not tracked by pyplot (so a
notebook shows it once, when it is the cell's value, and nothing leaks), white (readable on a dark page),
and described in words. The description travels inside the PNG (its ``Description`` text chunk), where the
book build reads it back as the image's alt text (``book/figure_alt.py``).
"""

from __future__ import annotations

import io
import textwrap
import zlib
from typing import Any

from matplotlib.figure import Figure

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
        return "Figure: " + "; ".join(p for p in parts if p) if any(parts) else "Figure"

    def draw(self, renderer: Any) -> None:
        """Draw, first wrapping any title wider than the room it has (no clipped titles)."""
        _wrap_titles(self, renderer)
        super().draw(renderer)

    def to_png(self, *, dpi: int = 100) -> bytes:
        """PNG bytes with :meth:`describe` stored as the image's Description."""
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=dpi, metadata={"Description": self.describe()})
        return buffer.getvalue()

    def _repr_png_(self):
        return self.to_png(), {"alt": self.describe()}


def _wrap_text(text, room: float, renderer) -> None:
    """Break ``text`` (a matplotlib Text) into lines at spaces until each fits ``room`` pixels."""
    content = text.get_text()
    width = text.get_window_extent(renderer).width
    if not content or width <= room:
        return
    longest = max(len(line) for line in content.splitlines())
    chars = max(12, int(longest * room / width) - 1)  # characters per line that fit, roughly
    text.set_text("\n".join(textwrap.fill(line, chars, break_long_words=False)
                             for line in content.splitlines()))


def _wrap_titles(fig: Figure, renderer) -> None:
    """Wrap the suptitle to the figure's width and each axes title to its grid cell's width."""
    figure_width = fig.bbox.width * 0.98
    if fig._suptitle is not None:  # type: ignore[attr-defined]  # matplotlib's own attribute
        _wrap_text(fig._suptitle, figure_width, renderer)  # type: ignore[attr-defined]
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        share = 1.0
        if spec is not None:
            columns = spec.get_gridspec().ncols
            share = (spec.colspan.stop - spec.colspan.start) / columns
        for title in (ax.title, ax._left_title, ax._right_title):  # type: ignore[attr-defined]
            _wrap_text(title, figure_width * share, renderer)


def new_figure(width: float, height: float, *, alt_text: str | None = None) -> CourseFigure:
    """A white, constrained-layout :class:`CourseFigure` that pyplot does not track."""
    fig = CourseFigure(figsize=(width, height), layout="constrained", facecolor="white")
    fig.alt_text = alt_text
    return fig


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
    pos = len(PNG_SIGNATURE)
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        keyword, _, rest = body.partition(b"\0")
        if kind == b"tEXt" and keyword == b"Description":
            return rest.decode("latin-1")
        if kind == b"iTXt" and keyword == b"Description":
            compressed, rest = rest[0], rest[2:]  # compression flag, method
            _language, _, rest = rest.partition(b"\0")
            _translated, _, text = rest.partition(b"\0")
            return (zlib.decompress(text) if compressed else text).decode("utf8")
        if kind == b"IEND":
            break
        pos += 12 + length  # length, type, body, CRC
    return None


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
