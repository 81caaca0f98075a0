"""Figures for the positions chapter: the sinusoidal encoding, bias tables and scores against offset."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from mha.plotting.charts import plot_curves, plot_matrix
from mha.typing import ArrayLike
from mha.validation import as_float_array

__all__ = ["plot_encoding", "plot_bias_tables", "plot_scores_by_offset"]

OFFSET_LABEL = "offset (key position − query position)"


def plot_encoding(encoding: ArrayLike, *, title: str = "Sinusoidal position encoding") -> Figure:
    """Heatmap of a position encoding: one row per position, one column per feature.

    Parameters
    ----------
    encoding : array_like, shape (seq_len, d_model)
        E.g. :func:`mha.positions.sinusoidal_encoding`.
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from mha.positions import sinusoidal_encoding
    >>> fig = plot_encoding(sinusoidal_encoding(16, 8))
    >>> fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()
    ('feature (sin, cos pairs; slower to the right)', 'position')
    """
    encoding = as_float_array(encoding, "encoding")
    if encoding.ndim != 2:
        raise ValueError(f"encoding must have shape (seq_len, d_model), got {encoding.shape}")
    seq_len, d_model = encoding.shape
    alt_text = (f"{title}: heatmap with {seq_len} positions down and {d_model} features across, values "
                "between -1 (blue) and 1 (red). The left columns flip colour from one row to the next; "
                "further right the stripes change ever more slowly down the positions.")
    return plot_matrix(encoding, xlabel="feature (sin, cos pairs; slower to the right)", ylabel="position",
                       title=title, colorbar_label="value", size=(7.0, 3.6), alt_text=alt_text)


def plot_bias_tables(table: ArrayLike, offsets: ArrayLike, *, head_titles: Sequence[str] | None = None,
                     title: str = "Relative position bias per head") -> Figure:
    """Each head's learned bias as a curve over the offset.

    Parameters
    ----------
    table : array_like, shape (n_heads, n_offsets)
        E.g. ``RelativePositionBias.table``.
    offsets : array_like of int, shape (n_offsets,)
        E.g. ``RelativePositionBias.offsets``.
    head_titles : sequence of str, optional
        Legend entries; default "head 0", "head 1", ...
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_bias_tables(np.zeros((2, 5)), np.arange(-2, 3))
    >>> len(fig.axes[0].lines)
    2
    """
    table = as_float_array(table, "table")
    if table.ndim != 2:
        raise ValueError(f"table must have shape (n_heads, n_offsets), got {table.shape}")
    offsets = np.asarray(offsets)
    if offsets.shape != table.shape[1:]:
        raise ValueError(f"offsets has shape {offsets.shape}, the table has {table.shape[1]} columns")
    if head_titles is None:
        head_titles = [f"head {h}" for h in range(table.shape[0])]
    if len(head_titles) != table.shape[0]:
        raise ValueError(f"head_titles has {len(head_titles)} entries for {table.shape[0]} heads")
    curves = dict(zip(head_titles, table, strict=True))
    peaks = "; ".join(
        f"{name}: flat at {row[0] + 0.0:.3g}" if np.all(row == row[0]) else
        f"{name}: highest ({row.max() + 0.0:.3g}) at offset {offsets[int(np.argmax(row))]}"
        for name, row in curves.items())
    alt_text = f"{title}: one curve per head of the bias added to the score against the offset. {peaks}."
    return plot_curves(offsets, curves, xlabel=OFFSET_LABEL, ylabel="bias added to the score", title=title,
                       markers=True, alt_text=alt_text)


def plot_scores_by_offset(offsets: ArrayLike, curves: Mapping[str, Sequence[float]], *,
                          ylabel: str = "query · key", title: str | None = None) -> Figure:
    """How a score depends on the distance between two tokens, one curve per setting.

    Examples
    --------
    >>> fig = plot_scores_by_offset(np.arange(-3, 4), {"flat": np.ones(7)})
    >>> fig.axes[0].get_xlabel()
    'offset (key position − query position)'
    """
    return plot_curves(offsets, curves, xlabel=OFFSET_LABEL, ylabel=ylabel, title=title)
