"""Widget: one head's arithmetic, one step at a time, on the static site too (pre-rendered frames)."""

from __future__ import annotations

from matplotlib.figure import Figure

from mha.explorers.frames import FrameExplorer, frame_explorer
from mha.explorers.live import live_text
from mha.lab.self_attention_one_head import STEPS, head_walkthrough
from mha.plotting.self_attention_one_head import plot_head_step
from mha.typing import Seed

__all__ = ["head_steps_explorer", "render_head_step"]

SENTENCE = "the cat sat down"


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
