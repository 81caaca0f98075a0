"""Sliders that flip through pre-rendered frames, so they work on the static website too.

A chapter hands over a *pure* render callable and the values each slider may take; every
combination is rendered once, in Python, into a small PNG (or an HTML snippet). The sliders are
then linked to nested ``ipywidgets.Stack`` containers with ``ipywidgets.jslink``: moving a slider
switches the visible frame in the browser, with no kernel behind the page. Given ``live=`` controls,
an explorer also carries controls that take any value and an output recomputed by ``render``; a
frontend connected to a kernel (Jupyter, VS Code, JupyterLite) switches to them, the static site
never shows them (:mod:`mha.explorers.live`).

Why not ``ipywidgets.interact`` alone? Its callback runs Python on every move. The built book has no
Python running, so an ``interact`` figure would freeze on its first frame.

Render callables
----------------
``render(**values)`` receives one value per control, by the control's name, and returns either

- a ``matplotlib.figure.Figure`` -- encoded to PNG on a white background (readable in dark mode)
  and closed, so the notebook shows no stray copy of it (lay it out yourself, e.g. with
  ``plt.subplots(layout="constrained")``: frames are saved as drawn, not trimmed), or
- a ``str`` of HTML -- shown as is (the shapes chapter uses this for its table tracer).

All frames of one explorer must be of the same kind. Plotting code belongs in ``mha.plotting``;
this module only wires frames to sliders.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> def render(n_heads, seq_len):
...     fig, ax = plt.subplots(figsize=(3, 2))
...     ax.bar(range(n_heads), [seq_len] * n_heads)
...     ax.set_title(f"{n_heads} heads, {seq_len} tokens")
...     return fig
>>> explorer = frame_explorer(render, {"n_heads": [1, 2, 4], "seq_len": [4, 8]},
...                           title="Heads and tokens")
>>> len(explorer.frames), len(explorer.sliders), len(explorer.links)
(6, 2, 4)
>>> explorer.frames[(4, 8)][:4] == b"\\x89PNG"
True
>>> plt.get_fignums()  # every rendered figure was closed
[]
"""

from __future__ import annotations

import html
import inspect
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from mha.explorers.png import figure_to_png
from mha.plotting.style import PNG_DPI

__all__ = ["FrameExplorer", "frame_explorer", "render_frames", "slider_values"]

#: Upper bound on the number of pre-rendered frames: each one is embedded in the page. 72 is every head
#: of a 6-layer, 12-head model (the real-heads chapter); beyond ~100 the page weighs megabytes.
MAX_FRAMES = 96


def slider_values(name: str, values: Iterable[Any]) -> tuple[Any, ...]:
    """An explorer argument that lists a slider's values, as a tuple; an empty one is refused.

    Explorers pick their starting frame from these values (the middle one, say), so they check them
    first: ``head_explorer(seq_lens=())`` names the argument instead of failing on an index.

    Examples
    --------
    >>> slider_values("seq_lens", [4, 8])
    (4, 8)
    >>> slider_values("seq_lens", ())
    Traceback (most recent call last):
    ...
    ValueError: seq_lens is empty: its slider needs at least one value
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of slider values, got {type(values).__name__} {values!r}")
    found = tuple(values)
    if not found:
        raise ValueError(f"{name} is empty: its slider needs at least one value")
    return found


def _check_controls(controls: Mapping[str, Sequence[Any]]) -> dict[str, tuple[Any, ...]]:
    """Validate the control spec and return it as a dict of tuples."""
    if not isinstance(controls, Mapping) or not controls:
        raise ValueError(
            "controls must be a non-empty mapping of name -> allowed values, "
            f"e.g. {{'n_heads': [1, 2, 4]}}; got {controls!r}"
        )
    checked = {}
    for name, values in controls.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"control names must be Python identifiers, got {name!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(
                f"control {name!r} needs a list of allowed values, got {type(values).__name__}"
            )
        if len(values) == 0:
            raise ValueError(f"control {name!r} has no values; give at least one")
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"control {name!r} repeats a value: {list(values)!r}")
        checked[name] = tuple(values)
    n_frames = 1
    for values in checked.values():
        n_frames *= len(values)
    if n_frames > MAX_FRAMES:
        sizes = " x ".join(str(len(v)) for v in checked.values())
        raise ValueError(
            f"{sizes} = {n_frames} frames would be embedded in the page; "
            f"keep it at most {MAX_FRAMES} (fewer values per slider)"
        )
    return checked


def _check_signature(render: Callable[..., Any], names: list[str]) -> None:
    """Fail early, and clearly, when ``render`` cannot take the controls as keywords."""
    try:
        signature = inspect.signature(render)
    except (TypeError, ValueError):  # builtins without a signature: let the call decide
        return
    try:
        signature.bind(**dict.fromkeys(names))
    except TypeError as error:
        raise TypeError(
            f"render{signature} cannot be called with the controls {names} as keywords "
            f"({error}); name the controls after render's parameters"
        ) from None


def render_frames(
    render: Callable[..., Any],
    controls: Mapping[str, Sequence[Any]],
    *,
    dpi: int = PNG_DPI,
    colors: int | None = None,
    title: str | None = None,
) -> tuple[str, dict[tuple[Any, ...], bytes | str]]:
    """Call ``render`` once per combination of control values.

    Parameters
    ----------
    render : callable
        ``render(**values)`` returning a matplotlib Figure or an HTML string.
    controls : mapping of str to sequence
        Allowed values per control, in slider order.
    dpi : int
        PNG resolution for figure frames.
    colors : int, optional
        Palette size for figure frames (see :func:`figure_to_png`).
    title : str, optional
        Names figure frames in their alt text when a figure cannot describe itself; each frame's
        alt text ends with its control values, e.g. ``"(n_heads = 4, seq_len = 8)"``.

    Returns
    -------
    kind : {"image", "html"}
    frames : dict
        Maps a tuple of values (in the order of ``controls``) to PNG bytes or an HTML string.

    Examples
    --------
    >>> kind, frames = render_frames(lambda n: f"<b>{n}</b>", {"n": [1, 2]})
    >>> kind, frames
    ('html', {(1,): '<b>1</b>', (2,): '<b>2</b>'})
    """
    from matplotlib.figure import Figure

    if not callable(render):
        raise TypeError(f"render must be callable, got {type(render).__name__}")
    checked = _check_controls(controls)
    names = list(checked)
    _check_signature(render, names)
    kinds = set()
    frames: dict[tuple[Any, ...], bytes | str] = {}
    for combination in itertools.product(*checked.values()):
        values = dict(zip(names, combination, strict=True))
        result = render(**values)
        if isinstance(result, Figure):
            kinds.add("image")
            frames[combination] = figure_to_png(
                result, dpi=dpi, colors=colors, description=_frame_alt(result, title, values)
            )
        elif isinstance(result, str):
            kinds.add("html")
            frames[combination] = result
        else:
            raise TypeError(
                f"render({dict(zip(names, combination, strict=True))}) returned "
                f"{type(result).__name__}; expected a matplotlib Figure or an HTML str"
            )
        if len(kinds) > 1:
            raise TypeError("render returned both Figures and HTML strings; use one kind")
    return kinds.pop(), frames


def _frame_alt(fig: Any, title: str | None, values: Mapping[str, Any]) -> str:
    """Alt text of one frame: what the figure shows (or the title), then its control values."""
    own = fig.describe() if callable(getattr(fig, "describe", None)) else None
    settings = ", ".join(f"{name} = {value}" for name, value in values.items())
    return f"{own or title or 'Figure'} ({settings})"


class FrameExplorer(widgets.VBox):
    """A title, one slider per control, the frame stack and a caption, stacked vertically.

    Build it with :func:`frame_explorer`. Attributes useful in tests and notebooks:

    Attributes
    ----------
    sliders : dict of str to ipywidgets.SelectionSlider or ipywidgets.ToggleButtons
        One control per name; a False/True control is an off/on toggle, not a 0/1 slider.
    stack : ipywidgets.Stack
        The outer stack; nested stacks hold the frames for the later controls.
    links : list of ipywidgets.Link
        Browser-side links from slider ``index`` to stack ``selected_index``.
    frames : dict
        The rendered frames, keyed by tuples of control values.
    kind : {"image", "html"}

    live : mha.explorers.live.LiveView or None
        With ``live=`` controls: the controls and output recomputed in a running kernel.
    """

    def __init__(self, *, children: Sequence[Any], sliders: Mapping[str, Any], stack: Any,
                 links: Sequence[Any], frames: Mapping[tuple[Any, ...], Any], kind: str,
                 live: Any = None) -> None:
        super().__init__(children=children)
        self.sliders = sliders
        self.stack = stack
        self.links = links
        self.frames = frames
        self.kind = kind
        self.live = live


def _control(values: tuple[Any, ...], value: Any, label: str) -> widgets.Widget:
    """A slider over ``values``, or an off/on toggle when they are exactly False and True.

    Both expose ``index`` (linked to the frame stack) and fit the text column: a slider takes the
    column's width up to 480 px, so its value readout stays on screen on a phone.
    """
    if len(values) == 2 and all(isinstance(v, bool) for v in values) and values[0] != values[1]:
        return widgets.ToggleButtons(
            options=[("on" if v else "off", v) for v in values],
            value=value,
            description=label,
            style={"description_width": "initial", "button_width": "4em"},
            layout=widgets.Layout(width="auto", max_width="100%"),
        )
    return widgets.SelectionSlider(
        options=[(str(v), v) for v in values],
        value=value,
        description=label,
        style={"description_width": "initial"},
        layout=widgets.Layout(width="100%", max_width="480px"),
    )


def _frame_widget(kind: str, frame: bytes | str) -> widgets.Widget:
    # No `tooltip` here: html-manager 1.0's ImageView crashes on it (it reads a description that
    # Image does not have), and the frame would not render on the static site.
    if kind == "image":
        return widgets.Image(value=frame, format="png")
    return widgets.HTML(value=frame)


def _build_stack(kind, frames, checked, names, prefix, sliders, links):
    """Nested Stack for the controls after ``prefix``; link each level to its slider."""
    depth = len(prefix)
    name = names[depth]
    children = []
    for value in checked[name]:
        key = (*prefix, value)
        if depth == len(names) - 1:
            children.append(_frame_widget(kind, frames[key]))
        else:
            children.append(_build_stack(kind, frames, checked, names, key, sliders, links))
    stack = widgets.Stack(children=children, selected_index=sliders[name].index)
    links.append(widgets.jslink((sliders[name], "index"), (stack, "selected_index")))
    return stack


def frame_explorer(
    render: Callable[..., Any],
    controls: Mapping[str, Sequence[Any]],
    *,
    labels: Mapping[str, str] | None = None,
    initial: Mapping[str, Any] | None = None,
    title: str | None = None,
    caption: str | None = None,
    dpi: int = PNG_DPI,
    colors: int | None = None,
    live: Mapping[str, widgets.ValueWidget] | None = None,
) -> FrameExplorer:
    """Pre-render every combination of slider values and link sliders to the frames.

    Parameters
    ----------
    render : callable
        Pure function ``render(**values) -> Figure | str``; see the module docstring.
    controls : mapping of str to sequence
        Slider name -> allowed values, e.g. ``{"n_heads": [1, 2, 4, 8], "seq_len": [4, 8, 16]}``.
        At most ``MAX_FRAMES`` combinations in total.
    labels : mapping of str to str, optional
        Text shown next to each slider (defaults to the control name).
    initial : mapping of str to value, optional
        Starting value per control (defaults to each control's first value).
    title, caption : str, optional
        Plain text shown above and below the frames (escaped, not HTML).
    dpi : int
        PNG resolution for figure frames.
    colors : int, optional
        Palette size for figure frames (see :func:`figure_to_png`).
    live : mapping of str to ipywidgets.ValueWidget, optional
        Controls for a running kernel (see :mod:`mha.explorers.live`): any value in their range, redrawn
        by ``render``. A control may replace a slider (same name) or be new (e.g. a text box; ``render``
        takes it as a keyword); sliders without one get a menu of their values. Shown instead of the
        sliders once a frontend connected to the kernel draws the explorer; never on the static site.

    Returns
    -------
    FrameExplorer
        An ``ipywidgets.VBox``; display it as a cell's last expression.

    Examples
    --------
    >>> explorer = frame_explorer(lambda n_heads: f"<p>{n_heads} heads</p>",
    ...                           {"n_heads": [1, 2, 4]}, initial={"n_heads": 2})
    >>> explorer.sliders["n_heads"].value, explorer.stack.selected_index
    (2, 1)
    """
    checked = _check_controls(controls)
    names = list(checked)
    labels = dict(labels or {})
    initial = dict(initial or {})
    for mapping, what in ((labels, "labels"), (initial, "initial")):
        unknown = set(mapping) - set(names)
        if unknown:
            raise ValueError(f"{what} names unknown controls {sorted(unknown)}; controls: {names}")
    for name, value in initial.items():
        if value not in checked[name]:
            raise ValueError(
                f"initial {name}={value!r} is not one of its values {list(checked[name])}"
            )
    kind, frames = render_frames(render, checked, dpi=dpi, colors=colors, title=title)

    sliders = {
        name: _control(values, initial.get(name, values[0]), labels.get(name, name))
        for name, values in checked.items()
    }
    links: list[widgets.Link] = []
    stack = _build_stack(kind, frames, checked, names, (), sliders, links)

    children: list[widgets.Widget] = []
    if title:
        children.append(widgets.HTML(f"<strong>{html.escape(title)}</strong>"))
    children.extend(sliders.values())
    children.append(stack)
    live_view = None
    if live is not None:
        live_view = _live_view(render, checked, initial, live, kind, frames, dpi)
        children.append(live_view.box)
    if caption:
        children.append(widgets.HTML(f"<em>{html.escape(caption)}</em>"))
    explorer = FrameExplorer(
        children=children, sliders=sliders, stack=stack, links=links, frames=frames, kind=kind, live=live_view
    )
    if live_view is not None:
        from mha.explorers.live import connect_live

        connect_live(explorer, [*sliders.values(), stack], live_view)
    return explorer


def _live_view(render, checked, initial, live, kind, frames, dpi):
    """The live controls and output: slider values first, then the live-only controls."""
    from mha.explorers.live import LiveView, live_choice

    controls = {}
    for name, values in checked.items():
        control = live.get(name) or live_choice(values, description=name)
        control.value = initial.get(name, values[0])
        controls[name] = control
    controls.update({name: control for name, control in live.items() if name not in checked})
    _check_signature(render, list(controls))
    first = frames[tuple(initial.get(name, values[0]) for name, values in checked.items())]

    def encode(result):
        if kind == "html":
            if not isinstance(result, str):
                raise TypeError(f"render returned {type(result).__name__}; expected an HTML str")
            return result
        # Full colour: a palette saves page weight, which a live kernel does not pay, and costs time.
        return figure_to_png(result, dpi=dpi)

    return LiveView(render, controls, encode, kind, first)
