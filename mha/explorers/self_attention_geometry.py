"""Queries and keys as arrows in a plane: the reader drags the query, the browser recomputes the weights.

With two features per query and key, a dot product is something one can see: ``q · k`` is the length of
the query times the length of the key's shadow on the query's direction. :func:`geometry_view` ships the
keys and a first query to the page; its script (``static/geometry_view.js``) draws them and, as the reader
drags the query (mouse, finger or arrow keys), recomputes every score and the softmax over them, with no
kernel: the same on the static website and in Jupyter. The maths is :func:`mha.lab.geometry_weights`; the
browser tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha.explorers.browser import view_html
from mha.lab.self_attention_one_head import KeyGeometry, geometry_weights, key_geometry
from mha.typing import ArrayLike

__all__ = ["GeometryView", "geometry_view"]

#: More arrows than this do not fit the plane with their labels.
MAX_KEYS = 12


@dataclass(frozen=True)
class GeometryView:
    """One query-key plane; shown as HTML by Jupyter and the book.

    Attributes
    ----------
    payload : dict
        What the browser reads: ``keys`` (seq_k lists of 2 floats), ``tokens``, ``query`` (2 floats),
        ``query_token``, ``extent`` (the plane spans ``[-extent, extent]``), ``title``.
    """

    payload: dict

    def weights(self, query: ArrayLike | None = None) -> np.ndarray:
        """The weights the view draws for ``query`` (by default its first query)."""
        query = self.payload["query"] if query is None else query
        return geometry_weights(query, self.payload["keys"])

    def to_html(self, *, element_id: str | None = None) -> str:
        """A self-contained HTML fragment: data, style, script, and the call that draws the view."""
        return view_html(self.payload, prefix="mha-gv", script="geometry_view.js",
                         mount="mhaGeometryView.mount", styles=["geometry_view.css"],
                         needs="The query-key plane needs JavaScript.", element_id=element_id)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"GeometryView({len(self.payload['tokens'])} keys, query of {self.payload['query_token']!r})"


def geometry_view(geometry: KeyGeometry | None = None, *, title: str | None = None) -> GeometryView:
    """Keys as arrows, one query you drag; scores and softmax weights recomputed in the browser.

    Parameters
    ----------
    geometry : KeyGeometry, optional
        Keys and a query of width 2 (default: :func:`mha.lab.key_geometry`, the "animal ... it" sentence).
    title : str, optional

    Returns
    -------
    GeometryView

    Examples
    --------
    >>> view = geometry_view()
    >>> view
    GeometryView(8 keys, query of 'it')
    >>> bool(np.isclose(view.weights().sum(), 1.0))
    True
    """
    geometry = key_geometry() if geometry is None else geometry
    if not isinstance(geometry, KeyGeometry):
        raise TypeError("geometry must be a KeyGeometry (from mha.lab.key_geometry), got "
                        f"{type(geometry).__name__}")
    keys = np.asarray(geometry.keys, dtype=np.float64)
    geometry_weights(geometry.query, keys)  # validates shapes and finiteness
    if len(keys) > MAX_KEYS or len(geometry.tokens) != len(keys):
        raise ValueError(f"the plane labels every arrow: 1 to {MAX_KEYS} keys with one token each, got "
                         f"{len(keys)} keys and {len(geometry.tokens)} tokens")
    longest = float(max(np.abs(keys).max(), np.abs(geometry.query).max()))
    extent = float(np.ceil(longest * 1.25 * 2) / 2)  # room around the longest arrow, in steps of 0.5
    payload = {
        "keys": [[float(f"{v:.6g}") for v in k] for k in keys],  # 6 digits: exact enough, compact
        "tokens": [str(t) for t in geometry.tokens], "query": [float(f"{v:.6g}") for v in geometry.query],
        "query_token": str(geometry.query_token), "extent": extent, "title": title,
    }
    return GeometryView(payload)
