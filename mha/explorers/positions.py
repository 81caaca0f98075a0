"""Widgets of the positions chapter: a relative position bias at work, and RoPE's rotation speeds.

Each explorer hands a pure ``render_*`` function (also usable on its own, e.g. by
``benchmarks/bench_widgets.py``) and its slider values to :func:`~mha.explorers.frames.frame_explorer`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from mha.explorers.frames import FrameExplorer, frame_explorer, slider_values
from mha.explorers.live import live_float, live_int, live_log_float
from mha.lab.positions import BIAS_HEADS, alibi_weights, relative_bias_weights
from mha.plotting.charts import draw_curves
from mha.plotting.heads import plot_heads
from mha.plotting.positions import OFFSET_LABEL
from mha.plotting.style import new_figure
from mha.positions import alibi_slopes, apply_rotary, rope_frequencies

__all__ = [
    "render_relative_bias",
    "relative_bias_explorer",
    "render_rotary",
    "rotary_explorer",
    "render_alibi",
    "alibi_explorer",
]


def render_relative_bias(strength: float = 2.0, seq_len: int = 12) -> Figure:
    """One frame: every head's attention for a bias ``strength`` and a sequence length.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = render_relative_bias(2.0, 6)
    >>> [panel.title.get_text() for panel in fig.head_panels[:2]]
    ['prefers −1 (previous)', 'prefers 0 (itself)']
    """
    weights, tokens = relative_bias_weights(strength, seq_len)
    return plot_heads(weights, tokens, head_titles=[title for title, _, _ in BIAS_HEADS],
                      title=f"bias strength {strength}, {seq_len} tokens")


def relative_bias_explorer(strengths: Sequence[float] = (0.0, 1.0, 2.0, 4.0),
                           seq_lens: Sequence[int] = (6, 12, 24, 32)) -> FrameExplorer:
    """Sliders: bias strength x sequence length -> per-head attention patterns.

    Examples
    --------
    >>> explorer = relative_bias_explorer(strengths=(0.0, 4.0), seq_lens=(6,))
    >>> sorted(explorer.frames)
    [(0.0, 6), (4.0, 6)]
    """
    strengths, seq_lens = slider_values("strengths", strengths), slider_values("seq_lens", seq_lens)
    return frame_explorer(
        render_relative_bias, {"strength": list(strengths), "seq_len": list(seq_lens)},
        labels={"strength": "bias strength", "seq_len": "tokens"},
        initial={"strength": strengths[min(2, len(strengths) - 1)]},
        title="A relative position bias, added to the scores",
        caption="Strength 0 leaves only the content scores; higher strengths let the bias take over.",
        live={"strength": live_float(0.0, 8.0, step=0.1, description="bias strength"),
              "seq_len": live_int(2, 48, description="tokens")},
    )


def render_rotary(d_head: int = 32, base: float = 10000.0, *, max_offset: int = 64) -> Figure:
    """One frame: how slowly each RoPE pair turns, and what that does to a query-key score.

    Left: the wavelength of each feature pair, ``2π / speed`` positions per full turn (log scale). Right:
    the score between a query and a key with the *same* content (random, fixed seed) as the key moves
    away, divided by its value at offset 0.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = render_rotary(8, 100.0)
    >>> fig.axes[1].get_title()
    'query · key, d_head = 8'
    """
    offsets = np.arange(-max_offset, max_offset + 1)
    speeds = rope_frequencies(d_head, base=base)  # (d_head // 2,)
    content = np.random.default_rng(0).standard_normal(d_head)
    # the query sits at position 0 (no rotation); the key sits at each offset
    keys = apply_rotary(np.broadcast_to(content, (len(offsets), d_head)), offsets)  # (n_offsets, d_head)
    score = keys @ content / (content @ content)  # (n_offsets,)

    wavelengths = 2 * np.pi / speeds
    fig = new_figure(9.0, 3.2, alt_text=(
        f"Left: wavelengths of the {len(speeds)} RoPE feature pairs for base {base:g}, rising on a log "
        f"scale from {wavelengths[0]:.3g} to {wavelengths[-1]:.3g} positions. Right: the score of one word "
        f"with itself as the key moves up to {max_offset} positions away, 1 at offset 0 and "
        f"{score[-1]:.2f} at offset {max_offset}."))
    fig.set_layout_engine(None)  # fixed margins: constrained layout would double the redraw time
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.17, top=0.9, wspace=0.3)
    left, right = fig.subplots(1, 2)
    draw_curves(left, np.arange(len(speeds)), {"wavelength": wavelengths}, xlabel="feature pair i",
                ylabel="positions per full turn", title=f"pair wavelengths (base {base:g})", logy=True,
                markers=True)
    left.axhline(2 * max_offset, color="grey", linewidth=0.8, linestyle=":")
    left.set_ylim(1, 10 * base)
    draw_curves(right, offsets, {"same content": score}, xlabel=OFFSET_LABEL,
                ylabel="score / score at offset 0", title=f"query · key, d_head = {d_head}")
    right.set_ylim(-1.05, 1.05)
    return fig


def rotary_explorer(d_heads: Sequence[int] = (8, 16, 32, 64),
                    bases: Sequence[float] = (100.0, 1000.0, 10000.0, 100000.0)) -> FrameExplorer:
    """Sliders: head size x RoPE base -> rotation speeds and the resulting score curve.

    Examples
    --------
    >>> len(rotary_explorer(d_heads=(8, 16), bases=(100.0,)).frames)
    2
    """
    d_heads, bases = slider_values("d_heads", d_heads), slider_values("bases", bases)
    return frame_explorer(
        render_rotary, {"d_head": list(d_heads), "base": list(bases)},
        labels={"d_head": "d_head", "base": "base"},
        initial={"d_head": 32 if 32 in d_heads else d_heads[0],
                 "base": 10000.0 if 10000.0 in bases else bases[0]},
        title="RoPE: rotation speeds and the score between two copies of one word",
        caption="More pairs and slower speeds give a smoother fall-off with distance.",
        live={"d_head": live_int(2, 128, step=2, description="d_head"),
              "base": live_log_float(10.0, 1e6, description="base")},
    )


def render_alibi(n_heads: int = 8, seq_len: int = 16) -> Figure:
    """One frame: each ALiBi head's causal recency pattern, titled with its slope.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> [panel.title.get_text() for panel in render_alibi(2, 8).head_panels]
    ['slope 0.0625', 'slope 0.00391']
    """
    return plot_heads(alibi_weights(n_heads, seq_len), head_titles=[f"slope {m:.3g}" for m in
                                                                    alibi_slopes(n_heads)],
                      title=f"ALiBi, {n_heads} heads, {seq_len} tokens, no content")


def alibi_explorer(head_counts: Sequence[int] = (1, 2, 4, 8),
                   seq_lens: Sequence[int] = (8, 16, 32)) -> FrameExplorer:
    """Sliders: number of heads x sequence length -> ALiBi's per-head recency windows.

    Examples
    --------
    >>> len(alibi_explorer(head_counts=(1, 2), seq_lens=(8,)).frames)
    2
    """
    head_counts, seq_lens = slider_values("head_counts", head_counts), slider_values("seq_lens", seq_lens)
    return frame_explorer(
        render_alibi, {"n_heads": list(head_counts), "seq_len": list(seq_lens)},
        labels={"n_heads": "heads", "seq_len": "tokens"},
        initial={"n_heads": head_counts[-1], "seq_len": seq_lens[min(1, len(seq_lens) - 1)]},
        title="ALiBi: one fixed slope per head",
        caption="More heads spread the slopes over a wider range: some heads stay local, some see far.",
        live={"n_heads": live_int(1, 16, description="heads"),
              "seq_len": live_int(2, 64, description="tokens")},
    )
