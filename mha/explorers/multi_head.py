"""Widget: the per-head attention maps of a seeded layer, for a choice of heads and sentence length.

The layer is built from the same seed for every number of heads. Its weight matrices have the same shape
whatever ``n_heads`` is (``W_q`` is ``d_model × d_model``), so the sliders cut *the same* projections into
more, narrower heads: what changes between frames is only how the columns are grouped.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.explorers.live import live_int, live_text
from mha.lab.examples import LONG_TOKENS, head_weights
from mha.plotting.heads import plot_heads

__all__ = ["render_heads", "head_explorer"]

HEAD_COUNTS = (1, 2, 4, 8)
SEQ_LENS = (4, 8, 16, 32)
D_MODEL = 64


def render_heads(n_heads: int, seq_len: int, *, d_model: int = D_MODEL, seed: int = 0,
                 text: str = "") -> Figure:
    """One frame: every head's attention map, via :func:`mha.plotting.plot_heads`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = render_heads(2, 4)
    >>> " ".join(fig.get_suptitle().split())  # in as many lines as the figure's width needs
    '2 heads of d_head = 32 (d_model = 64), 4 tokens'
    """
    weights, tokens = head_weights(n_heads, seq_len, d_model=d_model, seed=seed, text=text)
    title = f"{n_heads} head{'s' if n_heads > 1 else ''} of d_head = {d_model // n_heads} " \
            f"(d_model = {d_model}), {len(tokens)} tokens"
    return plot_heads(weights, tokens, title=title)


def head_explorer(*, d_model: int = D_MODEL, seed: int = 0, head_counts: Sequence[int] = HEAD_COUNTS,
                  seq_lens: Sequence[int] = SEQ_LENS) -> FrameExplorer:
    """Sliders for the number of heads and the sentence length over pre-rendered per-head maps.

    In a running kernel the sliders take any number of heads (up to 64), any length up to 32 tokens and
    any ``d_model`` (8 to 256), and a text box takes a sentence of the reader's own.

    Returns
    -------
    mha.explorers.frames.FrameExplorer

    Examples
    --------
    >>> explorer = head_explorer(head_counts=(1, 2), seq_lens=(4,))
    >>> len(explorer.frames), list(explorer.sliders)
    (2, ['n_heads', 'seq_len'])
    """
    head_counts, seq_lens = slider_values("head_counts", head_counts), slider_values("seq_lens", seq_lens)
    def render(n_heads, seq_len, d_model=d_model, text=""):
        return render_heads(n_heads, seq_len, d_model=d_model, seed=seed, text=text)

    return frame_explorer(
        render,
        {"n_heads": list(head_counts), "seq_len": list(seq_lens)},
        labels={"n_heads": "heads", "seq_len": "tokens"},
        initial={"n_heads": head_counts[len(head_counts) // 2], "seq_len": seq_lens[len(seq_lens) // 2]},
        title=f"Attention maps per head (d_model = {d_model}, untrained, seed {seed})",
        caption="Rows are queries, columns keys; all heads share one colour scale. More heads means "
                "narrower heads cut from the same projections.",
        live={"n_heads": live_int(1, 64, description="heads"),
              "seq_len": live_int(1, len(LONG_TOKENS), description="tokens"),
              "d_model": live_int(8, 256, step=8, value=d_model, description="d_model"),
              "text": live_text("Type your own sentence and press Enter", description="sentence")},
    )
