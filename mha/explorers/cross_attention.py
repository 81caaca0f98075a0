"""Cross-attention widget: the toy translation's alignment per head, by sentence pair and head width."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.explorers.live import live_int
from mha.lab import cross_attention as toy_translation
from mha.plotting.cross_attention import plot_alignment

__all__ = ["render_alignment", "alignment_explorer"]


def render_alignment(sentence: str, d_head: int) -> Figure:
    """One frame: the three heads' weights for a sentence pair, dictionary alignment marked.

    Examples
    --------
    >>> fig = render_alignment("sleep", 16)
    >>> [panel.title.get_text() for panel in fig.head_panels]
    ['meaning', 'position', 'meaning + position']
    """
    pair = toy_translation.SENTENCE_PAIRS[sentence]
    weights = toy_translation.alignment(pair, d_head)  # (3, seq_q, seq_k)
    return plot_alignment(weights, pair.french, pair.english, reference=pair.alignment,
                          head_titles=toy_translation.HEAD_NAMES,
                          title=f"{len(pair.french)} French words read {len(pair.english)} English words, "
                                f"d_head = {d_head}")


def alignment_explorer(sentences: Sequence[str] = tuple(toy_translation.SENTENCE_PAIRS),
                       d_heads: Sequence[int] = (4, 8, 16, 32)) -> FrameExplorer:
    """Sliders for the sentence pair and ``d_head`` over :func:`render_alignment` frames.

    Examples
    --------
    >>> explorer = alignment_explorer(sentences=["sleep"], d_heads=[8, 16])
    >>> len(explorer.frames)
    2
    """
    sentences, d_heads = slider_values("sentences", sentences), slider_values("d_heads", d_heads)
    known = toy_translation.SENTENCE_PAIRS
    unknown = sorted(set(sentences) - set(known))
    if unknown:
        raise ValueError(f"unknown sentence pairs {unknown}; choose from {sorted(known)}")
    return frame_explorer(
        render_alignment, {"sentence": list(sentences), "d_head": list(d_heads)},
        labels={"sentence": "sentence pair", "d_head": "d_head"},
        initial={"d_head": 16} if 16 in d_heads else None,
        title="Cross-attention alignment, one panel per head",
        caption="Rows: French words (queries). Columns: English words (keys). "
                "Squares: the dictionary's alignment.",
        live={"d_head": live_int(1, 64, description="d_head")},
    )
