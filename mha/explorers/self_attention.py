"""Widget: how the width ``d_k`` and the ``1/√d_k`` scale shape the scores and the softmax."""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure

from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.explorers.live import live_int, live_text
from mha.lab.self_attention import sample_scores, sentence_scores
from mha.plotting.self_attention import plot_scaling_frame

__all__ = ["D_K_VALUES", "render_scaling", "scaling_explorer"]

#: Slider values for the width of queries and keys.
D_K_VALUES = (1, 4, 16, 64, 256, 1024)
SEQ_K = 16
N_QUERIES = 1000


def render_scaling(d_k: int, scaled: bool, *, seed: int = 0, text: str = "") -> Figure:
    """One frame: random queries and keys of width ``d_k``, scores with or without the scale.

    With ``text`` (the reader's own sentence, in a running kernel) the scores are the sentence's words
    against each other instead (:func:`mha.lab.self_attention.sentence_scores`).

    The same seed draws the same queries and keys for both settings of ``scaled``, so two frames
    differ only by the division. The histogram's range is fixed by the largest slider value.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = render_scaling(64, scaled=True)
    >>> fig.axes[0].get_title()
    'q·k / √d_k, d_k = 64: std 1.0'
    """
    if text is not None and not isinstance(text, str):
        raise TypeError(f"text must be a str (a sentence), got {type(text).__name__}")
    if text and text.strip():
        scores = sentence_scores(text, d_k, scaled=scaled, seed=seed)  # (seq, seq)
    else:
        scores = sample_scores(d_k, SEQ_K, N_QUERIES, scaled=scaled, rng=seed)  # (N_QUERIES, SEQ_K)
    limit = 3.0 * math.sqrt(max(D_K_VALUES))  # three standard deviations of the widest raw scores
    return plot_scaling_frame(scores, d_k=d_k, scaled=scaled, score_limit=limit)


def scaling_explorer(*, seed: int = 0, d_k_values: Sequence[int] = D_K_VALUES) -> FrameExplorer:
    """Sliders for ``d_k`` and for the scale on/off, over pre-rendered frames.

    Returns
    -------
    mha.explorers.frames.FrameExplorer

    Examples
    --------
    >>> explorer = scaling_explorer(d_k_values=(4, 16))
    >>> len(explorer.frames), list(explorer.sliders)
    (4, ['d_k', 'scaled'])
    """
    d_k_values = slider_values("d_k_values", d_k_values)
    def render(d_k, scaled, text=""):
        return render_scaling(d_k, scaled, seed=seed, text=text)

    return frame_explorer(
        render,
        {"d_k": list(d_k_values), "scaled": [False, True]},
        labels={"d_k": "d_k (width)", "scaled": "divide by √d_k"},
        initial={"d_k": d_k_values[-1]},
        title="Score spread and softmax weights against d_k",
        caption="Top: every score of 1000 random queries against 16 random keys. Below: the "
                "softmax weights of 8 of those queries. Without the scale, wide heads saturate.",
        live={"d_k": live_int(1, max(D_K_VALUES), description="d_k (width)"),
              "text": live_text("Or type a sentence: its words against each other", description="sentence")},
    )
