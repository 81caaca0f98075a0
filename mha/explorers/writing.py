"""Widgets for the chapters where attention writes: text sampled at each temperature and top-k."""

from __future__ import annotations

import html
from collections.abc import Mapping

from mha.explorers.frames import FrameExplorer, frame_explorer

__all__ = ["sampling_explorer", "learned_alignment_explorer"]


def sampling_explorer(samples: Mapping[tuple[float, int | None], str], *, prompt: str = "") -> FrameExplorer:
    """Sliders for temperature and top-k over text sampled beforehand, one frame per pair.

    Parameters
    ----------
    samples : mapping of (temperature, top_k) to str
        The text written with those settings (``top_k`` None: no cut-off). Every pair of the grid
        (each temperature with each top-k) must be present.
    prompt : str
        Shown in bold before each sample.

    Returns
    -------
    FrameExplorer

    Examples
    --------
    >>> explorer = sampling_explorer({(0.5, None): "aa", (1.0, None): "ab", (0.5, 5): "ac", (1.0, 5): "ad"})
    >>> len(explorer.frames), sorted(explorer.sliders)
    (4, ['temperature', 'top_k'])
    >>> [label for label, _ in explorer.sliders["top_k"].options]  # None: every token kept
    ['5', 'all']
    """
    temperatures = sorted({t for t, _ in samples})
    top_ks = sorted({k for _, k in samples}, key=lambda k: (k is None, k or 0))
    missing = [(t, k) for t in temperatures for k in top_ks if (t, k) not in samples]
    if missing:
        raise ValueError(f"samples miss the (temperature, top_k) pairs {missing}")
    by_label = {("all" if k is None else str(k)): k for k in top_ks}  # a slider value cannot be None

    def render(temperature, top_k):
        text = html.escape(samples[(temperature, by_label[top_k])])
        shown = html.escape(prompt)
        if prompt and text.startswith(shown):
            text = f"<b>{shown}</b>{text[len(shown):]}"
        return f"<div style='font-family: monospace; white-space: pre-wrap; max-width: 60em'>{text}</div>"

    return frame_explorer(
        render, {"temperature": temperatures, "top_k": list(by_label)},
        labels={"temperature": "temperature", "top_k": "top-k"},
        title="The same model, sampled with different settings",
        caption="Low temperature repeats the commonest words; high temperature invents spellings. "
                "Top-k removes the unlikely characters that high temperature lets through.",
    )


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
