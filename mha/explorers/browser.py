"""What the views drawn in the reader's browser share on the Python side: one HTML fragment per view.

A browser view (the quiz, the query-key geometry) is a JSON payload, a style sheet and a script from
``static/``, inlined in one output together with the small shared script ``static/view_base.js``. No CDN
and no widget library: the output works the same on the static website, in JupyterLab, Jupyter Notebook,
VS Code and JupyterLite.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache
from importlib import resources

from mha.explorers.attention_view import embedded_json

__all__ = ["static_text", "view_html"]


@cache
def static_text(name: str) -> str:
    """The text of ``mha/explorers/static/<name>`` (a script or a style sheet shipped with the package).

    Examples
    --------
    >>> "mhaViewBase" in static_text("view_base.js")
    True
    """
    return resources.files("mha.explorers").joinpath("static", name).read_text(encoding="utf8")


def view_html(payload: dict, *, prefix: str, script: str, mount: str, styles: Sequence[str] = (),
              needs: str = "This view needs JavaScript.", element_id: str | None = None) -> str:
    """One self-contained fragment: the data, the styles, the shared base, the view's script and its mount.

    Parameters
    ----------
    payload : dict
        What the script reads, as JSON (inside ``<script type="application/json" class="<prefix>-data">``).
    prefix : str
        The view's CSS class and element-id prefix, e.g. ``"mha-quiz"``.
    script : str
        The view's file in ``static/``, e.g. ``"quiz.js"``.
    mount : str
        The global function that draws the view, e.g. ``"mhaQuiz.mount"``.
    styles : sequence of str
        Style sheets in ``static/`` (or inline CSS text, when it contains a ``{``).
    needs : str
        What a reader without JavaScript is told.
    element_id : str, optional
        Deterministic by default (see :func:`mha.explorers.attention_view.embedded_json`).

    Returns
    -------
    str

    Examples
    --------
    >>> fragment = view_html({"n": 1}, prefix="mha-demo", script="view_base.js",
    ...                      mount="console.log", element_id="demo")
    >>> fragment.startswith('<div class="mha-demo" id="demo">')
    True
    """
    data, element_id = embedded_json(payload, prefix, element_id)
    css = "".join(text if "{" in text else static_text(text) for text in styles)
    style = f"<style>{css}</style>" if css else ""
    return (f'<div class="{prefix}" id="{element_id}">{style}'
            f'<script type="application/json" class="{prefix}-data">{data}</script>'
            f"<noscript>{html.escape(needs)}</noscript></div>\n"
            f"<script>{static_text('view_base.js')}\n{static_text(script)}\n"
            f'window.{mount}(document.getElementById("{element_id}"));</script>')
