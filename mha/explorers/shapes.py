"""Widget: a shape tracer. Sliders for batch, sequence length, d_model and heads; each frame is the
table of every intermediate array (shape, strides, view or copy) and a picture of where heads sit in memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.explorers.live import live_int
from mha.lab.shapes import trace_shapes
from mha.plotting.shapes import memory_layout_html, shape_table_html

__all__ = ["render_shapes", "shape_explorer"]

BATCHES = (1, 2)
SEQS = (3, 6)
D_MODELS = (64, 512)
HEAD_COUNTS = (1, 2, 4, 8)


def render_shapes(batch: int, seq: int, d_model: int, n_heads: int) -> str:
    """One frame: trace a seeded layer of these sizes and render its table and memory strips as HTML.

    Examples
    --------
    >>> page = render_shapes(1, 3, 64, 8)
    >>> "(1, 8, 3, 8)" in page  # q_heads: (batch, n_heads, seq, d_head)
    True
    """
    steps = trace_shapes(batch, seq, d_model, n_heads, rng=0)
    title = (f"batch = {batch}, seq = {seq}, d_model = {d_model}, n_heads = {n_heads} "
             f"→ d_head = {d_model // n_heads}")
    return shape_table_html(steps, title=title, show_code=False) + memory_layout_html(steps)


def shape_explorer(*, batches: Sequence[int] = BATCHES, seqs: Sequence[int] = SEQS,
                   d_models: Sequence[int] = D_MODELS,
                   head_counts: Sequence[int] = HEAD_COUNTS) -> FrameExplorer:
    """Sliders over pre-rendered shape tables (at most 64 combinations).

    Returns
    -------
    mha.explorers.frames.FrameExplorer

    Examples
    --------
    >>> explorer = shape_explorer(batches=(1,), seqs=(3,), d_models=(8,), head_counts=(1, 2))
    >>> explorer.kind, len(explorer.frames)
    ('html', 2)
    """
    batches = slider_values("batches", batches)
    seqs = slider_values("seqs", seqs)
    d_models = slider_values("d_models", d_models)
    head_counts = slider_values("head_counts", head_counts)
    return frame_explorer(
        render_shapes,
        {"batch": list(batches), "seq": list(seqs), "d_model": list(d_models), "n_heads": list(head_counts)},
        labels={"seq": "seq (tokens)", "n_heads": "heads"},
        initial={"n_heads": head_counts[len(head_counts) // 2]},
        title="Shape tracer: every array of one forward pass",
        caption="Strides count elements. A view shares memory with an earlier array; a copy does not.",
        live={"batch": live_int(1, 8, description="batch"),
              "seq": live_int(1, 16, description="seq (tokens)"),
              "d_model": live_int(8, 1024, step=8, description="d_model"),
              "n_heads": live_int(1, 16, description="heads")},
    )
