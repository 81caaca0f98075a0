"""What :class:`~mha.pretrained.encoder.Encoder` returns: one text's :class:`Encoding`, several texts'
:class:`BatchEncoding` (padded on the right), with the sentence-embedding pooling of all-MiniLM-L6-v2."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Encoding", "BatchEncoding"]


@dataclass(frozen=True)
class Encoding:
    """What the encoder made of one text.

    Attributes
    ----------
    tokens : list of str
        Word pieces, with BERT's ``[CLS]`` first and ``[SEP]`` last.
    ids : ndarray of int64, shape (seq,)
    hidden : ndarray, shape (seq, d_model)
        The last layer's output, one vector per token.
    attentions : ndarray, shape (n_layers, n_heads, seq, seq)
        Every head's attention weights (rows: queries, columns: keys; each row sums to 1).
    queries, keys : ndarray, shape (n_layers, n_heads, seq, d_head), or None
        Every head's queries and keys (with their biases), from which ``attentions`` is the softmax of
        ``queries @ keys.T / sqrt(d_head)``. Kept by ``encoder(text)``; None from a batch encoded without
        ``return_queries_keys=True``.
    """

    tokens: list[str]
    ids: np.ndarray
    hidden: np.ndarray
    attentions: np.ndarray | None
    queries: np.ndarray | None = None
    keys: np.ndarray | None = None

    def index(self, token: str, occurrence: int = 0) -> int:
        """Position of ``token`` (its ``occurrence``-th appearance, from 0) in :attr:`tokens`."""
        positions = [i for i, t in enumerate(self.tokens) if t == token]
        if len(positions) <= occurrence:
            raise ValueError(f"token {token!r} appears {len(positions)} time(s) in {self.tokens}; "
                             f"asked for occurrence {occurrence}")
        return positions[occurrence]

    def sentence_embedding(self, *, normalize: bool = True) -> np.ndarray:
        """Mean of the token vectors (all-MiniLM-L6-v2's pooling), unit length by default: ``(d_model,)``."""
        pooled = self.hidden.mean(axis=0)
        return pooled / np.linalg.norm(pooled) if normalize else pooled


@dataclass(frozen=True)
class BatchEncoding:
    """Several texts encoded together, padded on the right to the longest.

    Attributes
    ----------
    tokens : list of list of str
        Each text's word pieces, unpadded.
    ids : ndarray of int64, shape (batch, seq)
    mask : ndarray of bool, shape (batch, seq)
        True for real tokens, False for padding.
    special : ndarray of bool, shape (batch, seq)
        True for the tokenizer's special tokens (``[CLS]``, ``[SEP]``).
    hidden : ndarray, shape (batch, seq, d_model)
    attentions : ndarray, shape (batch, n_layers, n_heads, seq, seq) or None
        No padded key ever gets weight.
    queries, keys : ndarray, shape (batch, n_layers, n_heads, seq, d_head), or None
        Only with ``return_queries_keys=True``.
    """

    tokens: list[list[str]]
    ids: np.ndarray
    mask: np.ndarray
    special: np.ndarray
    hidden: np.ndarray
    attentions: np.ndarray | None
    queries: np.ndarray | None = None
    keys: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.tokens)

    def __getitem__(self, i: int) -> Encoding:
        """Text ``i`` alone, padding cut off."""
        n = len(self.tokens[i])
        attentions = None if self.attentions is None else self.attentions[i, :, :, :n, :n]
        queries, keys = (None if a is None else a[i, :, :, :n] for a in (self.queries, self.keys))
        return Encoding(self.tokens[i], self.ids[i, :n], self.hidden[i, :n], attentions, queries, keys)

    def sentence_embeddings(self, *, normalize: bool = True) -> np.ndarray:
        """Mean of each text's real token vectors, unit length by default: ``(batch, d_model)``."""
        weights = self.mask.astype(self.hidden.dtype)  # (batch, seq)
        pooled = np.einsum("bs,bsd->bd", weights, self.hidden) / weights.sum(axis=1, keepdims=True)
        if normalize:
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled
