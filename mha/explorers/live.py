"""Live mode of a frame explorer: in a running kernel, controls take any value and the figure is recomputed.

A frame explorer (:func:`mha.explorers.frames.frame_explorer`) always carries its pre-rendered frames,
linked to its sliders in the browser: that is what the static website shows. Given ``live=`` controls it also
carries a second set of controls (any integer in a range, any float, a text box ...) and one output
that :class:`LiveView` redraws from the package's plot functions whenever a control moves.

Which set the reader sees is decided by the frontend, not guessed in Python: the explorer asks ipywidgets
to count its views (``_view_count = 0``). A frontend connected to the kernel (JupyterLab, Notebook, VS
Code, JupyterLite) reports each view it draws back to the kernel, and the explorer switches to live
mode. The book's build runs the notebook with no frontend, so the saved state stays in frame mode; on the
static page the count changes only in the browser (no kernel hears it), so the live controls, hidden,
never appear there. No control is ever shown where it cannot work.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import ipywidgets as widgets

__all__ = ["LiveView", "live_int", "live_float", "live_log_float", "live_text", "live_choice", "connect_live"]

HIDDEN = "none"


def live_int(low: int, high: int, *, step: int = 1, value: int | None = None,
             description: str | None = None) -> widgets.IntSlider:
    """Any integer in ``[low, high]`` (from ``value``); the figure is redrawn when the slider is released."""
    return widgets.IntSlider(min=low, max=high, step=step, value=low if value is None else value,
                             description=description or "",
                             continuous_update=False, style={"description_width": "initial"})


def live_float(low: float, high: float, *, step: float = 0.01, value: float | None = None,
               description: str | None = None) -> widgets.FloatSlider:
    """Any float in ``[low, high]`` (to ``step``); redrawn when released."""
    return widgets.FloatSlider(min=low, max=high, step=step, value=low if value is None else value,
                               description=description or "",
                               continuous_update=False, style={"description_width": "initial"})


def live_log_float(low: float, high: float, *, value: float | None = None,
                   description: str | None = None) -> widgets.FloatLogSlider:
    """Any float from ``low`` to ``high`` on a log scale (steps of a tenth of a decade)."""
    import math

    return widgets.FloatLogSlider(min=math.log10(low), max=math.log10(high), step=0.1, base=10,
                                  value=low if value is None else value, description=description or "",
                                  continuous_update=False, style={"description_width": "initial"})


def live_text(placeholder: str = "", *, description: str | None = None) -> widgets.Text:
    """A text box (e.g. the reader's own sentence); redrawn on Enter or when it loses focus."""
    return widgets.Text(placeholder=placeholder, description=description or "", continuous_update=False,
                        style={"description_width": "initial"}, layout=widgets.Layout(width="420px"))


def live_choice(options: Iterable[Any], *, description: str | None = None) -> widgets.Dropdown:
    """One of ``options`` (e.g. booleans or names)."""
    return widgets.Dropdown(options=[(str(o), o) for o in options], description=description or "",
                            style={"description_width": "initial"})


class LiveView:
    """Controls wired to one output that shows ``render(**values)``, recomputed on every change.

    Parameters
    ----------
    render : callable
        ``render(**values) -> Figure | str``, the explorer's render function.
    controls : mapping of str to ipywidgets.ValueWidget
        One control per keyword of ``render``.
    encode : callable
        Turns what ``render`` returns into the output's value (PNG bytes or HTML).
    kind : {"image", "html"}
    first : bytes or str
        The frame shown before any control moves (the explorer's initial frame).

    Attributes
    ----------
    output : ipywidgets.Image or ipywidgets.HTML
        Always the same widget: a redraw replaces its value, so nothing flickers or stacks up.
    message : ipywidgets.HTML
        Why the last values could not be drawn (e.g. heads that do not divide d_model), else empty.
    redraws : int
        How many times the output was recomputed.
    """

    def __init__(self, render: Callable[..., Any], controls: Mapping[str, widgets.ValueWidget],
                 encode: Callable[[Any], bytes | str], kind: str, first: bytes | str) -> None:
        self.render, self.controls, self.encode = render, dict(controls), encode
        self.output = widgets.Image(value=first, format="png") if kind == "image" else widgets.HTML(first)
        self.message = widgets.HTML("")
        self.redraws = 0
        for control in self.controls.values():
            control.observe(self.redraw, names="value")
        self.box = widgets.VBox([*self.controls.values(), self.message, self.output],
                                layout=widgets.Layout(display=HIDDEN))

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def redraw(self, change: object = None) -> None:
        """Recompute the output from the controls' current values (called on every change)."""
        try:
            value = self.encode(self.render(**self.values()))
        except (ValueError, TypeError) as error:  # values the package refuses: say why, keep the last frame
            self.message.value = f"<span style='color:#b00020'>{html.escape(str(error))}</span>"
            return
        self.message.value = ""
        self.output.value = value
        self.redraws += 1


def connect_live(explorer: widgets.Box, static: list[widgets.Widget], live: LiveView) -> None:
    """Show ``static`` until a frontend connected to this kernel draws ``explorer``, then ``live.box``.

    Also gives the explorer ``go_live()`` (switch by hand, e.g. in tests) and ``live_mode`` (bool).
    """
    explorer.live_mode = False

    def go_live(change=None) -> None:
        if change is not None and not (change["new"] or 0) > 0:
            return
        if not explorer.live_mode:
            explorer.live_mode = True
            for widget in static:
                widget.layout.display = HIDDEN
            live.box.layout.display = None

    explorer.go_live = go_live
    explorer.observe(go_live, names="_view_count")
    explorer._view_count = 0  # frontends now report the views they draw
