"""Widgets for the chapter on modern attention: a window slider, and a switch between RoPE scaling methods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from mha.cost import attention_cache_bytes, format_bytes
from mha.explorers.frames import FrameExplorer, frame_explorer
from mha.explorers.live import live_int
from mha.masks import sliding_window_mask
from mha.plotting.modern_attention import plot_context_losses
from mha.plotting.style import SERIES_COLORS, WEIGHTS_CMAP, new_figure

__all__ = ["render_window", "window_explorer", "context_explorer"]


def render_window(window: int, *, seq: int = 24, n_layers: int = 2, tokens: int = 4096,
                  n_kv_heads: int = 8, d_head: int = 128, sinks: int = 0) -> Figure:
    """One frame: the band mask of ``window`` over ``seq`` tokens, and the cache it needs over ``tokens``.

    The cache is :func:`mha.cost.attention_cache_bytes` of one layer (16-bit, ``n_kv_heads`` heads of
    ``d_head``), with and without the window.

    Examples
    --------
    >>> fig = render_window(4)
    >>> fig.axes[0].get_title()
    'window 4: each query sees 4 keys'
    """
    fig = new_figure(7.0, 3.3)
    ax_mask, ax_cache = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    mask = sliding_window_mask(seq, window=window, sinks=sinks)
    ax_mask.imshow(mask, cmap=WEIGHTS_CMAP, vmin=0, vmax=1, interpolation="nearest")
    ax_mask.set(title=f"window {window}: each query sees {min(window, seq)} keys", xlabel="key",
                ylabel="query")
    ax_mask.title.set_fontsize(10)
    lengths = np.linspace(1, tokens, 64).astype(int)
    heads: dict[str, Any] = {"n_kv_heads": n_kv_heads, "d_head": d_head, "dtype": np.float16}
    full = [attention_cache_bytes(n, **heads) / 2**20 for n in lengths]
    rolling = [attention_cache_bytes(n, window=window, sinks=sinks, **heads) / 2**20 for n in lengths]
    ax_cache.plot(lengths, full, color=SERIES_COLORS[0], label="full KV cache")
    kept = format_bytes(rolling[-1] * 2**20)
    ax_cache.plot(lengths, rolling, color=SERIES_COLORS[1], label=f"rolling cache ({kept})")
    ax_cache.set(title=f"one layer's cache; {n_layers} layers reach {n_layers * (window - 1)} tokens back",
                 xlabel="tokens decoded", ylabel="MiB")
    ax_cache.title.set_fontsize(10)
    ax_cache.legend(fontsize=8, loc="upper left")
    ax_cache.grid(alpha=0.3)
    return fig


def window_explorer(windows: Sequence[int] = (1, 2, 4, 8, 16, 32), **render_options: Any) -> FrameExplorer:
    """A slider over window sizes: the band mask, the cache it needs, and how far two layers reach.

    Examples
    --------
    >>> explorer = window_explorer([2, 8])
    >>> sorted(explorer.frames)
    [(2,), (8,)]
    """
    def render(window):
        return render_window(window, **render_options)

    return frame_explorer(
        render, {"window": list(windows)}, labels={"window": "window (tokens)"},
        initial={"window": windows[len(windows) // 2]},
        title="Sliding-window attention: what a query sees, and what the cache keeps",
        caption="Left: True (yellow) where a query may attend. Right: a full cache grows with every token; "
                "a rolling cache stops at the window.",
        live={"window": live_int(1, 64, value=windows[len(windows) // 2], description="window (tokens)")},
    )


def context_explorer(results: Mapping[str, Mapping[int, np.ndarray]], *,
                     original_context: int) -> FrameExplorer:
    """A switch between RoPE scaling methods over the long-context loss curves of one trained model.

    ``results`` is what :func:`mha.lab.modern_attention.context_losses` returns.

    Examples
    --------
    >>> curves = {m: {64: np.linspace(2, 3, 64)} for m in ("none", "ntk")}
    >>> sorted(context_explorer(curves, original_context=32).frames)
    [('none',), ('ntk',)]
    """
    def render(method):
        return plot_context_losses(results, original_context=original_context, highlight=method,
                                   title=f"Reading past {original_context} tokens: {method}")

    return frame_explorer(
        render, {"method": list(results)}, labels={"method": "RoPE scaling"},
        title="Long context: one trained model, four ways of rotating past its training length",
        caption="Every method is applied to the same trained weights, without further training.",
    )
