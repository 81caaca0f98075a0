"""The temperature view: softmax(scores / T) of one score matrix, with a continuous slider in the browser.

A frame explorer can only show the temperatures someone pre-rendered. Here the figure is a cheap function
of a small array, so the page carries the scores themselves and the reader's browser recomputes the
weights as the slider moves (``static/softmax_view.js``, plain JavaScript and SVG): continuous on the
static website, the same in JupyterLab, Notebook, VS Code and JupyterLite, no kernel needed. A switch
adds or removes the causal mask.

The maths stays the package's: :func:`view_weights` is :func:`mha.softmax` of the masked, scaled scores,
and the script is its line-by-line port. The tests read the weights the browser drew and compare them
with :func:`view_weights` at the same settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mha.attention import softmax
from mha.explorers.browser import view_html
from mha.masks import causal_mask
from mha.typing import ArrayLike

__all__ = ["SoftmaxView", "softmax_view", "view_weights"]

#: Temperatures the slider spans (log scale): from nearly one-hot to nearly uniform.
T_MIN, T_MAX = 0.05, 20.0
#: Larger score matrices would not fit a page column as labelled cells.
MAX_TOKENS = 16

#: Colours follow the page (currentColor), so the view reads in light and dark mode alike.
STYLE = (".mha-sv{color:inherit;font-size:0.85rem;margin:0.5rem 0;max-width:100%}"
         ".mha-sv-title{font-weight:bold;margin-bottom:0.3rem}"
         ".mha-sv-controls{display:flex;flex-wrap:wrap;gap:0.4rem 1rem;align-items:center}"
         ".mha-sv input[type=range]{width:12rem;max-width:60vw;vertical-align:middle}"
         ".mha-sv input:focus-visible{outline:2px solid #111;outline-offset:2px;box-shadow:0 0 0 2px #fff}"
         ".mha-sv svg text{fill:currentColor;font-size:var(--mha-sv-font,12px);font-family:inherit}"
         ".mha-sv-cell{stroke:none}.mha-sv-caption{font-style:italic;margin:0.3rem 0}")


def view_weights(scores: ArrayLike, temperature: float, *, causal: bool = False) -> np.ndarray:
    """What the view draws: ``mha.softmax(scores / temperature)`` with masked scores at ``-inf``.

    Parameters
    ----------
    scores : array_like, shape (seq_q, seq_k)
    temperature : float
        Positive; 1 leaves the scores as they are, larger flattens, smaller sharpens.
    causal : bool, default False
        Apply :func:`mha.causal_mask` (end-aligned).

    Returns
    -------
    ndarray, shape (seq_q, seq_k)

    Examples
    --------
    >>> view_weights([[0.0, 1.0]], 1.0).round(3)
    array([[0.269, 0.731]])
    >>> view_weights([[0.0, 1.0], [1.0, 0.0]], 1.0, causal=True).round(3)
    array([[1.   , 0.   ],
           [0.731, 0.269]])
    """
    scores = _check_scores(scores)
    temperature = _check_temperature(temperature)
    scaled = scores / temperature
    if causal:
        scaled = np.where(causal_mask(*scores.shape), scaled, -np.inf)
    return softmax(scaled, axis=-1)


def _check_scores(scores) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or 0 in scores.shape:
        raise ValueError(f"scores must have shape (seq_q, seq_k), got {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite (the view applies its own mask)")
    return scores


def _check_temperature(temperature) -> float:
    if not isinstance(temperature, (int, float, np.floating)) or not T_MIN <= temperature <= T_MAX:
        raise ValueError(f"temperature must be a number from {T_MIN:g} to {T_MAX:g}, got {temperature!r}")
    return float(temperature)


@dataclass(frozen=True)
class SoftmaxView:
    """One temperature view; shown as HTML by Jupyter and the book.

    Attributes
    ----------
    payload : dict
        What the browser reads: ``scores`` (lists of floats), ``tokens_q``, ``tokens_k``,
        ``temperature``, ``causal``, ``mask_toggle``, ``t_min``, ``t_max``, ``title``.
    """

    payload: dict

    def weights(self) -> np.ndarray:
        """The weights the view draws first (its initial temperature and mask)."""
        p = self.payload
        return view_weights(p["scores"], p["temperature"], causal=p["causal"])

    def to_html(self, *, element_id: str | None = None) -> str:
        """A self-contained HTML fragment: data, script, and the call that draws the view."""
        return view_html(self.payload, prefix="mha-sv", script="softmax_view.js",
                         mount="mhaSoftmaxView.mount", styles=[STYLE],
                         needs="The temperature view needs JavaScript.", element_id=element_id)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        p = self.payload
        return (f"SoftmaxView({len(p['tokens_q'])} queries x {len(p['tokens_k'])} keys, "
                f"T={p['temperature']:g}, causal={p['causal']})")


def softmax_view(scores: ArrayLike, tokens_q: Sequence[str], tokens_k: Sequence[str] | None = None, *,
                 temperature: float = 1.0, causal: bool = False, mask_toggle: bool | None = None,
                 title: str | None = None) -> SoftmaxView:
    """A heat map of ``softmax(scores / T)`` whose temperature slider runs in the reader's browser.

    Parameters
    ----------
    scores : array_like, shape (seq_q, seq_k)
        Raw scores, e.g. ``q @ k.T / sqrt(d_k)`` of one sentence; at most 16 tokens each way.
    tokens_q, tokens_k : sequence of str
        Labels; ``tokens_k`` defaults to ``tokens_q``.
    temperature : float, default 1.0
        Where the slider starts (from 0.05 to 20, log scale).
    causal : bool, default False
        Whether the causal mask starts on.
    mask_toggle : bool, optional
        Offer a causal-mask switch; by default when the scores are square.
    title : str, optional

    Returns
    -------
    SoftmaxView

    Examples
    --------
    >>> view = softmax_view([[2.0, 0.0], [0.0, 2.0]], ["a", "b"], temperature=0.5)
    >>> view
    SoftmaxView(2 queries x 2 keys, T=0.5, causal=False)
    >>> view.weights().round(3)
    array([[0.982, 0.018],
           [0.018, 0.982]])
    """
    scores = _check_scores(scores)
    seq_q, seq_k = scores.shape
    tokens_q = [str(t) for t in tokens_q]
    tokens_k = tokens_q if tokens_k is None else [str(t) for t in tokens_k]
    if (len(tokens_q), len(tokens_k)) != (seq_q, seq_k):
        raise ValueError(f"scores of shape {scores.shape} need {seq_q} query and {seq_k} key tokens, "
                         f"got {len(tokens_q)} and {len(tokens_k)}")
    if max(seq_q, seq_k) > MAX_TOKENS:
        raise ValueError(f"the view labels every cell: at most {MAX_TOKENS} tokens each way, "
                         f"got {scores.shape}")
    temperature = _check_temperature(temperature)
    mask_toggle = seq_q == seq_k if mask_toggle is None else bool(mask_toggle)
    payload = {
        "scores": [[float(f"{s:.6g}") for s in row] for row in scores],  # 6 digits: exact enough, compact
        "tokens_q": tokens_q, "tokens_k": tokens_k, "temperature": temperature, "causal": bool(causal),
        "mask_toggle": mask_toggle, "t_min": T_MIN, "t_max": T_MAX, "title": title,
    }
    return SoftmaxView(payload)
