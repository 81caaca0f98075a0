"""Widget for the encoder-decoder chapter: learned cross-attention by task and training stage."""

from __future__ import annotations

from collections.abc import Mapping

from mha.explorers.frames import FrameExplorer, frame_explorer

__all__ = ["learned_alignment_explorer"]


def learned_alignment_explorer(maps: Mapping[tuple[str, str], tuple]) -> FrameExplorer:
    """Sliders for task and training stage over cross-attention maps, the known alignment marked.

    Parameters
    ----------
    maps : mapping of (task, stage) to (weights, tokens_q, tokens_k, reference)
        ``weights`` (n_heads, seq_q, seq_k) of one example; target and source tokens; for each target
        token the source position it comes from (see :func:`mha.plotting.plot_alignment`).

    Returns
    -------
    FrameExplorer

    Examples
    --------
    >>> import numpy as np
    >>> w = np.full((2, 2, 2), 0.5)
    >>> maps = {(t, s): (w, ["a", "b"], ["x", "y"], [0, 1])
    ...         for t in ("copy", "sort") for s in ("before", "after")}
    >>> len(learned_alignment_explorer(maps).frames)
    4
    """
    from mha.plotting.cross_attention import plot_alignment

    tasks = list(dict.fromkeys(task for task, _ in maps))
    stages = list(dict.fromkeys(stage for _, stage in maps))

    def render(task, stage):
        weights, tokens_q, tokens_k, reference = maps[(task, stage)]
        return plot_alignment(weights, tokens_q, tokens_k, reference=reference,
                              head_titles=[f"head {h}" for h in range(len(weights))],
                              title=f"{task}, {stage}: where each target token reads")

    return frame_explorer(
        render, {"task": tasks, "stage": stages}, labels={"task": "task", "stage": "training"},
        title="Cross-attention of the last decoder block",
        caption="Rows: target tokens (queries). Columns: source tokens (keys). Squares: the alignment "
                "the task implies.",
    )
