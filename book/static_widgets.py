"""Sphinx extension: a chapter's widgets become plain HTML, and no widget library loads in the browser.

A frame explorer (``mha.explorers.frames``) is an ipywidgets tree: a title, sliders, nested stacks of
pre-rendered frames linked to the sliders (``jslink``), a caption, and a hidden live part a kernel
switches on. myst-nb writes each one as a widget view (``<script type="...widget-view+json">``) and
the page's widget state. No kernel runs behind the book, so nothing here needs a widget manager: at
``doctree-resolved`` each view becomes HTML, the way every other kernel-free view of the course is
made (``mha.explorers.browser``: markup, a style sheet and a small script):

- a slider is an ``<input type="range">`` over its options' positions with a ``<label>`` and an
  ``<output>`` (the browser gives it the arrow, Page and Home/End keys and a name; ``aria-valuetext``
  says the value shown, not its position); an off/on control is a group of pressed/unpressed buttons;
- a stack is a ``<div data-control=...>`` whose children but the selected one are ``hidden``;
- a frame image is a file, ``_images/frames/<hash>.png``, sized and loaded lazily when shown
  (:func:`book.figures.frame_img`), its alt text from the PNG;
- what a kernel alone can drive (the live part, ``display: none``) is left out.

``assets/static-widgets.js`` switches the frames. A widget this module cannot draw (or a view whose
state the notebook did not save) is left out with a warning naming it, which fails a build run with
``--warningiserror``: a widget that looks alive and does nothing is worse than none.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

from book.figures import frame_img
from mha.plotting.style import png_facts

LOGGER = logging.getLogger(__name__)
VIEW_TAG = '<script type="application/vnd.jupyter.widget-view+json">'
STATE = "application/vnd.jupyter.widget-state+json"
FRAMES = "_images/frames"
PREFIX = "IPY_MODEL_"
#: Models with no view of their own.
DATA = {"LayoutModel", "LinkModel", "DirectionalLinkModel"}


class Page:
    """One page's widget state, drawn as HTML (``url_of`` makes a site path relative to the page)."""

    def __init__(self, state: dict, outdir: Path, url_of, docname: str) -> None:
        self.models = state["state"]
        self.outdir, self.url_of, self.docname = outdir, url_of, docname
        self.control_of: dict[str, str] = {}  # stack id -> the control that picks its child
        for model in self.models.values():
            if model["model_name"] in ("LinkModel", "DirectionalLinkModel"):
                (source, key), (target, target_key) = model["state"]["source"], model["state"]["target"]
                if (key, target_key) != ("index", "selected_index"):
                    raise ValueError(f"{docname}: a widget link {key} -> {target_key} cannot be drawn here")
                self.control_of[target.removeprefix(PREFIX)] = source.removeprefix(PREFIX)

    def state(self, ref: str) -> tuple[str, dict]:
        model = self.models.get(ref.removeprefix(PREFIX))
        if model is None:
            raise ValueError(f"{self.docname}: a widget names model {ref}, which the page's state lacks")
        return model["model_name"], model["state"]

    def hidden(self, state: dict) -> bool:
        layout = state.get("layout")
        return bool(layout) and self.state(layout)[1].get("display") == "none"

    def draw(self, ref: str) -> str:
        """The HTML of model ``ref`` and its children."""
        name, state = self.state(ref)
        draw = getattr(self, f"_{name}", None)
        if draw is None or name in DATA:
            raise ValueError(f"{self.docname}: the static page cannot draw a {name} (book/static_widgets.py)")
        return "" if self.hidden(state) else draw(ref.removeprefix(PREFIX), state)

    def _children(self, state: dict) -> list[str]:
        return [self.draw(child) for child in state.get("children", [])]

    def _VBoxModel(self, model_id: str, state: dict) -> str:
        return f'<div class="widget-container mha-box">{"".join(self._children(state))}</div>'

    _BoxModel = _VBoxModel

    def _HBoxModel(self, model_id: str, state: dict) -> str:
        return f'<div class="widget-container mha-box mha-row">{"".join(self._children(state))}</div>'

    def _HTMLModel(self, model_id: str, state: dict) -> str:
        return f'<div class="mha-html">{state.get("value", "")}</div>' if state.get("value") else ""

    def _StackModel(self, model_id: str, state: dict) -> str:
        control = self.control_of.get(model_id)
        if control is None:
            raise ValueError(f"{self.docname}: stack {model_id} follows no control: its frames are stuck")
        chosen = state.get("selected_index") or 0
        frames = "".join(f'<div class="mha-frame"{"" if index == chosen else " hidden"}>{child}</div>'
                         for index, child in enumerate(self._children(state)))  # fmt: skip
        return f'<div class="mha-stack" data-control="w-{control}">{frames}</div>'

    def _SelectionSliderModel(self, model_id: str, state: dict) -> str:
        labels, index = state["_options_labels"], state.get("index") or 0
        label = html.escape(state.get("description") or "")
        shown, options = html.escape(labels[index]), html.escape(json.dumps(labels))
        return (f'<div class="mha-control"><label for="w-{model_id}">{label}</label>'
                f'<input type="range" id="w-{model_id}" min="0" max="{len(labels) - 1}" value="{index}" '
                f'aria-valuetext="{shown}" data-labels="{options}">'
                f'<output for="w-{model_id}">{shown}</output></div>')

    def _ToggleButtonsModel(self, model_id: str, state: dict) -> str:
        labels, index = state["_options_labels"], state.get("index") or 0
        label = html.escape(state.get("description") or "")
        buttons = "".join(f'<button type="button" aria-pressed="{"true" if i == index else "false"}">'
                          f"{html.escape(text)}</button>" for i, text in enumerate(labels))
        return (f'<div class="mha-control" role="group" aria-labelledby="w-{model_id}-label">'
                f'<span id="w-{model_id}-label">{label}</span><span class="mha-toggles" id="w-{model_id}">'
                f"{buttons}</span></div>")  # fmt: skip

    def _ImageModel(self, model_id: str, state: dict) -> str:
        png = next((base64.b64decode(buffer["data"]) for buffer in self.models[model_id].get("buffers", [])
                    if buffer.get("path") == ["value"]), None)  # fmt: skip
        if png is None or state.get("format", "png") != "png":
            raise ValueError(f"{self.docname}: image {model_id} holds no PNG")
        path = self.outdir / FRAMES / f"{hashlib.sha256(png).hexdigest()[:20]}.png"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png)
        alt = png_facts(png)["text"].get("Description") or "Figure"
        return frame_img(path, self.url_of(f"{FRAMES}/{path.name}"), alt)


def page_state(app, docname: str) -> dict | None:
    """The widget state myst-nb keeps for ``docname`` (parsed), or None."""
    from myst_nb.sphinx_ import NbMetadataCollector

    js = NbMetadataCollector.get_js_files(app.env, docname).get("ipywidgets_state")
    return json.loads(js[1]["body"].replace("<\\/script>", "</script>")) if js else None


def draw_widgets(app, doctree, docname: str) -> None:
    """Replace each widget view of the page by its HTML."""
    views = [node for node in doctree.findall(nodes.raw) if node.astext().startswith(VIEW_TAG)]
    if not views or app.builder.format != "html":
        return
    state = page_state(app, docname)
    depth = "../" * docname.count("/")
    page = Page(state or {"state": {}}, Path(app.outdir), lambda path: depth + path, docname)
    for node in views:
        text = node.astext().removeprefix(VIEW_TAG).removesuffix("</script>")
        view = json.loads(text.replace("<\\/script>", "</script>"))
        try:
            markup = page.draw(view["model_id"])  # "" for a view only a kernel shows: no empty panel
        except ValueError as error:  # a warning: --warningiserror (CI) fails, --keep-going goes on
            LOGGER.warning(f"widget not drawn: {error}", location=node)
            markup = ""
        node.replace_self(nodes.raw("", f'<div class="widget-subarea">{markup}</div>' if markup else "",
                                    format="html"))


def no_widget_state(app, pagename, templatename, context, doctree) -> None:
    """Drop the widget state from the page (drawn already) and add the frame switcher where needed."""
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [js for js in scripts if (getattr(js, "attributes", None) or {}).get("type") != STATE]
    raws = doctree.findall(nodes.raw) if doctree is not None else ()
    if any('class="mha-stack"' in node.astext() for node in raws):
        app.add_js_file("static-widgets.js", defer="defer")


def setup(app):
    app.connect("doctree-resolved", draw_widgets)
    app.connect("html-page-context", no_widget_state, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
