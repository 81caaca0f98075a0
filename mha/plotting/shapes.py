"""Shapes and memory of the layer's intermediates: an HTML table, memory strips, and the head-split figure.

The HTML functions return strings (for ``IPython.display.HTML`` or a frame of an explorer); they set
their own colours on a white background, so they read the same on the site's light and dark themes.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure

from mha.plotting.style import MAX_WIDTH_IN, WEIGHTS_CMAP, new_figure
from mha.typing import ArrayLike

if TYPE_CHECKING:  # names for the annotations only: not imported at run time
    from mha.lab.shapes import ShapeStep

__all__ = ["shape_table_html", "memory_layout_html", "plot_head_assignment", "plot_influence", "plot_masks",
           "head_colors"]

#: One small style sheet per snippet instead of inline styles on every cell and block: an explorer embeds
#: dozens of these snippets in its page.
_STYLE = (
    "<style>"
    ".mha-shapes{background:#fff;color:#111;font-family:system-ui,sans-serif;font-size:13px;padding:6px}"
    ".mha-shapes table{border-collapse:collapse}"
    ".mha-shapes td,.mha-shapes th{border:1px solid #ccc;padding:2px 5px;text-align:left;color:#111;"
    "font-size:12px;line-height:1.3;vertical-align:top}"
    ".mha-shapes code{color:#8b1a1a;background:none;font-size:12px;padding:0}"
    ".mha-shapes .dims{color:#555}"
    ".mha-shapes .nowrap{white-space:nowrap}"
    ".mha-shapes caption{caption-side:top;color:#111}"
    ".mha-shapes .strip{line-height:1.1}"
    ".mha-shapes .strip span{display:inline-block;min-width:22px;margin:1px;padding:1px 2px;"
    "font-size:12.5px;text-align:center}"
    ".mha-shapes .label{margin:6px 0 2px 0}"
    "</style>"
)


def head_colors(n_heads: int) -> list[str]:
    """One hex colour per head, sampled evenly from the course's perceptual colormap.

    Examples
    --------
    >>> head_colors(2)
    ['#440154', '#fde725']
    """
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps[WEIGHTS_CMAP]
    return [to_hex(cmap(i / max(1, n_heads - 1))) for i in range(n_heads)]


def text_color(background: str) -> str:
    """Black or white, whichever contrasts more with ``background`` (WCAG relative luminance).

    Examples
    --------
    >>> text_color("#35b779"), text_color("#440154")  # viridis' green takes black, its purple white
    ('#000', '#fff')
    """
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(background[i:i + 2], 16)) for i in (1, 3, 5))
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000" if (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) else "#fff"


def _memory_note(step) -> str:
    owner = "new array" if step.view_of is None else f"view of {step.view_of}"
    return owner + ("" if step.contiguous else " (strided)")


def shape_table_html(steps: Sequence[ShapeStep], *, title: str | None = None, show_code: bool = True) -> str:
    """An HTML table of traced steps: name, formula, shape in words and numbers, strides, memory.

    Parameters
    ----------
    steps : list of mha.lab.shapes.ShapeStep
        From :func:`mha.lab.shapes.trace_layer` or :func:`mha.lab.shapes.trace_shapes`.
    title : str, optional
        Caption above the table.
    show_code : bool, default True
        Include the column with the NumPy expression of each step (leave it out for a narrow table).

    Returns
    -------
    str

    Examples
    --------
    >>> from mha.lab.shapes import trace_shapes
    >>> table = shape_table_html(trace_shapes(1, 3, 8, 2))
    >>> table.count("<tr>"), "(1, 2, 3, 4)" in table
    (18, True)
    """
    header = ["step", "computed as", "shape", "strides (elements)", "memory"]
    if not show_code:
        header.remove("computed as")
    rows = ["<tr>" + "".join(f"<th>{h}</th>" for h in header) + "</tr>"]
    for step in steps:
        cells = [f"<b>{html.escape(step.name)}</b>",
                 f'<span class="dims">{html.escape(step.dims)}</span><br>'
                 f'<span class="nowrap">{step.shape}</span>',
                 f'<span class="nowrap">{step.strides}</span>', html.escape(_memory_note(step))]
        if show_code:
            cells.insert(1, f"<code>{html.escape(step.code)}</code>")
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    caption = f"<caption>{html.escape(title)}</caption>" if title else ""
    return f'{_STYLE}<div class="mha-shapes"><table>{caption}{"".join(rows)}</table></div>'


def _block_offsets(per_head: np.ndarray, root: np.ndarray) -> np.ndarray:
    """Memory offset (elements from ``root``'s start) of each (batch, head, token) block of an array.

    ``per_head`` has shape (batch, n_heads, seq, d_head); the offsets come from its data pointer and
    strides, i.e. from where NumPy really keeps it.
    """
    item = per_head.itemsize
    start = (per_head.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    s_b, s_h, s_t, _ = (s // item for s in per_head.strides)
    b, h, t = np.indices(per_head.shape[:3])  # (batch, n_heads, seq) each
    return start + b * s_b + h * s_h + t * s_t


def _strip(label: str, blocks, colors) -> str:
    """A row of coloured blocks (memory order, left to right, wrapping) with a label above it."""
    spans = "".join(f'<span style="background:{colors[head]};color:{text_color(colors[head])}">{text}</span>'
                    for text, head in blocks)
    return f'<div class="label">{label}</div><div class="strip">{spans}</div>'


def memory_layout_html(steps: Sequence[ShapeStep]) -> str:
    """How the heads sit in memory at three moments: in ``qkv``, in ``context``, and in ``concat``.

    Each coloured block stands for ``d_head`` consecutive numbers, coloured by head and labelled by
    part and token (``q2`` = the query of token 2). Blocks are listed in memory order, computed from each
    array's data pointer and strides. Only batch element 0 is shown; the others follow it.

    Parameters
    ----------
    steps : list of mha.lab.shapes.ShapeStep
        From :func:`mha.lab.shapes.trace_layer`; needs the steps ``qkv``, ``q_heads``, ``k_heads``,
        ``v_heads``, ``context`` and ``concat``.

    Returns
    -------
    str

    Examples
    --------
    >>> from mha.lab.shapes import trace_shapes
    >>> page = memory_layout_html(trace_shapes(1, 2, 8, 2))
    >>> page.count("<span")  # legend 2 + qkv 2 heads x 2 tokens x 3 + context 4 + concat 4
    22
    """
    by_name = {s.name: s for s in steps}
    missing = {"qkv", "q_heads", "k_heads", "v_heads", "context", "concat"} - set(by_name)
    if missing:
        raise ValueError(f"steps lack {sorted(missing)}: pass the output of mha.lab.shapes.trace_layer")
    batch, n_heads, seq, d_head = by_name["q_heads"].shape
    colors = head_colors(n_heads)

    def ordered(arrays_by_part, root):
        blocks = []  # (offset, text, head)
        for part, per_head in arrays_by_part:
            offsets = _block_offsets(per_head, root)[0]  # batch element 0: (n_heads, seq)
            blocks += [(offsets[i, t], f"{part}{t}", i) for i in range(n_heads) for t in range(seq)]
        return [(text, head) for _, text, head in sorted(blocks)]

    qkv = by_name["qkv"].array
    context = by_name["context"].array
    concat = by_name["concat"].array
    concat_heads = concat.reshape(batch, seq, n_heads, d_head).transpose(0, 2, 1, 3)  # a view of concat
    legend = " ".join(f'<span style="background:{c};color:{text_color(c)};padding:0 4px">head {h}</span>'
                      for h, c in enumerate(colors))
    stride_t = by_name["q_heads"].strides[2]
    return (
        f'{_STYLE}<div class="mha-shapes">{legend}'
        + _strip(f"<b>qkv</b> in memory: token by token, each token's q, k, v heads side by side. "
                 f"<b>q_heads</b> is a view: head h's next token is {stride_t} numbers further on.",
                 ordered([(p, by_name[f"{p}_heads"].array) for p in "qkv"], qkv), colors)
        + _strip("<b>context</b> = weights @ v_heads, a new contiguous array: head by head.",
                 ordered([("c", context)], context), colors)
        + _strip("<b>concat</b> = context.transpose(0, 2, 1, 3).reshape(…): a copy, token by token again.",
                 ordered([("c", concat_heads)], concat), colors)
        + "</div>"
    )


def plot_head_assignment(seq: int, d_model: int, n_heads: int) -> Figure:
    """Which head each entry of ``q = x W_q`` lands in: right split next to reshape-without-transpose.

    Rows are tokens, columns features; colour is the head, and the number in each cell is the token
    position the entry takes inside its head. With the right split every head gets a block of columns and
    keeps the tokens apart; with the bug a head gets whole rows, so one "token" of a head mixes features
    of different tokens.

    Parameters
    ----------
    seq, d_model, n_heads : int
        Keep them small (e.g. 4, 8, 2): every cell is drawn and, up to 16 x 16, numbered.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_head_assignment(4, 8, 2)
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['right: reshape, then transpose', 'wrong: reshape only']
    """
    from matplotlib.colors import ListedColormap

    from mha.lab.shapes import head_assignment

    colors = head_colors(n_heads)
    cmap = ListedColormap(colors)
    fig = new_figure(min(14.0, 2.0 + 0.9 * d_model), 1.4 + 0.45 * seq)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, transpose, title in ((axes[0], True, "right: reshape, then transpose"),
                                 (axes[1], False, "wrong: reshape only")):
        head, slot = head_assignment(seq, d_model, n_heads, transpose=transpose)
        image = ax.imshow(head, cmap=cmap, vmin=-0.5, vmax=n_heads - 0.5, interpolation="nearest",
                          aspect="auto")
        if seq * d_model <= 256:
            for (t, f), s in np.ndenumerate(slot):
                ax.text(f, t, str(s), ha="center", va="center", fontsize=8,
                        color=text_color(colors[head[t, f]]))
        ax.set_title(title)
        ax.set_xlabel("feature of q = x W_q")
        ax.set_xticks(range(0, d_model, max(1, d_model // 8)))
        ax.set_yticks(range(seq))
    axes[0].set_ylabel("token")
    bar = fig.colorbar(image, ax=axes, ticks=range(n_heads), label="head", shrink=0.9)
    bar.ax.set_yticklabels([str(i) for i in range(n_heads)])
    fig.suptitle("Which head gets each number (cell text: its token position inside that head)")
    return fig


#: The narrowest a matrix panel gets (inches): its 10-pt labels stay apart.
MIN_PANEL_IN = 1.4


def _matrix_panels(panels, *, tokens_rows, tokens_cols, xlabel, ylabel, cmap, vmax, colorbar_label,
                   colorbar_ticks=None, title=None):
    """Matrices sharing axes labels and one colour bar, as many side by side as fit the column (further
    rows below). ``panels`` is [(title, 2-D array), ...]."""
    panels = [(str(name), np.asarray(matrix, dtype=float)) for name, matrix in panels]
    if not panels or any(m.ndim != 2 for _, m in panels):
        raise ValueError("panels must be a non-empty list of (title, 2-D array) pairs")
    rows, cols = panels[0][1].shape
    if any(m.shape != (rows, cols) for _, m in panels):
        raise ValueError(f"all panels must share one shape, got {[m.shape for _, m in panels]}")
    for tokens, size, name in ((tokens_rows, rows, "row"), (tokens_cols, cols, "column")):
        if tokens is not None and len(tokens) != size:
            raise ValueError(f"{len(tokens)} {name} labels for {size} {name}s")
    # Inches: each panel with its gap, and the room of the row labels and the colour bar; a panel is at
    # least MIN_PANEL_IN wide, so that 10-pt labels keep apart, and the rows take the column's width.
    room, gap, labels = MAX_WIDTH_IN - 1.6, 0.3, 1.3
    per_row = min(len(panels), max(1, int(room // (MIN_PANEL_IN + gap))))
    side = min(3.2, 1.2 + 0.25 * max(rows, cols), room / per_row - gap)
    nrows = math.ceil(len(panels) / per_row)
    fig = new_figure(per_row * (side + gap) + 1.6, nrows * (side + labels) + (0.5 if title else 0.0))
    grid = fig.subplots(nrows, per_row, squeeze=False, sharex=True, sharey=True)
    axes = grid.ravel()[:len(panels)]
    for ax in grid.ravel()[len(panels):]:
        ax.set_visible(False)
    for ax, (name, matrix) in zip(axes, panels, strict=True):
        image = ax.imshow(matrix, cmap=cmap, vmin=0.0, vmax=vmax, interpolation="nearest", aspect="auto")
        ax.set_title(name, fontsize=10)
        ax.set_xticks(range(cols), labels=tokens_cols if tokens_cols is not None else range(cols),
                      rotation=90 if tokens_cols is not None else 0)
        ax.set_yticks(range(rows), labels=tokens_rows if tokens_rows is not None else range(rows))
        ax.set_xlabel(xlabel)
        ax.tick_params(labelbottom=True)  # every panel says which key is which: rows may differ
    for ax in grid[:, 0]:
        ax.set_ylabel(ylabel)
    bar = fig.colorbar(image, ax=list(grid.ravel()), label=colorbar_label, ticks=colorbar_ticks,
                       shrink=0.85)
    if title:
        fig.suptitle(title)
    return fig, bar


def plot_influence(panels: Sequence[tuple[str, ArrayLike]], tokens: Sequence[str] | None = None, *,
                   title: str | None = None) -> Figure:
    """Token-influence matrices (see :func:`mha.lab.shapes.token_influence`) side by side.

    Parameters
    ----------
    panels : list of (str, array_like of shape (seq, seq))
        A title and an influence matrix per panel, e.g. the right layer and a buggy one.
    tokens : sequence of str, optional
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_influence([("causal", np.tril(np.ones((3, 3))))], ["a", "b", "c"])
    >>> fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()
    ('input token changed', 'output token')
    """
    fig, _ = _matrix_panels(panels, tokens_rows=tokens, tokens_cols=tokens, xlabel="input token changed",
                            ylabel="output token", cmap=WEIGHTS_CMAP, vmax=1.0,
                            colorbar_label="change of the output (relative)", title=title)
    return fig


def plot_masks(panels: Sequence[tuple[str, ArrayLike]], tokens_q: Sequence[str] | None = None,
               tokens_k: Sequence[str] | None = None, *, title: str | None = None) -> Figure:
    """Boolean masks as (seq_q, seq_k) pictures: bright = may attend, dark = masked.

    Parameters
    ----------
    panels : list of (str, bool array_like of shape (seq_q, seq_k))
    tokens_q, tokens_k : sequence of str, optional
        ``tokens_k`` defaults to ``tokens_q``.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = plot_masks([("causal", np.tri(3, dtype=bool))])
    >>> [t.get_text() for t in fig.axes[-1].get_yticklabels()]
    ['masked', 'may attend']
    """
    fig, bar = _matrix_panels(panels, tokens_rows=tokens_q, tokens_cols=tokens_k if tokens_k else tokens_q,
                              xlabel="key", ylabel="query", cmap=WEIGHTS_CMAP, vmax=1.0,
                              colorbar_label="mask", colorbar_ticks=[0, 1], title=title)
    bar.ax.set_yticklabels(["masked", "may attend"])
    return fig
