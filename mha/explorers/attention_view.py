"""Attention views drawn in the reader's browser: head view, model view, query-key view (plain JS and SVG).

:func:`attention_view` packs a model's attention weights (and, for the query-key view, its queries and
keys) compactly into one HTML output, with a small script and style sheet shipped in this package
(``static/attention_view.js`` and ``.css``) inlined next to them. No CDN and no widget library: the output
works the same on the static website, in JupyterLab, Jupyter Notebook, VS Code and JupyterLite.

- **Head view**: tokens in two columns (queries left, keys right), a line for each weight of at least
  ``threshold``, its opacity the weight. Choose a layer and one or more heads (one colour each); hover or
  focus a token to see only its lines, Enter (or a click) keeps it, Escape lets go. Arrow keys move
  between tokens.
- **Model view**: every layer x head as a small map (queries down, keys across); a click opens that head
  in the head view.
- **Query-key view**: for one query of one head, the vector ``q``, every key's ``k``, the element-wise
  products ``q * k``, the score ``sum(q * k) / sqrt(d_head)`` and the softmax over keys.

The format (one JSON object, shared by the three views): per sentence, weights as ``uint8`` codes
``round(w * 255)`` and queries/keys as ``int16`` codes with one scale per (layer, head), each base64
encoded in C order. :func:`decode_sentence` reads it back (the tests use it to compare both sides).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

from mha.validation import check_int, is_int

if TYPE_CHECKING:  # for the annotations only: importing it here would need an extra
    from mha.pretrained.encodings import Encoding

__all__ = ["VIEWS", "AttentionView", "attention_view", "decode_sentence", "view_payload"]

#: The views one output can hold, in the order they are drawn.
VIEWS = ("model", "head", "query_key")
#: Weights below this are not drawn as lines (the matplotlib head view's threshold).
DEFAULT_THRESHOLD = 0.02
#: Largest code of the little-endian int16 that carries queries and keys.
CODE_MAX = 32767.0


@cache
def _static(name: str) -> str:
    return resources.files("mha.explorers").joinpath("static", name).read_text(encoding="utf8")


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")


def _signed_codes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int16 codes and one scale per (layer, head) for x of shape (n_layers, n_heads, seq, d_head).

    16 bits, not 8: with int8 codes the softmax of the rebuilt scores strays by up to 0.03 from the model's
    weights (measured on all-MiniLM-L6-v2); with int16 by about 1e-4.
    """
    scales = np.abs(x).max(axis=(-2, -1)) / CODE_MAX  # (n_layers, n_heads)
    scales = np.where(scales > 0, scales, 1.0)
    codes = np.rint(x / scales[..., None, None]).astype("<i2")  # (n_layers, n_heads, seq, d_head)
    return codes, scales


def _sentence_payload(label: str, tokens, attentions, queries, keys) -> dict:
    entry = {"label": label, "tokens": tokens,
             "attention": _b64(np.rint(attentions * 255.0).astype(np.uint8))}
    if queries is not None:
        for name, scales_name, x in (("queries", "query_scales", queries), ("keys", "key_scales", keys)):
            codes, scales = _signed_codes(x)
            entry[name], entry[scales_name] = _b64(codes), [float(s) for s in scales.ravel()]
    return entry


def _as_entry(label: str, encoding, with_queries: bool):
    """Validated (tokens, attentions, queries, keys) of one encoding-like object."""
    if not _is_encoding(encoding):
        raise TypeError(f"sentence {label!r}: expected an Encoding (what encoder(text) returns), "
                        f"got {type(encoding).__name__}")
    tokens = list(encoding.tokens)
    attentions = np.asarray(encoding.attentions, dtype=np.float64)
    if attentions.ndim != 4 or attentions.shape[2:] != (len(tokens), len(tokens)):
        raise ValueError(f"sentence {label!r}: attentions must have shape (n_layers, n_heads, seq, seq) with "
                         f"seq = {len(tokens)} tokens, got {attentions.shape}")
    if not np.isfinite(attentions).all() or attentions.min() < 0 or attentions.max() > 1 + 1e-6:
        raise ValueError(f"sentence {label!r}: attention weights must be finite and in [0, 1]")
    queries = keys = None
    if with_queries:
        queries, keys = getattr(encoding, "queries", None), getattr(encoding, "keys", None)
        if queries is None or keys is None:
            raise ValueError(f"sentence {label!r} carries no queries and keys, which the query-key view "
                             "needs: encode it with encoder(text) (or encode(..., return_queries_keys=True))")
        queries, keys = np.asarray(queries, np.float64), np.asarray(keys, np.float64)
        expected = (*attentions.shape[:3], queries.shape[-1])
        if queries.shape != expected or keys.shape != expected or not (
                np.isfinite(queries).all() and np.isfinite(keys).all()):
            raise ValueError(f"sentence {label!r}: queries and keys must be finite, of shape (n_layers, "
                             f"n_heads, seq, d_head) = {expected}; got {queries.shape} and {keys.shape}")
    return tokens, attentions, queries, keys


def _is_encoding(encoding) -> bool:
    """Whether ``encoding`` looks like one sentence's Encoding: a list of str tokens and attentions."""
    tokens = getattr(encoding, "tokens", None)
    return (getattr(encoding, "attentions", None) is not None and isinstance(tokens, Sequence)
            and not isinstance(tokens, str) and all(isinstance(t, str) for t in tokens))


def view_payload(encodings: Encoding | Mapping[str, Encoding], *, views: Sequence[str] = VIEWS,
                 layer: int = 0, heads: Sequence[int] = (0,), query: int | None = None,
                 title: str | None = None, threshold: float = DEFAULT_THRESHOLD) -> dict:
    """The JSON object the browser side reads: settings, and every sentence's encoded arrays.

    Parameters
    ----------
    encodings : Encoding or mapping of str to Encoding
        Objects with ``tokens`` and ``attentions`` of shape ``(n_layers, n_heads, seq, seq)`` (and
        ``queries``, ``keys`` of shape ``(n_layers, n_heads, seq, d_head)`` for the query-key view).
    views, layer, heads, query, title, threshold
        See :func:`attention_view`.

    Returns
    -------
    dict
    """
    views = list(dict.fromkeys(views))
    unknown = [v for v in views if v not in VIEWS]
    if not views or unknown:
        raise ValueError(f"views must be a non-empty selection of {list(VIEWS)}, got {views}")
    if not isinstance(encodings, Mapping):
        if not _is_encoding(encodings):
            several = (": for several sentences, a dict of label -> Encoding (or batch[i] of a batch)"
                       if hasattr(encodings, "tokens") else "")
            raise TypeError("encodings must be an Encoding (what encoder(text) returns) or a dict of "
                            f"label -> Encoding, got {type(encodings).__name__}{several}")
        encodings = {" ".join(encodings.tokens): encodings}
    if not encodings:
        raise ValueError("encodings must be one Encoding or a non-empty mapping of label -> Encoding")
    with_queries = "query_key" in views
    entries = [(str(label), *_as_entry(str(label), e, with_queries)) for label, e in encodings.items()]
    shapes = {entry[2].shape[:2] for entry in entries}
    if len(shapes) > 1:
        raise ValueError(f"every sentence must come from one model (one (n_layers, n_heads)), "
                         f"got {sorted(shapes)}")
    n_layers, n_heads = shapes.pop()
    d_head = None if entries[0][3] is None else int(entries[0][3].shape[-1])
    heads = [check_int(h, "each head") for h in ([heads] if is_int(heads) else heads)]  # one int: one head
    layer = check_int(layer, "layer")
    for name, value, limit in [("layer", layer, n_layers)] + [("head", h, n_heads) for h in heads]:
        if not 0 <= value < limit:
            raise ValueError(f"{name} must lie in [0, {limit}), got {value!r}")
    if not heads:
        raise ValueError("heads must name at least one head")
    query = None if query is None else check_int(query, "query")
    if query is not None and not all(0 <= query < len(entry[1]) for entry in entries):
        raise ValueError(f"query must be a token position of every sentence, got {query!r}")
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold must lie in [0, 1), got {threshold!r}")
    return {"version": 1, "views": views, "n_layers": int(n_layers), "n_heads": int(n_heads),
            "d_head": d_head, "layer": int(layer), "heads": heads, "query": query, "title": title,
            "threshold": threshold,
            "sentences": [_sentence_payload(*entry) for entry in entries]}


def decode_sentence(payload: dict, index: int = 0) -> dict[str, np.ndarray]:
    """Read one sentence's arrays back from a payload (what the browser decodes), as float32.

    Returns
    -------
    dict
        ``attentions (n_layers, n_heads, seq, seq)``; with queries, also ``queries`` and ``keys``
        ``(n_layers, n_heads, seq, d_head)``.
    """
    entry = payload["sentences"][index]
    n_layers, n_heads, seq = payload["n_layers"], payload["n_heads"], len(entry["tokens"])
    codes = np.frombuffer(base64.b64decode(entry["attention"]), np.uint8)
    attentions = (codes.astype(np.float32) / 255).reshape(n_layers, n_heads, seq, seq)
    out: dict[str, np.ndarray] = {"attentions": attentions}
    for name, scales in (("queries", "query_scales"), ("keys", "key_scales")):
        if name in entry:
            codes = np.frombuffer(base64.b64decode(entry[name]), "<i2")  # (n_layers*n_heads*seq*d_head,)
            codes = codes.reshape(n_layers, n_heads, seq, payload["d_head"]).astype(np.float32)
            out[name] = codes * np.asarray(entry[scales], np.float32).reshape(n_layers, n_heads, 1, 1)
    return out


#: Numbers the views a kernel draws, so two views of the same data get different element ids.
_VIEW_NUMBERS = itertools.count()


def embedded_json(payload: dict, prefix: str, element_id: str | None = None) -> tuple[str, str]:
    """``payload`` as JSON safe inside a ``<script>``, and the element id of the output that holds it.

    Without ``element_id``, the id is deterministic (the same notebook prints the same page) and unique on
    a page: the data's hash and how many views this kernel has drawn.
    """
    data = json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")
    if element_id is None:
        digest = hashlib.sha1(f"{next(_VIEW_NUMBERS)}:{data}".encode()).hexdigest()[:12]
        element_id = f"{prefix}-{digest}"
    return data, element_id


@dataclass(frozen=True)
class AttentionView:
    """One output holding some of the three views; shown as HTML by Jupyter and the book.

    Attributes
    ----------
    payload : dict
        What the browser reads (see :func:`view_payload`).
    """

    payload: dict

    def to_html(self, *, element_id: str | None = None) -> str:
        """A self-contained HTML fragment: data, style, script, and the call that draws the views."""
        data, element_id = embedded_json(self.payload, "mha-av", element_id)
        names = [v.replace("_", "-") for v in self.payload["views"]]
        return (f'<div class="mha-av" id="{element_id}" data-views="{" ".join(names)}">'
                f"<style>{_static('attention_view.css')}</style>"
                f'<script type="application/json" class="mha-av-data">{data}</script>'
                f"<noscript>The {', '.join(names)} view needs JavaScript.</noscript></div>\n"
                f"<script>{_static('attention_view.js')}\n"
                f'window.mhaAttentionView.mount(document.getElementById("{element_id}"));</script>')

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        p = self.payload
        return (f"AttentionView(views={p['views']}, sentences={len(p['sentences'])}, "
                f"layers={p['n_layers']}, heads={p['n_heads']})")


def attention_view(encodings: Encoding | Mapping[str, Encoding], *, views: Sequence[str] = VIEWS,
                   layer: int = 0, heads: Sequence[int] = (0,), query: int | str | None = None,
                   title: str | None = None, threshold: float = DEFAULT_THRESHOLD) -> AttentionView:
    """Head view, model view and query-key view of one or more encoded sentences, drawn in the browser.

    Parameters
    ----------
    encodings : Encoding or mapping of str to Encoding
        ``encoder(text)``, or several labelled encodings of one model (a menu picks the sentence).
    views : sequence of {"model", "head", "query_key"}, default all three
    layer : int, default 0
        The layer shown first.
    heads : sequence of int, default (0,)
        The heads shown first in the head view; the first is the query-key view's head.
    query : int or str, optional
        A token position (or a token of the first sentence, its first occurrence) to select first.
    title : str, optional
    threshold : float, default 0.02
        Lines for smaller weights are not drawn.

    Returns
    -------
    AttentionView
        Displayed as the cell's value.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> weights = np.full((2, 3, 4, 4), 0.25)  # (n_layers, n_heads, seq, seq)
    >>> view = attention_view(SimpleNamespace(tokens=list("abcd"), attentions=weights), views=["head"])
    >>> view
    AttentionView(views=['head'], sentences=1, layers=2, heads=3)
    >>> decode_sentence(view.payload)["attentions"][1, 2, 0]
    array([0.2509804, 0.2509804, 0.2509804, 0.2509804], dtype=float32)
    """
    if isinstance(query, str):
        first = encodings if not isinstance(encodings, Mapping) else next(iter(encodings.values()), None)
        tokens = list(getattr(first, "tokens", []))
        if query not in tokens:
            raise ValueError(f"token {query!r} appears 0 time(s) in {tokens}")
        query = tokens.index(query)
    return AttentionView(view_payload(encodings, views=views, layer=layer, heads=heads, query=query,
                                      title=title, threshold=threshold))
