"""Figures for the chapter on modern attention: patterns, caches, sinks, streams, logits and long contexts.

Arrays in, a :class:`matplotlib.figure.Figure` out; sized for the book's text column (about 7 inches),
with panels that read at phone width too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from mha.cost import format_bytes
from mha.plotting.style import MAX_WIDTH_IN, SERIES_COLORS, WEIGHTS_CMAP, new_figure

__all__ = ["plot_patterns", "plot_cache_growth", "plot_receptive_field", "plot_first_token_weight",
           "plot_stream_losses", "plot_logit_ranges", "plot_logit_growth", "plot_context_losses",
           "plot_rotary_turns", "plot_cache_bars"]


def _finish(fig, axes, title: str | None):
    """A light grid on every panel, and the figure's title above them."""
    for ax in axes:
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def plot_patterns(masks: Mapping[str, np.ndarray], *, notes: Mapping[str, str] | None = None, ncols: int = 3,
                  title: str | None = None) -> Figure:
    """Boolean attention patterns side by side: dark where a query (row) may attend to a key (column).

    Examples
    --------
    >>> import mha
    >>> fig = plot_patterns({"causal": mha.causal_mask(8), "window 3": mha.sliding_window_mask(8, window=3)})
    >>> [ax.get_title() for ax in fig.axes]
    ['causal', 'window 3']
    >>> fig = plot_patterns({"w": mha.sliding_window_mask(8, window=3)}, notes={"w": "38%"})
    >>> fig.axes[0].get_title().splitlines()
    ['w', '38%']
    """
    names = list(masks)
    ncols = min(ncols, len(names))
    nrows = -(-len(names) // ncols)
    fig = new_figure(2.4 * ncols, (3.0 if notes else 2.6) * nrows + (0.4 if title else 0))
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, name in zip(axes, names, strict=False):
        mask = np.asarray(masks[name])
        ax.imshow(mask, cmap="Greys", vmin=0, vmax=1.4, interpolation="nearest")
        ax.set_title(name if not notes or name not in notes else f"{name}\n{notes[name]}", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("key", fontsize=9)
        ax.set_ylabel("query", fontsize=9)
    for ax in axes[len(names):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def plot_cache_growth(results: Mapping[str, Mapping[str, Sequence[int]]], *,
                      title: str | None = None) -> Figure:
    """Bytes held by each cache, and peak bytes of one decoding step, against the tokens decoded.

    ``results`` is what :func:`mha.lab.modern_attention.cache_growth` returns.
    """
    fig = new_figure(7.0, 3.2)
    ax_cache, ax_step = fig.subplots(1, 2)
    for (name, series), color in zip(results.items(), SERIES_COLORS, strict=False):
        tokens = np.asarray(series["tokens"])
        cache_kib = np.asarray(series["cache_bytes"]) / 2**10
        ax_cache.plot(tokens, cache_kib, "o-", color=color, label=name, ms=3)
        ax_step.plot(tokens, np.asarray(series["step_peak_bytes"]) / 2**10, "o-", color=color, ms=3)
    ax_cache.set(title="the cache", xlabel="tokens decoded", ylabel="KiB")
    ax_step.set(title="one decoding step (peak)", xlabel="tokens decoded", ylabel="KiB")
    ax_cache.legend(fontsize=8, loc="upper left")
    ax_cache.set_ylim(bottom=0)
    ax_step.set_ylim(bottom=0)
    return _finish(fig, (ax_cache, ax_step), title)


def plot_receptive_field(reach: Sequence[int], window: int, *, title: str | None = None) -> Figure:
    """How far a change to one token reaches after each layer of sliding-window attention."""
    reached = np.asarray(reach)
    layers = np.arange(1, reached.size + 1)
    fig = new_figure(5.0, 3.2)
    ax = fig.subplots()
    ax.bar(layers, reach, color=SERIES_COLORS[0], label="measured: furthest output token 0 moves")
    ax.plot(layers, layers * (window - 1), "k--", marker="o", label=f"layers × (window − 1), window {window}")
    ax.set(xlabel="layers", ylabel="tokens of reach", xticks=layers,
           title=title or "Information travels (window − 1) tokens per layer")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3, axis="y")
    return fig


def plot_first_token_weight(weights: Mapping[str, np.ndarray], *, title: str | None = None) -> Figure:
    """Heat maps of the weight each head (column) of each layer (row) gives the first token.

    Examples
    --------
    >>> fig = plot_first_token_weight({"model": np.full((2, 4), 0.25)})
    >>> fig.axes[0].get_title()
    'model: mean 0.25, largest 0.25'
    """
    # one map under another, each as wide as the column (its head numbers stay apart at 10 pt)
    fig = new_figure(MAX_WIDTH_IN, 2.7 * len(weights) + (0.4 if title else 0.0))
    axes = np.atleast_1d(fig.subplots(len(weights), 1, squeeze=False)).ravel()
    for ax, (name, w) in zip(axes, weights.items(), strict=True):
        w = np.asarray(w)
        image = ax.imshow(w, cmap=WEIGHTS_CMAP, vmin=0, vmax=1, aspect="auto")
        ax.set(title=f"{name}: mean {w.mean():.2f}, largest {w.max():.2f}", xlabel="head", ylabel="layer",
               xticks=range(w.shape[1]), yticks=range(w.shape[0]))
        ax.title.set_fontsize(10)
    fig.colorbar(image, ax=list(axes), label="weight on the first token", shrink=0.9)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def plot_stream_losses(losses: Mapping[str, np.ndarray], *, trained_length: int, smooth: int = 16,
                       title: str | None = None) -> Figure:
    """Next-token loss along a long stream, one line per way of caching (a running mean of ``smooth``)."""
    fig = new_figure(7.0, 3.4)
    ax = fig.subplots()
    kernel = np.ones(smooth) / smooth
    for (name, curve), color in zip(losses.items(), SERIES_COLORS, strict=False):
        curve = np.asarray(curve)
        smoothed = np.convolve(curve, kernel, mode="valid")
        ax.plot(np.arange(smoothed.size) + smooth, smoothed, color=color, label=name)
    ax.axvline(trained_length, color="0.4", linestyle=":", linewidth=1)
    ax.text(trained_length, ax.get_ylim()[0], " trained length", va="bottom", fontsize=8, color="0.3")
    ax.set(xlabel="position in the stream (tokens)", ylabel=f"loss, nats (mean of {smooth})",
           title=title or "Streaming a long text through a tiny GPT")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot_logit_ranges(scales: Sequence[float], results: Mapping[str, Mapping[str, Sequence[float]]], *,
                      title: str | None = None) -> Figure:
    """Largest score and softmax entropy against the input's scale, one line per attention step.

    ``results`` is what :func:`mha.lab.modern_attention.logit_ranges` returns.
    """
    fig = new_figure(7.0, 3.2)
    ax_max, ax_entropy = fig.subplots(1, 2)
    for (name, series), color in zip(results.items(), SERIES_COLORS, strict=False):
        ax_max.plot(scales, series["largest"], "o-", color=color, label=name, ms=3)
        ax_entropy.plot(scales, series["entropy"], "o-", color=color, ms=3)
    ax_max.set(xscale="log", yscale="log", xlabel="input scale", ylabel="largest |score|",
               title="score range")
    ax_entropy.set(xscale="log", xlabel="input scale", ylabel="nats", title="softmax entropy (mean)")
    ax_max.legend(fontsize=8)
    return _finish(fig, (ax_max, ax_entropy), title)


def plot_logit_growth(runs: Mapping[str, Mapping[int, float]], losses: Mapping[str, Sequence[float]], *,
                      title: str | None = None) -> Figure:
    """Largest attention score at the recorded steps, and the training loss, one line per run."""
    fig = new_figure(7.0, 3.2)
    ax_logit, ax_loss = fig.subplots(1, 2)
    for (name, records), color in zip(runs.items(), SERIES_COLORS, strict=False):
        steps = sorted(records)
        ax_logit.plot(steps, [records[s] for s in steps], "o-", color=color, label=name, ms=3)
        ax_loss.plot(np.asarray(losses[name]), color=color, alpha=0.8, linewidth=0.8)
    ax_logit.set(yscale="log", xlabel="training step", ylabel="largest |score|", title="attention logits")
    ax_loss.set(xlabel="training step", ylabel="loss, nats", title="training loss")
    ax_logit.legend(fontsize=8)
    return _finish(fig, (ax_logit, ax_loss), title)


def plot_context_losses(results: Mapping[str, Mapping[int, np.ndarray]], *, original_context: int,
                        highlight: str | None = None, title: str | None = None) -> Figure:
    """Loss against position on windows longer than the training context, one line per scaling method.

    ``results`` is what :func:`mha.lab.modern_attention.context_losses` returns; the longest windows are
    drawn. ``highlight`` draws one method bold and the others faint.
    """
    fig = new_figure(7.0, 3.4)
    ax = fig.subplots()
    for (method, by_length), color in zip(results.items(), SERIES_COLORS, strict=False):
        curve = np.asarray(by_length[max(by_length)])
        faint = highlight is not None and method != highlight
        ax.plot(np.arange(curve.size), curve, color=color, alpha=0.25 if faint else 1.0,
                linewidth=1 if faint else 2, label=f"{method}: {curve[original_context:].mean():.2f} past "
                f"{original_context}")
    ax.axvline(original_context, color="0.4", linestyle=":", linewidth=1)
    ax.set(xlabel="position", ylabel="loss, nats", title=title or "Reading past the trained length")
    ax.legend(fontsize=8, title="method: mean loss", title_fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot_rotary_turns(tables: Mapping[str, np.ndarray], *, original_context: int, length: int,
                      title: str | None = None) -> Figure:
    """Turns each feature pair makes over ``length`` positions, per method, against the trained range.

    A pair whose turns over ``length`` exceed its turns over ``original_context``, while below one full
    turn, reaches angles training never showed: the grey band.
    """
    fig = new_figure(7.0, 3.3)
    ax = fig.subplots()
    for (method, frequencies), color in zip(tables.items(), SERIES_COLORS, strict=False):
        turns = length * np.asarray(frequencies) / (2 * np.pi)
        ax.plot(np.arange(turns.size), turns, "o-", color=color, label=method, ms=3)
    base = np.asarray(next(iter(tables.values())))
    trained = original_context * base / (2 * np.pi)
    ax.fill_between(np.arange(base.size), trained, np.minimum(1.0, trained * 0 + 1.0),
                    where=trained < 1, color="0.85",
                    label=f"unseen: beyond {original_context} tokens, < 1 turn")
    ax.set(yscale="log", xlabel="feature pair i (fast to slow)",
           ylabel=f"turns over {length} positions", title=title or "What each method does to the speeds")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot_cache_bars(values: Mapping[str, float], *, title: str, unit_label: str = "per token") -> Figure:
    """Horizontal bars of bytes, labelled with :func:`mha.cost.format_bytes`.

    Examples
    --------
    >>> fig = plot_cache_bars({"MHA": 65536, "MLA": 1152}, title="cache")
    >>> fig.axes[0].get_title()
    'cache'
    """
    names = list(values)
    fig = new_figure(7.0, 0.5 * len(names) + 1.2)
    ax = fig.subplots()
    bars = ax.barh(names[::-1], [values[n] for n in names[::-1]], color=SERIES_COLORS[0])
    for bar, name in zip(bars, names[::-1], strict=True):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {format_bytes(values[name])}",
                va="center", fontsize=9)
    ax.set(xscale="log", xlabel=f"bytes {unit_label} (log scale)", title=title)
    ax.set_xlim(right=max(values.values()) * 12)
    ax.grid(alpha=0.3, axis="x")
    return fig
