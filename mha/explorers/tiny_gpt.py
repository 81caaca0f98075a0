"""Widget for the tiny GPT chapter: text sampled beforehand at each temperature and top-k."""

from __future__ import annotations

import html
from collections.abc import Mapping

from mha.explorers.frames import FrameExplorer, frame_explorer

__all__ = ["sampling_explorer"]


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
