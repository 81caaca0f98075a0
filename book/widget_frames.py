"""Sphinx extension: a widget's pre-rendered frames become image files, loaded when they are shown.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. A frame explorer
(``mha.explorers.frames``) holds every frame as a PNG inside the page's widget state: up to 2.8 MB of
base64 in the HTML, all of it downloaded before the page's widgets could render. For every
``ImageModel`` whose value is a PNG, this extension

- writes the PNG once to ``_images/frames/<hash>.png`` (named by content, so a frame two widgets
  share is stored once), and
- replaces the model by an ``HTMLModel`` holding an ``<img>`` of that file (:func:`book.figures.frame_img`):
  sized in CSS px from the PNG's resolution, 1x/2x, its alt text from the PNG's ``Description``,
  and ``loading="lazy"``: the browser fetches a frame when its slider shows it, not before.

The sliders, stacks and links are untouched, so the explorer behaves as before; only the static site
changes (a notebook in Jupyter keeps its ``Image`` widgets and its kernel).
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from book.figures import frame_img
from mha.plotting.style import png_facts

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
FRAMES = "_images/frames"
STYLE_ID = "mha-frame-html-style"
CONTROLS = {"_model_module": "@jupyter-widgets/controls", "_model_module_version": "2.0.0",
            "_view_module": "@jupyter-widgets/controls", "_view_module_version": "2.0.0"}  # fmt: skip


def _png_of(model: dict) -> bytes | None:
    if model.get("model_name") != "ImageModel" or model["state"].get("format") != "png":
        return None
    for buffer in model.get("buffers", []):
        if buffer.get("path") == ["value"] and buffer.get("encoding") == "base64":
            return base64.b64decode(buffer["data"])
    return None


def _html_model(image: dict, markup: str) -> dict:
    state = image["state"]
    return {
        "model_name": "HTMLModel",
        "model_module": "@jupyter-widgets/controls",
        "model_module_version": "2.0.0",
        "state": {**CONTROLS, "_model_name": "HTMLModel", "_view_name": "HTMLView", "_view_count": None,
                  "_dom_classes": ["mha-frame"], "description": "", "description_allow_html": False,
                  "layout": state["layout"], "placeholder": "", "style": f"IPY_MODEL_{STYLE_ID}",
                  "tabbable": None, "tooltip": None, "value": markup},
    }  # fmt: skip


def _style_model() -> dict:
    return {
        "model_name": "HTMLStyleModel",
        "model_module": "@jupyter-widgets/controls",
        "model_module_version": "2.0.0",
        "state": {"_model_module": "@jupyter-widgets/controls", "_model_module_version": "2.0.0",
                  "_model_name": "HTMLStyleModel", "_view_count": None,
                  "_view_module": "@jupyter-widgets/base", "_view_module_version": "2.0.0",
                  "_view_name": "StyleView", "background": None, "description_width": "",
                  "font_size": None, "text_color": None},
    }  # fmt: skip


def frames_to_files(state: dict, outdir: Path, url_of) -> int:
    """Move every PNG frame of a widget ``state`` (parsed JSON, changed in place) into files.

    ``url_of(relative)`` turns a path under the site's root into a URL relative to the page.
    Returns how many frames were moved.
    """
    models = state["state"]
    moved = 0
    for model_id, model in list(models.items()):
        png = _png_of(model)
        if png is None:
            continue
        name = hashlib.sha256(png).hexdigest()[:20] + ".png"
        path = outdir / FRAMES / name
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png)
        alt = png_facts(png)["text"].get("Description") or "Figure"
        models[model_id] = _html_model(model, frame_img(path, url_of(f"{FRAMES}/{name}"), alt))
        moved += 1
    if moved:
        models[STYLE_ID] = _style_model()
    return moved


def _is_widget_state(script) -> bool:
    return (getattr(script, "attributes", None) or {}).get("type") == WIDGET_STATE


def move_frames(app, pagename, templatename, context, doctree) -> None:
    """Rewrite this page's widget-state scripts with their frames moved to files."""
    scripts = context.get("script_files") or []
    outdir = Path(app.outdir)
    for script in filter(_is_widget_state, scripts):
        state = json.loads(script.attributes["body"])
        if frames_to_files(state, outdir, lambda relative: context["pathto"](relative, 1)):
            script.attributes["body"] = json.dumps(state, separators=(",", ":")).replace("</", "<\\/")


def setup(app):
    # Before book.lean_site moves the state to the end of the body (priority 900).
    app.connect("html-page-context", move_frames, priority=850)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
