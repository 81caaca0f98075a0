"""A head's two circuits, read off its weights: where it looks (QK) and what it writes (OV).

Head h of a layer scores query ``x_i`` against key ``x_j`` with ``(x_i W_q,h) · (x_j W_k,h) / √d_head``: one
matrix ``W_QK = W_q,h W_k,hᵀ`` of shape ``(d_model, d_model)`` decides where the head looks. What it adds to
the residual stream from the token it looks at is ``x_j W_v,h W_o,h``: one matrix ``W_OV = W_v,h W_o,h``
decides what it writes. (``W_q,h`` is the head's ``d_head`` columns of ``W_q``; ``W_o,h`` its ``d_head`` rows
of ``W_o``.) Both have rank at most ``d_head``. Multiplied by the model's embeddings they become tables a
reader can check against a job (the style of the transformer-circuits papers and ARENA's exercises):

- the **OV circuit** ``E W_OV U``: row = the token attended to, column = the next-token logit it raises.
  A head that copies what it sees has a bright diagonal.
- the **QK circuit** of a layer-0 head on the positions, ``P W_QK Pᵀ``: row = query position, column =
  key position. A previous-token head peaks just left of the diagonal.
- the **QK circuit** of a later head whose keys carry what an earlier head wrote (K-composition):
  ``E W_QK (E W_OV,prev)ᵀ``: row = the query's token, column = the token *before* the key. An induction head
  has a bright diagonal: it looks for the place after an earlier copy of the current token.

The tables leave the biases out, and not all of them are harmless to leave out. With them, a score is
``(x_i W_q,h + b_q,h) · (x_j W_k,h + b_k,h)``: besides ``x_i W_QK x_jᵀ`` it holds ``x_i W_q,h b_k,hᵀ`` and
``b_q,h · b_k,h``, which are the same for every key of a query (the softmax ignores them), and
``b_q,h W_k,hᵀ x_jᵀ``, which changes from key to key: a preference for some keys whatever the query, which the
QK tables do not show. On the OV side, ``b_v,h W_o,h`` and ``b_o`` add the same vector whatever the head looks
at (its weights sum to 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mha.typing import ArrayLike
from mha.validation import check_int

if TYPE_CHECKING:  # names for the annotations only: not imported at run time
    from mha.lab.models import AttentionOnlyModel
    from mha.layers import MultiHeadAttention

__all__ = ["HeadCircuits", "argmax_share", "head_circuits", "ov_circuit", "qk_circuit"]


def _slices(layer: MultiHeadAttention, head: int) -> slice:
    head = check_int(head, "head")
    if not 0 <= head < layer.n_heads:
        raise ValueError(f"head must lie in [0, {layer.n_heads}), got {head}")
    if getattr(layer, "n_kv_heads", layer.n_heads) != layer.n_heads:
        raise ValueError("circuits are read per head: the layer must have one key/value head per query head")
    d = layer.d_head
    return slice(head * d, (head + 1) * d)


def qk_circuit(layer: MultiHeadAttention, head: int) -> np.ndarray:
    """``W_q,h @ W_k,hᵀ``, shape (d_model, d_model): ``x_i @ W_QK @ x_j`` is head h's raw score (no biases).

    Examples
    --------
    >>> import mha
    >>> layer = mha.MultiHeadAttention(8, 2, rng=0)
    >>> qk_circuit(layer, 1).shape, int(np.linalg.matrix_rank(qk_circuit(layer, 1)))
    ((8, 8), 4)
    """
    h = _slices(layer, head)
    # (d_model, d_head) @ (d_head, d_model)
    return np.asarray(layer.W_q)[:, h] @ np.asarray(layer.W_k)[:, h].T


def ov_circuit(layer: MultiHeadAttention, head: int) -> np.ndarray:
    """``W_v,h @ W_o,h``, shape (d_model, d_model): what head h writes for each unit of weight on ``x_j``.

    Examples
    --------
    >>> import mha
    >>> layer = mha.MultiHeadAttention(8, 2, rng=0)
    >>> x = np.random.default_rng(1).standard_normal((1, 3, 8))
    >>> weights = np.zeros((1, 2, 3, 3)); weights[0, 1, :, 0] = 1.0  # head 1 looks at token 0 only
    >>> v = layer.W_v[:, 4:]; out = x[0, 0] @ v @ layer.W_o[4:]
    >>> bool(np.allclose(x[0, 0] @ ov_circuit(layer, 1), out))
    True
    """
    h = _slices(layer, head)
    # (d_model, d_head) @ (d_head, d_model)
    return np.asarray(layer.W_v)[:, h] @ np.asarray(layer.W_o)[h, :]


@dataclass(frozen=True)
class HeadCircuits:
    """The QK and OV circuits of one head, as tables over tokens (or positions).

    Attributes
    ----------
    layer, head : int
    qk : ndarray, shape (n_queries, n_keys)
        Scores (divided by √d_head, no biases).
    qk_rows, qk_cols : str
        What the rows and columns of ``qk`` are ("query position", "token before the key", ...).
    ov : ndarray, shape (vocab_size, vocab_size)
        Logits added per unit of weight: row = token attended to, column = logit raised.
    causal_qk : bool
        Whether ``qk`` is over positions, where a query sees only keys at or before it.
    """

    layer: int
    head: int
    qk: np.ndarray
    qk_rows: str
    qk_cols: str
    ov: np.ndarray
    causal_qk: bool


def head_circuits(model: AttentionOnlyModel, layer: int, head: int, *,
                  previous: int | None = None) -> HeadCircuits:
    """QK and OV circuits of head ``head`` of ``model.layers[layer]``, drawn on the model's own embeddings.

    Parameters
    ----------
    model : AttentionOnlyModel
        With ``token_embedding`` (vocab, d_model), ``position_embedding`` (seq, d_model), ``layers`` and
        ``unembedding`` (d_model, vocab).
    layer, head : int
    previous : int, optional
        For a layer after the first: the head of the layer before whose output the keys carry
        (K-composition; e.g. the previous-token head). Without it a later layer's QK circuit is drawn on
        the token embeddings, a layer-0 head's on the positions.

    Returns
    -------
    HeadCircuits

    Examples
    --------
    >>> from mha.lab import AttentionOnlyModel
    >>> model = AttentionOnlyModel(vocab_size=6, seq_len=5, d_model=8, n_heads=2, rng=0)
    >>> first, second = head_circuits(model, 0, 1), head_circuits(model, 1, 0, previous=1)
    >>> first.qk.shape, first.qk_cols, second.qk.shape, second.qk_cols, second.ov.shape
    ((5, 5), 'key position', (6, 6), 'token before the key', (6, 6))
    """
    layer = check_int(layer, "layer")
    if not 0 <= layer < len(model.layers):
        raise ValueError(f"layer must lie in [0, {len(model.layers)}), got {layer}")
    attention = model.layers[layer]
    tokens = np.asarray(model.token_embedding, dtype=np.float64)  # (vocab, d_model)
    qk = qk_circuit(attention, head) / math.sqrt(attention.d_head)  # (d_model, d_model)
    if previous is not None:
        if layer == 0:
            raise ValueError("layer 0 reads no earlier head: leave previous=None")
        # (vocab, d_model): what the earlier head writes into a key's position for each token it reads
        written = tokens @ ov_circuit(model.layers[layer - 1], previous)
        table, rows, cols, causal = tokens @ qk @ written.T, "query token", "token before the key", False
    elif layer == 0:
        positions = np.asarray(model.position_embedding, dtype=np.float64)  # (seq, d_model)
        table, rows, cols, causal = positions @ qk @ positions.T, "query position", "key position", True
    else:
        table, rows, cols, causal = tokens @ qk @ tokens.T, "query token", "key token", False
    unembedding = np.asarray(model.unembedding, dtype=np.float64)  # (d_model, vocab)
    ov = tokens @ ov_circuit(attention, head) @ unembedding  # (vocab, vocab)
    return HeadCircuits(layer, check_int(head, "head"), table, rows, cols, ov, causal)


def argmax_share(table: ArrayLike, *, offset: int = 0, causal: bool = False) -> float:
    """The share of rows whose largest entry sits at column ``row + offset``.

    With ``causal``, row i competes only over columns ``0 .. i`` (a causal head's keys), and rows with no
    column at ``i + offset`` are left out. A diagonal table scores 1; a random one about ``1 / n_columns``.

    Examples
    --------
    >>> argmax_share(np.eye(4))
    1.0
    >>> argmax_share(np.eye(5, k=-1) + 0.1, offset=-1, causal=True)  # a previous-token pattern
    1.0
    """
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or not np.isfinite(table).all():
        raise ValueError(f"table must be a finite 2-D array, got shape {table.shape}")
    n_rows, n_cols = table.shape
    rows = [i for i in range(n_rows) if 0 <= i + offset < n_cols]
    if not rows:
        raise ValueError(f"no row of a {table.shape} table has a column at offset {offset}")
    if causal:
        hits = [int(np.argmax(table[i, :min(i + 1, n_cols)])) == i + offset for i in rows]
    else:
        hits = [int(np.argmax(table[i])) == i + offset for i in rows]
    return float(np.mean(hits))
