"""A head's QK and OV circuits as two tables, stacked so that both read on a phone's column."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from mha.lab.heads_that_learn_circuits import HeadCircuits, argmax_share
from mha.plotting.style import SIGNED_CMAP, new_figure

__all__ = ["plot_circuits"]


def _ticks(ax, labels, axis: str, every: int):
    positions = list(range(0, len(labels), every))
    getattr(ax, f"set_{axis}ticks")(positions, [labels[i] for i in positions], fontsize=9)


def _table(fig, ax, values, *, title, xlabel, ylabel, row_labels, col_labels, causal, colorbar):
    shown = np.ma.masked_where(np.triu(np.ones_like(values, dtype=bool), 1), values) if causal else values
    limit = float(np.abs(np.asarray(shown)[~np.ma.getmaskarray(shown)]).max()) or 1.0
    image = ax.imshow(shown, cmap=SIGNED_CMAP, vmin=-limit, vmax=limit, interpolation="nearest")
    every = 1 if len(row_labels) <= 16 else 4
    _ticks(ax, row_labels, "y", every)
    _ticks(ax, col_labels, "x", every)
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_xlabel(xlabel, fontsize=10)
    ax.set_ylabel(ylabel, fontsize=10)
    fig.colorbar(image, ax=ax, label=colorbar, shrink=0.85, pad=0.02)


def plot_circuits(circuits: HeadCircuits, token_names: Sequence[str], *, title: str | None = None) -> Figure:
    """The QK circuit (where the head looks) above the OV circuit (what it writes), with how diagonal each is.

    Parameters
    ----------
    circuits : HeadCircuits
        From :func:`mha.lab.heads_that_learn_circuits.head_circuits`.
    token_names : sequence of str
        One name per token id (``vocab_size`` of them).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from mha.lab import AttentionOnlyModel
    >>> from mha.lab.heads_that_learn_circuits import head_circuits
    >>> model = AttentionOnlyModel(vocab_size=4, seq_len=6, d_model=8, n_heads=2, rng=0)
    >>> fig = plot_circuits(head_circuits(model, 1, 0, previous=1), list("ABCD"))
    >>> [ax.get_title(loc="left")[:3] for ax in fig.axes[:2]]
    ['QK:', 'OV:']
    """
    c = circuits
    names = [str(t) for t in token_names]
    if len(names) != c.ov.shape[0]:
        raise ValueError(f"token_names has {len(names)} names for a vocabulary of {c.ov.shape[0]}")
    fig = new_figure(4.8, 8.4)
    ax_qk, ax_ov = fig.subplots(2, 1)
    if c.causal_qk:
        labels = [str(i) for i in range(c.qk.shape[0])]
        share = argmax_share(c.qk, offset=-1, causal=True)
        qk_title = f"QK: peaks one position back in {share:.0%} of rows"
    else:
        labels = names
        share = argmax_share(c.qk)
        qk_title = f"QK: the diagonal wins in {share:.0%} of rows"
    _table(fig, ax_qk, c.qk, title=qk_title, xlabel=c.qk_cols, ylabel=c.qk_rows, row_labels=labels,
           col_labels=labels, causal=c.causal_qk, colorbar="score")
    _table(fig, ax_ov, c.ov, title=f"OV: the diagonal wins in {argmax_share(c.ov):.0%} of rows",
           xlabel="logit raised", ylabel="token attended to", row_labels=names, col_labels=names,
           causal=False, colorbar="logit")
    fig.suptitle(title or f"Layer {c.layer}, head {c.head}: where it looks, what it writes", fontsize=11)
    fig.alt_text = (f"Circuits of layer {c.layer} head {c.head}. Top, {qk_title} ({c.qk_rows} down, "
                    f"{c.qk_cols} across). Bottom, OV: the diagonal wins in {argmax_share(c.ov):.0%} of rows "
                    "(token attended to down, logit raised across).")
    return fig
