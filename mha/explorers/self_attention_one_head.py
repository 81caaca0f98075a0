"""Widgets: one head's arithmetic, one step at a time; and one query's lookup as the temperature slides.

Both work on the static site too (pre-rendered frames).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.explorers.live import live_log_float, live_text
from mha.lab.self_attention_one_head import STEPS, head_walkthrough, soft_lookup
from mha.plotting.self_attention_one_head import plot_head_step, plot_lookup_temperature
from mha.typing import ArrayLike, Seed

__all__ = ["LOOKUP_TEMPERATURES", "head_steps_explorer", "lookup_explorer", "render_head_step"]

SENTENCE = "the cat sat down"
#: The lookup explorer's temperatures: from a hard lookup (0.05) to nearly even weights (20).
LOOKUP_TEMPERATURES = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)


def render_head_step(step: str, query: str, *, sentence: str = SENTENCE, rng: Seed = 0,
                     text: str = "") -> Figure:
    """One frame: ``step`` of one head on ``sentence`` (or the reader's ``text``), tracing ``query``'s row.

    A traced word that the reader's own sentence lacks falls back to that sentence's last word.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = render_head_step("softmax", "cat")
    >>> fig.axes[0].get_title(loc="left")
    'One head, step 4 of 5: softmax'
    """
    if text is not None and not isinstance(text, str):
        raise TypeError(f"text must be a str (a sentence), got {type(text).__name__}")
    head = head_walkthrough(text if text and text.strip() else sentence, rng=rng)
    position = head.tokens.index(query) if query in head.tokens else len(head.tokens) - 1
    return plot_head_step(head, step, position)


def head_steps_explorer(sentence: str = SENTENCE, *, rng: Seed = 0) -> FrameExplorer:
    """A slider through the five steps of one head, and one for the query whose row is traced.

    Returns
    -------
    mha.explorers.frames.FrameExplorer
        5 steps x one frame per token, linked in the browser (no kernel needed).

    Examples
    --------
    >>> explorer = head_steps_explorer("the cat sat")
    >>> len(explorer.frames), list(explorer.sliders)
    (15, ['step', 'query'])
    """
    tokens = head_walkthrough(sentence, rng=rng).tokens
    if len(set(tokens)) != len(tokens):
        raise ValueError(f"each word may appear once (the query slider names them), got {tokens}")

    def render(step, query, text=""):
        return render_head_step(step, query, sentence=sentence, rng=rng, text=text)

    return frame_explorer(
        render,
        {"step": list(STEPS), "query": tokens},
        labels={"step": "step", "query": "traced query"},
        initial={"query": tokens[1] if len(tokens) > 1 else tokens[0]},
        title="One head, step by step",
        caption="Move the step slider: embeddings, queries, keys and values, scores, softmax, weighted sum. "
                "The orange frame follows one query's row; the line under the picture writes its "
                "arithmetic out.",
        dpi=100,
        colors=64,
        live={"text": live_text("Or type a short sentence (up to 8 words)", description="sentence")},
    )


def lookup_explorer(tokens: Sequence[str], query: ArrayLike, keys: ArrayLike, values: ArrayLike, *,
                    query_token: str = "it", temperatures: Sequence[float] = LOOKUP_TEMPERATURES,
                    initial: float = 1.0) -> FrameExplorer:
    """A temperature slider over one query's lookup: hard (T → 0) to soft to nearly even (T large).

    Each frame is :func:`mha.plotting.self_attention_one_head.plot_lookup_temperature` of
    :func:`mha.lab.self_attention_one_head.soft_lookup` at one temperature; the curve of the third panel
    and the colour scale of the answers are the same in every frame. In a running kernel a log slider
    takes any temperature in the range.

    Parameters
    ----------
    tokens : sequence of str, length seq_k
    query : array_like, shape (d_k,)
    keys : array_like, shape (seq_k, d_k)
    values : array_like, shape (seq_k, d_v)
    query_token : str
        The token whose query it is (for the titles).
    temperatures : sequence of float
        The slider's values, positive.
    initial : float
        Where the slider starts: one of ``temperatures``.

    Returns
    -------
    mha.explorers.frames.FrameExplorer

    Examples
    --------
    >>> keys = np.eye(3)
    >>> explorer = lookup_explorer(["a", "b", "c"], [2.0, 0.0, 0.0], keys, keys, query_token="a",
    ...                            temperatures=[0.1, 1.0])
    >>> len(explorer.frames), list(explorer.sliders)
    (2, ['temperature'])
    """
    tokens = [str(t) for t in tokens]
    temperatures = slider_values("temperatures", temperatures)
    if not all(isinstance(t, int | float) and not isinstance(t, bool) and 0 < t < np.inf
               for t in temperatures):
        raise ValueError(f"temperatures must be positive finite numbers, got {list(temperatures)}")
    values = np.asarray(values, dtype=np.float64)
    soft_lookup(query, keys, values)  # validates the shapes once, with a clear message
    if len(tokens) != len(values):
        raise ValueError(f"one token per key: got {len(tokens)} tokens for {len(values)} keys")
    low, high = min(temperatures), max(temperatures)
    curve_t = np.geomspace(low, high, 200)  # (200,): the third panel's curve, shared by every frame
    curve = np.array([soft_lookup(query, keys, values, float(t)).sensitivity for t in curve_t])
    limit = float(np.abs(values).max()) or 1.0

    def render(temperature):
        lookup = soft_lookup(query, keys, values, float(temperature))
        return plot_lookup_temperature(tokens, lookup, curve_t, curve, value_limit=limit, query=query_token)

    return frame_explorer(
        render,
        {"temperature": list(temperatures)},
        labels={"temperature": "temperature T"},
        initial={"temperature": initial},
        title=f"A hard and a soft lookup for “{query_token}”, as the temperature slides",
        caption="Top: the weights softmax(q·k / √d_k / T), and (dashed) the one key a dictionary returns. "
                "Middle: the two answers. Bottom: how far the soft answer moves when the query moves; the "
                "hard answer never moves, so training could not learn which key to look up.",
        colors=64,
        live={"temperature": live_log_float(low, high, value=initial, description="temperature T")},
    )
