"""A pretrained encoder's heads, explorable in the browser: head view, model view, query-key view.

Each call takes what ``encoder(text)`` returns (an :class:`mha.pretrained.Encoding`) and returns an
:class:`~mha.explorers.attention_view.AttentionView`: the arrays embedded compactly in the page and drawn by
a small script of this package, so the views work without Python on the static site, and a live reader
can pass a sentence of their own. Nothing here computes attention.
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mha.explorers.attention_view import AttentionView, attention_view

if TYPE_CHECKING:  # for the annotations only: importing it here would need an extra
    import ipywidgets as widgets

    from mha.pretrained.encodings import Encoding

__all__ = ["head_view", "model_view", "query_key_view", "sentence_explorer"]


def head_view(encoding: Encoding, *, layer: int = 0, heads: Sequence[int] = (0,),
              query: int | str | None = None, title: str | None = None,
              query_key: bool = True) -> AttentionView:
    """One sentence's head view, and below it the query-key view of the selected query and head.

    Parameters
    ----------
    encoding : mha.pretrained.Encoding
        ``encoder(text)``.
    layer : int, default 0
    heads : sequence of int, default (0,)
        Heads drawn first (more can be switched on in the page).
    query : int or str, optional
        A token to select first (its first occurrence).
    title : str, optional
    query_key : bool, default True
        Add the query-key view when the encoding carries queries and keys. False makes the page lighter
        (weights only: about a sixth of the bytes).

    Returns
    -------
    AttentionView
    """
    with_queries = query_key and getattr(encoding, "queries", None) is not None
    views = ("head", "query_key") if with_queries else ("head",)
    return attention_view(encoding, views=views, layer=layer, heads=heads, query=query,
                          title=title or "Head view: pick a layer and heads, then a token")


def model_view(encodings: Encoding | Mapping[str, Encoding], *, layer: int = 0, head: int = 0,
               title: str | None = None) -> AttentionView:
    """Every layer x head of one or more sentences; a click on a map opens that head's head view.

    Parameters
    ----------
    encodings : Encoding or mapping of str to Encoding
        Several labelled sentences get a menu.
    layer, head : int, default 0
        The head open first in the head view.
    title : str, optional

    Returns
    -------
    AttentionView
    """
    return attention_view(encodings, views=("model", "head"), layer=layer, heads=(head,),
                          title=title or "Model view: every head at once")


def query_key_view(encoding: Encoding, *, layer: int = 0, head: int = 0, query: int | str = 0,
                   title: str | None = None) -> AttentionView:
    """How one query's scores with every key are made, element by element, in one head.

    Parameters
    ----------
    encoding : mha.pretrained.Encoding
        Must carry ``queries`` and ``keys`` (``encoder(text)`` keeps them).
    layer, head : int, default 0
    query : int or str, default 0
    title : str, optional

    Returns
    -------
    AttentionView
    """
    return attention_view(encoding, views=("query_key",), layer=layer, heads=(head,), query=query,
                          title=title or "Query-key view: from q and k to the attention weight")


def sentence_explorer(encoder: Callable[[str], Encoding], *, view: Callable[..., AttentionView] = head_view,
                      text: str = "", **view_options: Any) -> widgets.Widget:
    """A text box for the reader's own sentence, and ``view`` of what ``encoder`` makes of it.

    It needs a running kernel, so it stays hidden until a frontend connected to one draws it (see
    :mod:`mha.explorers.live`): on the static site the cell shows nothing, never a dead text box.

    Parameters
    ----------
    encoder : callable
        ``encoder(text) -> Encoding``, e.g. :func:`mha.pretrained.load_encoder`'s result.
    view : callable, default :func:`head_view`
        :func:`head_view`, :func:`model_view` or :func:`query_key_view`.
    text : str, optional
        The sentence shown first.
    **view_options
        Passed to ``view`` (e.g. ``layer=3, heads=[1]``).

    Returns
    -------
    ipywidgets.VBox
        With ``text`` (the box), ``output`` (one output, replaced on every sentence), ``message``, and
        ``go_live()``.
    """
    import ipywidgets as widgets

    from mha.explorers.live import HIDDEN, live_text

    box = live_text("Type a sentence and press Enter", description="Your sentence")
    box.value = text
    output, message = widgets.Output(), widgets.HTML("")

    def redraw(change=None):
        if not box.value.strip():
            return
        try:
            with warnings.catch_warnings(record=True) as caught:  # a text too long for the model, say
                warnings.simplefilter("always")
                shown = view(encoder(box.value), **view_options)
        except (ValueError, TypeError) as error:
            message.value = f"<span style='color:#b00020'>{html.escape(str(error))}</span>"
            return
        message.value = "<br>".join(html.escape(_sentence_case(str(w.message))) for w in caught)
        output.outputs = ({"output_type": "display_data", "metadata": {},
                           "data": {"text/html": shown.to_html(), "text/plain": repr(shown)}},)

    explorer = widgets.VBox([box, message, output], layout=widgets.Layout(display=HIDDEN))
    explorer.text, explorer.output, explorer.message = box, output, message

    def go_live(change=None):
        if change is None or (change["new"] or 0) > 0:
            explorer.layout.display = None
            if not output.outputs:
                redraw()

    box.observe(redraw, names="value")
    explorer.go_live = go_live
    explorer.observe(go_live, names="_view_count")
    explorer._view_count = 0
    return explorer


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]
