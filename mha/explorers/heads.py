"""Widget: the per-head attention maps of a seeded layer, for a choice of heads and sentence length.

The layer is built from the same seed for every number of heads. Its weight matrices have the same shape
whatever ``n_heads`` is (``W_q`` is ``d_model × d_model``), so the sliders cut *the same* projections into
more, narrower heads: what changes between frames is only how the columns are grouped.
"""

from __future__ import annotations

from mha.examples import SENTENCES, tokenize, toy_embeddings

__all__ = ["LONG_TOKENS", "head_weights", "render_heads", "head_explorer"]

#: 32 tokens: four of the lessons' sentences one after the other.
LONG_TOKENS = tuple(w for name in ("animal", "telescope", "keys", "cat") for w in tokenize(SENTENCES[name]))
HEAD_COUNTS = (1, 2, 4, 8)
SEQ_LENS = (4, 8, 16, 32)
D_MODEL = 64


def head_weights(n_heads: int, seq_len: int, *, d_model: int = D_MODEL, seed: int = 0, text: str = ""):
    """Per-head attention weights of a seeded layer on the first ``seq_len`` tokens of ``LONG_TOKENS``.

    Parameters
    ----------
    n_heads : int
        Must divide ``d_model``.
    seq_len : int
        Between 1 and ``len(LONG_TOKENS)``.
    d_model : int, default 64
    seed : int, default 0
        Seeds both the layer's weights and the toy embeddings.
    text : str, optional
        A sentence of the reader's own, used instead of ``LONG_TOKENS`` (its first ``seq_len`` words).

    Returns
    -------
    weights : ndarray, shape (n_heads, seq, seq)
        ``seq = seq_len``, or fewer when ``text`` has fewer words.
    tokens : list of str, length seq

    Examples
    --------
    >>> w, tokens = head_weights(4, 8)
    >>> w.shape, tokens[:3]
    ((4, 8, 8), ['The', 'animal', "didn't"])
    """
    from mha.layers import MultiHeadAttention

    if not 1 <= seq_len <= len(LONG_TOKENS):
        raise ValueError(f"seq_len must lie in [1, {len(LONG_TOKENS)}], got {seq_len!r}")
    tokens = tokenize(text)[:seq_len] if text and text.strip() else list(LONG_TOKENS[:seq_len])
    if not tokens:
        raise ValueError(f"no words in {text!r}: type a sentence")
    layer = MultiHeadAttention(d_model, n_heads, rng=seed)
    x = toy_embeddings(tokens, d_model, seed=seed)  # (seq_len, d_model)
    _, weights = layer(x, return_weights=True)  # weights: (n_heads, seq_len, seq_len)
    return weights, tokens


def render_heads(n_heads: int, seq_len: int, *, d_model: int = D_MODEL, seed: int = 0, text: str = ""):
    """One frame: every head's attention map, via :func:`mha.plotting.plot_heads`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = render_heads(2, 4)
    >>> fig.get_suptitle()
    '2 heads of d_head = 32 (d_model = 64), 4 tokens'
    """
    from mha.plotting.heads import plot_heads

    weights, tokens = head_weights(n_heads, seq_len, d_model=d_model, seed=seed, text=text)
    title = f"{n_heads} head{'s' if n_heads > 1 else ''} of d_head = {d_model // n_heads} " \
            f"(d_model = {d_model}), {len(tokens)} tokens"
    return plot_heads(weights, tokens, title=title)


def head_explorer(*, d_model: int = D_MODEL, seed: int = 0, head_counts=HEAD_COUNTS, seq_lens=SEQ_LENS):
    """Sliders for the number of heads and the sentence length over pre-rendered per-head maps.

    In a running kernel the sliders take any number of heads (up to 64), any length up to 32 tokens and
    any ``d_model`` (8 to 256), and a text box takes a sentence of the reader's own.

    Returns
    -------
    mha.widgets.FrameExplorer

    Examples
    --------
    >>> explorer = head_explorer(head_counts=(1, 2), seq_lens=(4,))
    >>> len(explorer.frames), list(explorer.sliders)
    (2, ['n_heads', 'seq_len'])
    """
    from mha.explorers._live import live_int, live_text
    from mha.widgets import frame_explorer

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
