"""Figures for the chapter on efficient attention: online softmax, memory, decoding cost, shared KV heads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from mha.cost import format_bytes
from mha.plotting.style import SERIES_COLORS, new_figure
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = ["plot_online_softmax", "plot_memory", "plot_decode_cost", "plot_kv_tradeoff"]

UNSEEN_COLOR = "0.8"


def plot_online_softmax(scores: ArrayLike, block_size: int, running_max: ArrayLike, running_sum: ArrayLike,
                        estimates: ArrayLike, final: ArrayLike, *, step: int) -> Figure:
    """One query's attention computed block by block: what is known after ``step + 1`` key blocks.

    Parameters
    ----------
    scores : array_like, shape (seq_k,)
        The query's scaled scores against every key.
    block_size : int
        Keys per block.
    running_max, running_sum : array_like, shape (n_blocks,)
        The running maximum ``m`` and the running denominator ``ℓ`` (a sum of ``exp(score − m)``)
        after each block.
    estimates : array_like, shape (n_blocks, d_v)
        The output known after each block: the running weighted sum of values divided by ``ℓ``.
    final : array_like, shape (d_v,)
        The exact attention output, for comparison.
    step : int
        Which block was just processed (0-based).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> s = np.array([0.0, 1.0, 3.0, 2.0])
    >>> fig = plot_online_softmax(s, 2, [1.0, 3.0], [1.37, 1.5], [[0.1], [0.2]], [0.2], step=0)
    >>> [ax.get_title() for ax in fig.axes]
    ['scores seen: block 1 of 2', 'running max and sum', 'output so far vs exact']
    """
    scores = as_float_array(scores, "scores")
    running_max, running_sum = as_float_array(running_max, "running_max"), as_float_array(running_sum, "sum")
    estimates, final = np.atleast_2d(as_float_array(estimates, "estimates")), as_float_array(final, "final")
    n_blocks, expected = running_max.size, -(-scores.size // block_size)  # ceil(seq_k / block_size)
    if expected != n_blocks or running_sum.size != n_blocks or len(estimates) != n_blocks:
        raise ValueError(f"{scores.size} scores in blocks of {block_size} make {expected} blocks, but got "
                         f"{n_blocks} maxima, {running_sum.size} sums and {len(estimates)} estimates")
    if not 0 <= step < n_blocks:
        raise ValueError(f"step must lie in [0, {n_blocks - 1}], got {step}")
    fig = new_figure(11.0, 3.2)
    fig.set_layout_engine(None)  # fixed margins: a widget redraws this figure once per frame
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.16, top=0.9, wspace=0.25)
    ax_scores, ax_state, ax_out = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.6, 1, 1]})

    keys = np.arange(scores.size)
    block = keys // block_size
    palette = {True: SERIES_COLORS[0], False: UNSEEN_COLOR}
    colors = [SERIES_COLORS[1] if b == step else palette[bool(b < step)] for b in block]
    ax_scores.bar(keys, scores, color=colors)
    ax_scores.axhline(running_max[step], color="black", linestyle="--", linewidth=1,
                      label=f"running max m = {running_max[step]:.2f}")
    for edge in range(block_size, scores.size, block_size):
        ax_scores.axvline(edge - 0.5, color="0.5", linewidth=0.8)
    ax_scores.set_xlabel("key")
    ax_scores.set_ylabel("score")
    ax_scores.set_title(f"scores seen: block {step + 1} of {n_blocks}")
    ax_scores.legend(loc="lower right", fontsize=8)

    seen = np.arange(step + 1)
    ax_state.plot(seen + 1, running_max[:step + 1], marker="o", color=SERIES_COLORS[2], label="max m")
    ax_state.plot(seen + 1, running_sum[:step + 1], marker="s", color=SERIES_COLORS[3], label="sum ℓ")
    ax_state.set_xlim(0.5, n_blocks + 0.5)
    low = min(running_max.min(), running_sum.min(), 0.0)
    ax_state.set_ylim(low - 0.1, max(running_max.max(), running_sum.max()) * 1.1 + 0.1)
    ax_state.set_xticks(range(1, n_blocks + 1))
    ax_state.set_xlabel("blocks processed")
    ax_state.set_title("running max and sum")
    ax_state.legend(fontsize=8)
    ax_state.grid(alpha=0.3)

    dims = np.arange(final.size)
    ax_out.bar(dims - 0.2, estimates[step], width=0.4, color=SERIES_COLORS[1], label="so far")
    ax_out.bar(dims + 0.2, final, width=0.4, color=SERIES_COLORS[0], label="exact")
    ax_out.set_xticks(dims)
    ax_out.set_xlabel("output feature")
    ax_out.set_title("output so far vs exact")
    ax_out.legend(fontsize=8)
    fig.alt_text = (
        f"Online softmax after block {step + 1} of {n_blocks}: bars of one query's {scores.size} scores in "
        f"blocks of {block_size} (read blocks coloured, unread grey) with the running maximum "
        f"m = {running_max[step]:.3g} as a dashed line; the running max and sum so far "
        f"(sum = {running_sum[step]:.3g}); and the output estimate "
        f"[{', '.join(f'{e:.3g}' for e in estimates[step])}] beside the exact output "
        f"[{', '.join(f'{e:.3g}' for e in final)}].")
    return fig


def plot_memory(seq_lens: ArrayLike, measured: Mapping[str, ArrayLike],
                predicted: Mapping[str, ArrayLike], *,
                title: str = "Peak memory of one attention call") -> Figure:
    """Bytes against sequence length on log-log axes: measured (solid, dots), predicted (dashed).

    Parameters
    ----------
    seq_lens : sequence of int
    measured, predicted : mapping of str to sequence of float
        One series of bytes per label, each as long as ``seq_lens``. A predicted series shares the
        colour of the measured one with the same position in its mapping.
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_memory([256, 512], {"full": [3e6, 1e7]}, {"full (model)": [2e6, 8e6]})
    >>> fig.axes[0].get_xscale(), len(fig.axes[0].lines)
    ('log', 2)
    """
    seq_lens = as_float_array(seq_lens, "seq_lens")
    fig = new_figure(6.4, 4.0)
    ax = fig.subplots()
    for style, series in (("-", measured), ("--", predicted)):
        for color, (label, values) in zip(SERIES_COLORS, series.items(), strict=False):
            values = as_float_array(values, label)
            if values.shape != seq_lens.shape:
                raise ValueError(f"series {label!r} has {values.size} values for {seq_lens.size} lengths")
            ax.plot(seq_lens, values / 2**20, style, marker="o" if style == "-" else None, color=color,
                    label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("sequence length (tokens)")
    ax.set_ylabel("MiB (log scale)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    lengths = ", ".join(str(int(n)) for n in seq_lens)
    series_text = "; ".join(f"{label}: " + ", ".join(format_bytes(b) for b in np.ravel(values))
                            for label, values in (*measured.items(), *predicted.items()))
    fig.alt_text = f"{title}, log-log lines against sequence length ({lengths} tokens). {series_text}."
    return fig


def plot_decode_cost(positions: ArrayLike, seconds: Mapping[str, Sequence[float]],
                     flops: Mapping[str, Sequence[float]], *,
                     title: str = "Cost of one generated token") -> Figure:
    """Time per generated token against its position, and the full/cached ratio measured vs predicted.

    Parameters
    ----------
    positions : sequence of int
        Token positions (1-based).
    seconds : mapping with keys "cached" and "recompute"
        Measured seconds per token at each position.
    flops : mapping with keys "cached" and "recompute"
        Predicted FLOPs per token (:func:`mha.cost.decode_step_flops`).
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_decode_cost([1, 2], {"cached": [1e-4, 1e-4], "recompute": [1e-4, 2e-4]},
    ...                        {"cached": [10, 12], "recompute": [10, 40]})
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['ms per token (log scale)', 'recompute / cached']
    """
    positions = as_float_array(positions, "positions")
    series = {}
    for name, mapping in (("seconds", seconds), ("flops", flops)):
        if set(mapping) != {"cached", "recompute"}:
            raise ValueError(f"{name} must have the keys 'cached' and 'recompute', got {sorted(mapping)}")
        series[name] = {key: as_float_array(values, key) for key, values in mapping.items()}
        if any(values.shape != positions.shape for values in series[name].values()):
            raise ValueError(f"every {name} series must have one value per position")
    fig = new_figure(10.0, 3.6)
    ax_time, ax_ratio = fig.subplots(1, 2)
    for color, key in zip(SERIES_COLORS, ("recompute", "cached"), strict=False):
        label = "recompute the prefix" if key == "recompute" else "KV cache"
        ax_time.plot(positions, 1e3 * series["seconds"][key], marker="o", color=color, label=label)
    ax_time.set_yscale("log")
    ax_time.set_xlabel("position of the generated token")
    ax_time.set_ylabel("ms per token (log scale)")
    ax_time.set_title("measured time per token")
    ax_time.legend(fontsize=8)
    measured_ratio = series["seconds"]["recompute"] / series["seconds"]["cached"]
    predicted_ratio = series["flops"]["recompute"] / series["flops"]["cached"]
    ax_ratio.plot(positions, predicted_ratio, "--", color=SERIES_COLORS[2], label="FLOPs (predicted)")
    ax_ratio.plot(positions, measured_ratio, marker="o", color=SERIES_COLORS[3], label="time (measured)")
    ax_ratio.set_yscale("log")
    ax_ratio.set_xlabel("position of the generated token")
    ax_ratio.set_ylabel("recompute / cached")
    ax_ratio.set_title("how much the cache saves")
    ax_ratio.legend(fontsize=8)
    for ax in (ax_time, ax_ratio):
        ax.grid(alpha=0.3, which="both")
    fig.suptitle(title)
    fig.alt_text = (
        f"{title}. Left: measured milliseconds per generated token at positions "
        f"{', '.join(str(int(p)) for p in positions)}; recomputing the prefix takes "
        f"{', '.join(f'{1e3 * t:.3g}' for t in series['seconds']['recompute'])} ms, the KV cache "
        f"{', '.join(f'{1e3 * t:.3g}' for t in series['seconds']['cached'])} ms. Right: recompute/cached "
        f"ratio, predicted from FLOPs {', '.join(f'{r:.3g}' for r in predicted_ratio)}, measured "
        f"{', '.join(f'{r:.3g}' for r in measured_ratio)}.")
    return fig


def plot_kv_tradeoff(labels: Sequence[str], cache_bytes: ArrayLike, metrics: Mapping[str, Sequence[float]], *,
                     selected: int | None = None, metric_label: str = "relative output error",
                     title: str = "Key/value cache against fidelity") -> Figure:
    """Cache size (bars) beside one or more quality metrics (grouped bars), one group per configuration.

    Parameters
    ----------
    labels : sequence of str
        One per configuration, e.g. ``["8 KV heads", "4", "2", "1"]``.
    cache_bytes : array_like, shape (n_configs,)
    metrics : mapping of str to sequence of float
        Series of the same length, e.g. ``{"mean-pooled": ..., "after uptraining": ...}``.
    selected : int, optional
        Highlight this configuration (the widget's current choice).
    metric_label, title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_kv_tradeoff(["4", "1"], [4096, 1024], {"error": [0.0, 0.5]}, selected=1)
    >>> fig.axes[0].get_ylabel(), fig.axes[1].get_ylabel()
    ('KV cache (KiB)', 'relative output error')
    """
    cache_bytes = as_float_array(cache_bytes, "cache_bytes")
    n = len(labels)
    if cache_bytes.shape != (n,) or any(len(values) != n for values in metrics.values()):
        raise ValueError(f"cache_bytes and every metric need one value per label ({n})")
    fig = new_figure(9.0, 3.4)
    ax_cache, ax_metric = fig.subplots(1, 2)
    x = np.arange(n)
    edge = ["black" if i == selected else "none" for i in range(n)]
    bars = ax_cache.bar(x, cache_bytes / 1024, color=SERIES_COLORS[0], edgecolor=edge, linewidth=2)
    ax_cache.bar_label(bars, [format_bytes(b) for b in cache_bytes], fontsize=8)
    ax_cache.set_ylabel("KV cache (KiB)")
    width = 0.8 / max(1, len(metrics))
    for i, (name, values) in enumerate(metrics.items()):
        offset = (i - (len(metrics) - 1) / 2) * width
        ax_metric.bar(x + offset, as_float_array(values, name), width=width, color=SERIES_COLORS[i + 1],
                      edgecolor=edge, linewidth=2, label=name)
    ax_metric.set_ylabel(metric_label)
    ax_metric.legend(fontsize=8)
    for ax in (ax_cache, ax_metric):
        ax.set_xticks(x, labels)
        ax.set_xlabel("key/value heads")
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(title)
    rows = "; ".join(
        f"{label} key/value heads: cache {format_bytes(cache_bytes[i])}, "
        + ", ".join(f"{name} {values[i]:.3g}" for name, values in metrics.items())
        for i, label in enumerate(labels))
    fig.alt_text = f"{title}: bars of KV cache size and of {metric_label} per configuration. {rows}."
    return fig
