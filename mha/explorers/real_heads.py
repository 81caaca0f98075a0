"""Widgets on a pretrained encoder's heads: the head view with layer and head sliders, the model view with
a sentence slider. Frames come from :mod:`mha.plotting.real_heads`; nothing here computes attention.
"""

from __future__ import annotations

from collections.abc import Mapping

from mha.explorers._frames import FrameExplorer, frame_explorer
from mha.plotting.real_heads import MIN_LINE_WEIGHT, plot_head_view, plot_model_view

__all__ = ["head_view_explorer", "model_view_explorer"]


def head_view_explorer(encoding, *, query: str | None = None, layer: int = 0, head: int = 0,
                       title: str | None = None) -> FrameExplorer:
    """Every head of every layer of one sentence as a head view, chosen with a layer and a head slider.

    Parameters
    ----------
    encoding : mha.pretrained.Encoding
        One encoded sentence (``encoder(text)``).
    query : str, optional
        A token of the sentence: show only its lines (its first occurrence). All queries by default.
    layer, head : int, default 0
        The frame shown first.
    title : str, optional

    Returns
    -------
    FrameExplorer
        ``n_layers x n_heads`` frames.
    """
    attentions = encoding.attentions  # (n_layers, n_heads, seq, seq)
    n_layers, n_heads = attentions.shape[:2]
    position = None if query is None else encoding.index(query)

    def render(layer: int, head: int):
        return plot_head_view(attentions[layer, head], encoding.tokens, query=position,
                              title=f"layer {layer}, head {head}")

    return frame_explorer(render, {"layer": list(range(n_layers)), "head": list(range(n_heads))},
                          initial={"layer": layer, "head": head},
                          title=title or "Head view: pick a layer and a head",
                          caption="Left: the token that attends. Right: the tokens it reads. Thicker lines "
                                  f"carry more weight; weights under {MIN_LINE_WEIGHT} are not drawn.",
                          colors=64)  # 72 frames in one page: a 64-colour palette makes each ~3x smaller


def model_view_explorer(encodings: Mapping[str, object], *, title: str | None = None) -> FrameExplorer:
    """The model view (every layer x every head) of a few sentences, chosen with a slider.

    Parameters
    ----------
    encodings : mapping of str to mha.pretrained.Encoding
        A short label per sentence -> its encoding.
    title : str, optional

    Returns
    -------
    FrameExplorer
        One frame per sentence.
    """
    if not isinstance(encodings, Mapping) or not encodings:
        raise ValueError("encodings must be a non-empty mapping of label -> Encoding")

    def render(sentence: str):
        encoding = encodings[sentence]
        return plot_model_view(encoding.attentions, encoding.tokens, title=" ".join(encoding.tokens[1:-1]))

    return frame_explorer(render, {"sentence": list(encodings)},
                          title=title or "Model view: every head at once",
                          caption="Rows are layers, columns heads; in each map queries run down and keys "
                                  "across.",
                          colors=64)
