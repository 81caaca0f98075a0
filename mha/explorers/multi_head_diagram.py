"""Widget: the multi-head attention diagram redrawn for other sizes (tokens, model width, heads)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.lab.shapes import seeded_head_weights
from mha.plotting.diagrams import plot_mha_diagram

__all__ = ["render_diagram", "diagram_explorer"]

SEQS = (3, 6)
D_MODELS = (64, 512)
HEAD_COUNTS = (1, 2, 4, 8, 16)


def render_diagram(seq: int, d_model: int, n_heads: int) -> Figure:
    """One frame: the diagram for these sizes, each head's box showing a seeded layer's real weights.

    Examples
    --------
    >>> fig = render_diagram(3, 64, 2)
    >>> fig.get_suptitle()
    'Multi-head attention: 3 tokens, d_model = 64, 2 heads of d_head = 64 / 2 = 32'
    """
    weights = seeded_head_weights(seq, d_model, n_heads, rng=0)  # (n_heads, seq, seq)
    return plot_mha_diagram(seq, d_model, n_heads, weights=weights)


def diagram_explorer(*, seqs: Sequence[int] = SEQS, d_models: Sequence[int] = D_MODELS,
                     head_counts: Sequence[int] = HEAD_COUNTS) -> FrameExplorer:
    """Sliders over pre-rendered diagrams; every ``n_heads`` must divide every ``d_model``.

    Returns
    -------
    mha.explorers.FrameExplorer

    Examples
    --------
    >>> explorer = diagram_explorer(seqs=(3,), d_models=(64,), head_counts=(1, 2))
    >>> explorer.kind, len(explorer.frames)
    ('image', 2)
    """
    seqs = slider_values("seqs", seqs)
    d_models = slider_values("d_models", d_models)
    head_counts = slider_values("head_counts", head_counts)
    bad = sorted({(d, h) for d in d_models for h in head_counts if d % h})
    if bad:
        raise ValueError(f"every n_heads must divide every d_model; these pairs do not: {bad}")
    return frame_explorer(
        render_diagram,
        {"seq": list(seqs), "d_model": list(d_models), "n_heads": list(head_counts)},
        labels={"seq": "seq (tokens)", "n_heads": "heads"},
        initial={"seq": seqs[0], "d_model": 512 if 512 in d_models else d_models[0],
                 "n_heads": 8 if 8 in head_counts else head_counts[0]},
        title="Multi-head attention, redrawn for other sizes",
        caption="Small squares: a seeded, untrained layer's weights per head (rows: queries, columns: keys).",
        colors=96,
    )
