"""Matplotlib figures as small PNG frames: fitted to the column, white, alt text inside, optional palette.

The frame explorers (:mod:`mha.explorers.frames`) render every frame once; the book build turns each into
an image file the page loads when the frame is shown (``book/widget_frames.py``), sized from the PNG's
resolution, with its ``Description`` as alt text. Sizes and fonts follow :mod:`mha.plotting.style`.
"""

from __future__ import annotations

import io
import numbers
from typing import Any

from mha.plotting.style import PNG_DPI, fit_to_column, save_png

__all__ = ["figure_to_png"]


def figure_to_png(
    fig: Any, *, dpi: int = PNG_DPI, colors: int | None = None, description: str | None = None
) -> bytes:
    """Encode a matplotlib figure as PNG bytes on a white background, then close it.

    The PNG carries a text description (its ``Description`` chunk): ``description`` if given, else
    the figure's own (``CourseFigure.describe()``). The book's site script reads it back as the
    frame's alt text, as the build does for static figures.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    dpi : int
        Resolution of the PNG: two pixels per CSS px by default (``mha.plotting.style.PNG_DPI``); the
        page shows a figure inch as 100 CSS px whatever the resolution.
    colors : int, optional
        Reduce the image to this many colours (2 to 256, a palette PNG): about 3x smaller for figures full
        of translucent lines, for pages that embed many frames. Full colour by default.
    description : str, optional
        Alt text stored in the PNG; defaults to the figure's ``describe()`` when it has one.

    Returns
    -------
    bytes
        The PNG file content.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(2, 1))
    >>> figure_to_png(fig)[:4]
    b'\\x89PNG'
    >>> plt.fignum_exists(fig.number)
    False
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"expected a matplotlib Figure, got {type(fig).__name__}")
    buffer = io.BytesIO()
    try:
        if not isinstance(dpi, numbers.Integral) or dpi <= 0:
            raise ValueError(f"dpi must be a positive integer, got {dpi!r}")
        if colors is not None and (not isinstance(colors, numbers.Integral) or not 2 <= colors <= 256):
            raise ValueError(f"colors must be an integer from 2 to 256 (or None for full colour), "
                             f"got {colors!r}")
        # A white background keeps dark text and colormaps readable in the book's dark mode.
        # No bbox_inches="tight": it draws the figure twice (~+60 % redraw time). Render
        # functions lay themselves out (e.g. plt.subplots(layout="constrained")).
        if description is None and callable(getattr(fig, "describe", None)):
            description = fig.describe()
        fit_to_column(fig)
        metadata = save_png(fig, buffer, dpi=dpi, description=description, facecolor="white")
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    if colors is None:
        return buffer.getvalue()
    from PIL import Image, PngImagePlugin  # matplotlib's own dependency

    palette = Image.open(buffer).convert("RGB").quantize(colors=int(colors), method=Image.Quantize.MEDIANCUT)
    info = PngImagePlugin.PngInfo()
    for keyword, text in metadata.items():
        info.add_itxt(keyword, text)
    reduced = io.BytesIO()
    palette.save(reduced, format="png", optimize=True, pnginfo=info, dpi=(dpi, dpi))
    return reduced.getvalue()
