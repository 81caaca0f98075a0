"""Where a figure's texts land once drawn, and which of them overprint each other or run off the canvas.

Matplotlib knows the box of every text it draws (``Text.get_window_extent``). A figure is readable only
when no two of those boxes overlap and none crosses the canvas edge; the size of the text alone
(``MinFontSize``) cannot tell. :func:`text_problems` lists what is wrong in words, for a drawn figure;
:func:`mha.plotting.style.save_png` runs it on the very drawing it saves, so every PNG the course writes
records what it found (``TextOverlaps``, ``TextOutside``, and ``TextProblems`` in words when any), and
the site's tests read that back from every figure and widget frame of the built book.

A text counts when it is drawn: visible, not empty, inside visible parents, not on an axis switched off
(``set_axis_off``), and (for a tick label) at a tick inside the axis' view limits. Rotated texts are
compared as the rotated rectangles they are, not as their upright bounding boxes (two labels turned 45
degrees side by side do not overlap). Boxes may touch: an overlap or a crossing counts past
``TOLERANCE_PT``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = ["TOLERANCE_PT", "TextBox", "drawn_texts", "drop_overprinting", "overlap_depth", "problems_in",
           "text_boxes", "text_problems"]

#: Boxes may touch or overlap by this much (points) before it counts: a box includes the font's
#: whole ascent and descent, more than its glyphs' ink.
TOLERANCE_PT = 1.0
#: A text named in a message is cut to this many characters.
NAME_CHARS = 40


@dataclass(frozen=True)
class TextBox:
    """Where one drawn text sits, in display pixels (origin at the canvas' bottom left).

    Attributes
    ----------
    text : matplotlib.text.Text
    centre : tuple of float
        ``(x, y)`` of the box's centre.
    half : tuple of float
        Half its width and half its height, upright (before the rotation).
    angle : float
        Its rotation, radians counter-clockwise.
    """

    text: Text
    centre: tuple[float, float]
    half: tuple[float, float]
    angle: float

    def corners(self) -> np.ndarray:
        """The four corners, shape (4, 2), in order around the box."""
        (cx, cy), (hw, hh) = self.centre, self.half
        c, s = math.cos(self.angle), math.sin(self.angle)
        local = np.array([(-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh)])  # (4, 2)
        return local @ np.array([[c, s], [-s, c]]) + (cx, cy)

    def upright(self) -> bool:
        """Whether the box's sides are parallel to the canvas' (turned by a multiple of 90 degrees)."""
        return math.isclose(math.sin(2 * self.angle), 0.0, abs_tol=1e-9)

    @property
    def name(self) -> str:
        """The text's words on one line, cut to ``NAME_CHARS`` characters."""
        words = " ".join(self.text.get_text().split())
        return repr(words if len(words) <= NAME_CHARS else words[:NAME_CHARS - 1] + "…")


def _tick_is_drawn(axis: Axis, tick: Any) -> bool:
    """Matplotlib draws a tick (and its labels) only where it falls inside the axis' view limits."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * max(abs(low), abs(high), 1.0)
    return bool(low - slack <= tick.get_loc() <= high + slack)


def _visible(artist: Artist) -> Iterator[Text]:
    """Every non-empty text under ``artist`` whose parents are all visible, ticks outside view left out."""
    undrawn: set[int] = set()
    if isinstance(artist, Axes) and not artist.axison:  # set_axis_off(): its axes are not drawn
        undrawn = {id(artist.xaxis), id(artist.yaxis)}
    if isinstance(artist, Axis):
        ticks = artist.get_major_ticks() + artist.get_minor_ticks()
        undrawn = {id(tick) for tick in ticks if not _tick_is_drawn(artist, tick)}
    for child in artist.get_children():
        if not child.get_visible() or id(child) in undrawn:
            continue
        if isinstance(child, Text):
            if child.get_text().strip():
                yield child
        else:
            yield from _visible(child)


def drawn_texts(fig: Figure) -> list[Text]:
    """The figure's texts that a drawing shows: titles, labels, drawn tick labels, legends, notes.

    Examples
    --------
    >>> from mha.plotting.style import new_figure
    >>> fig = new_figure(3, 2)
    >>> ax = fig.add_subplot()
    >>> _ = ax.set_title("title"); _ = ax.set_xlim(0, 1); _ = ax.set_xticks([0, 0.5, 1, 2])
    >>> fig.draw_without_rendering()
    >>> sorted(t.get_text() for t in drawn_texts(fig) if t is not ax.yaxis.get_label())[:4]
    ['0.0', '0.0', '0.2', '0.4']
    """
    return list(_visible(fig))


def _box(text: Text, renderer: Any) -> TextBox:
    # An annotation's own extent includes its arrow: only the words count here.
    extent = Text.get_window_extent(text, renderer)
    angle = math.radians(text.get_rotation())
    centre = ((extent.x0 + extent.x1) / 2, (extent.y0 + extent.y1) / 2)
    turns = round(text.get_rotation() / 90)
    if math.isclose(text.get_rotation(), 90 * turns, abs_tol=1e-6):
        width, height = (extent.width, extent.height) if turns % 2 == 0 else (extent.height, extent.width)
    else:  # the upright size, measured unturned (a rotated rectangle's bounding box keeps its centre)
        rotation = text.get_rotation()
        text.set_rotation(0)
        try:
            upright = Text.get_window_extent(text, renderer)
        finally:
            text.set_rotation(rotation)
        width, height = upright.width, upright.height
    return TextBox(text, centre, (width / 2, height / 2), angle)


def text_boxes(fig: Figure, renderer: Any) -> list[TextBox]:
    """A :class:`TextBox` for every drawn text of ``fig``, as ``renderer`` (the one that drew it) lays it."""
    return [_box(text, renderer) for text in drawn_texts(fig)]


def overlap_depth(a: TextBox, b: TextBox) -> float:
    """How far two boxes overlap, in pixels: the least shift along any side's direction that parts them
    (0 or less when they are apart). Separating axes: two convex shapes are apart when their shadows
    on one of their sides' directions are.

    Examples
    --------
    >>> a = TextBox(None, (0.0, 0.0), (10.0, 2.0), 0.0)
    >>> overlap_depth(a, TextBox(None, (15.0, 0.0), (10.0, 2.0), 0.0))  # 5 px across, 4 down
    4.0
    >>> overlap_depth(a, TextBox(None, (0.0, 10.0), (10.0, 2.0), 0.0))
    -6.0
    """
    corners_a, corners_b = a.corners(), b.corners()
    depth = math.inf
    for corners in (corners_a, corners_b):
        for side in (corners[1] - corners[0], corners[3] - corners[0]):
            direction = side / (np.hypot(*side) or 1.0)
            pa, pb = corners_a @ direction, corners_b @ direction  # (4,), (4,)
            depth = min(depth, float(min(pa.max(), pb.max()) - max(pa.min(), pb.min())))
    return depth


def _bounds(boxes: list[TextBox]) -> np.ndarray:
    """(n_boxes, 4): left, bottom, right, top of each box's upright bounding rectangle."""
    corners = np.array([box.corners() for box in boxes]).reshape(len(boxes), 4, 2)  # (n_boxes, 4, 2)
    return np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)


def problems_in(fig: Figure, renderer: Any) -> dict[str, list[str]]:
    """What is wrong with the texts of ``fig`` as ``renderer`` has just drawn it, in words:
    ``{"overlaps": [...], "outside": [...]}``."""
    boxes = text_boxes(fig, renderer)
    tolerance = renderer.points_to_pixels(TOLERANCE_PT)
    problems: dict[str, list[str]] = {"overlaps": [], "outside": []}
    if not boxes:
        return problems
    bounds = _bounds(boxes)  # (n_boxes, 4)
    width, height = fig.bbox.width, fig.bbox.height
    for box, (left, bottom, right, top) in zip(boxes, bounds, strict=True):
        past = {"left": -left, "bottom": -bottom, "right": right - width, "top": top - height}
        edge, by = max(past.items(), key=lambda item: item[1])
        if by > tolerance:
            problems["outside"].append(f"{box.name} runs {_pt(by, renderer)} past the {edge} edge")
    # Upright bounding rectangles first (all pairs at once); the exact test only where they overlap.
    low, high = bounds[:, :2], bounds[:, 2:]  # (n_boxes, 2) each
    shared = np.minimum(high[:, None], high[None]) - np.maximum(low[:, None], low[None])  # (n, n, 2)
    candidates = np.argwhere(np.triu(shared.min(axis=-1) > tolerance, k=1))
    for i, j in candidates:
        a, b = boxes[i], boxes[j]
        depth = float(shared[i, j].min()) if a.upright() and b.upright() else overlap_depth(a, b)
        if depth > tolerance:
            problems["overlaps"].append(f"{a.name} overprints {b.name} by {_pt(depth, renderer)}")
    return problems


def _draw(fig: Figure) -> Any:
    """Lay ``fig`` out (a drawing without pixels) and return the renderer that laid it out."""
    drawn: list[Any] = []
    callback = fig.canvas.mpl_connect("draw_event", lambda event: drawn.append(event.renderer))
    try:
        fig.draw_without_rendering()
    finally:
        fig.canvas.mpl_disconnect(callback)
    return drawn[-1]


def text_problems(fig: Figure) -> dict[str, list[str]]:
    """Draw ``fig`` (without rendering pixels) and say what is wrong with its texts, in words:
    ``{"overlaps": [...], "outside": [...]}``.

    Examples
    --------
    >>> from mha.plotting.style import new_figure
    >>> fig = new_figure(3, 2)
    >>> _ = fig.text(0.5, 0.5, "one label", ha="center")
    >>> _ = fig.text(0.52, 0.5, "another label", ha="center")
    >>> _ = fig.text(0.99, 0.1, "past the edge")
    >>> problems = text_problems(fig)
    >>> problems["overlaps"][0].startswith("'one label' overprints 'another label'")
    True
    >>> problems["outside"][0].startswith("'past the edge' runs")
    True
    """
    return problems_in(fig, _draw(fig))


def drop_overprinting(fig: Figure, candidates: Sequence[Text]) -> list[Text]:
    """Keep each of ``candidates`` (optional labels, most wanted first) that has room: remove every one
    that would overprint a text of the figure or a candidate kept before it, or run off the canvas.

    For labels of many points (a scatter of 72 heads): those that fit are drawn, the others are left
    to the figure's alt text. The figure is laid out once to measure them.

    Returns
    -------
    list of matplotlib.text.Text
        The candidates kept, in their order.

    Examples
    --------
    >>> from mha.plotting.style import new_figure
    >>> fig = new_figure(3, 2)
    >>> first, second, third = (fig.text(x, 0.5, "label") for x in (0.1, 0.12, 0.5))
    >>> drop_overprinting(fig, [first, second, third]) == [first, third]
    True
    >>> second.figure is None  # removed from the figure
    True
    """
    renderer = _draw(fig)
    chosen = {id(text) for text in candidates}
    kept_boxes = [box for box in text_boxes(fig, renderer) if id(box.text) not in chosen]
    width, height = fig.bbox.width, fig.bbox.height
    kept = []
    for text in candidates:
        box = _box(text, renderer)
        (left, bottom, right, top), = _bounds([box])
        inside = left >= 0 and bottom >= 0 and right <= width and top <= height
        if inside and all(overlap_depth(box, other) < 0 for other in kept_boxes):
            kept_boxes.append(box)
            kept.append(text)
        else:
            text.remove()
    return kept


def _pt(pixels: float, renderer: Any) -> str:
    return f"{pixels / renderer.points_to_pixels(1.0):.1f} pt"

