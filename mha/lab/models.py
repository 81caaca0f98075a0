"""What the lab's three models share: token checks, embeddings, head masks, readout and the loss.

:class:`~mha.lab.AttentionOnlyModel` (the heads that learn), :class:`~mha.lab.TinyGPT` (a tiny GPT) and
:class:`~mha.lab.Seq2Seq` (a tiny encoder-decoder) each write their forward pass once, as
``forward(...) -> (logits, cache)``, and its backward pass once, as ``backward(d_logits, cache) -> grads``.
Everything else is here, written once: calling a model is its forward pass without the cache; training
(:func:`mha.lab.train`) takes :meth:`LanguageModel.loss_grads_and_logits`, which is the forward pass, the
cross-entropy and the backward pass.
"""

from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple, Protocol, overload

import numpy as np

from mha.grad import cross_entropy, embedding_backward, multi_head_backward
from mha.layers import MultiHeadAttention
from mha.module import Module, linear
from mha.typing import ArrayLike, BoolArray, DTypeLike, FloatArray, IntArray, Seed
from mha.validation import as_float_array, as_generator, check_dtype_argument, check_positive_int

__all__ = ["LanguageModel", "CausalLanguageModel", "AttentionOnlyModel", "ModelCache", "check_token_batch",
           "layer_head_masks"]


class LabelledBatch(Protocol):
    """What the loss reads from a batch: next-token (or answer) ``targets`` and where they count."""

    @property
    def targets(self) -> IntArray: ...  # (batch, seq)
    @property
    def loss_mask(self) -> BoolArray: ...  # (batch, seq)


class ModelCache(NamedTuple):
    """What a model's forward pass keeps for its backward pass.

    ``layers`` holds one cache per attention layer or block, in order (a
    :class:`mha.layers.LayerCache` or a :class:`mha.block.BlockCache`); ``parts`` whatever else the model
    needs (``"stream"``: the residual stream before the readout, ``"norm"``: the final norm's cache ...).
    """

    tokens: IntArray  # (batch, seq): the checked tokens (the decoder's, for an encoder-decoder)
    layers: list[Any]
    parts: dict[str, Any]


def check_token_batch(tokens: ArrayLike, vocab_size: int, max_len: int, limit_name: str) -> IntArray:
    """``tokens`` as integer ids of shape (batch, seq) with 1 <= seq <= ``max_len``, or a ValueError.

    ``limit_name`` names the model's length limit in the message (``"seq_len"``, ``"context"``).

    Examples
    --------
    >>> check_token_batch([[1, 2, 3]], 4, 8, "context").shape
    (1, 3)
    >>> check_token_batch([[1, 2, 9]], 4, 8, "context")
    Traceback (most recent call last):
    ...
    ValueError: token ids must lie in [0, 4), got [1, 9]
    """
    tokens = np.asarray(tokens)
    if tokens.dtype.kind not in "iu" or tokens.ndim != 2:
        raise ValueError(f"tokens must be integers of shape (batch, seq), got {tokens.dtype} "
                         f"{tokens.shape}")
    if not 1 <= tokens.shape[1] <= max_len:
        raise ValueError(f"sequences must have 1 to {limit_name}={max_len} tokens, got {tokens.shape[1]}")
    if tokens.min() < 0 or tokens.max() >= vocab_size:
        raise ValueError(f"token ids must lie in [0, {vocab_size}), got [{tokens.min()}, "
                         f"{tokens.max()}]")
    return tokens


def layer_head_masks(head_mask: ArrayLike | None, n_layers: int, n_heads: int, dtype: DTypeLike
                     ) -> list[FloatArray | None]:
    """One ``(n_heads,)`` head mask per layer from an ``(n_layers, n_heads)`` array (None: none).

    Examples
    --------
    >>> [m.tolist() for m in layer_head_masks([[1, 0], [1, 1]], 2, 2, np.float32)]
    [[1.0, 0.0], [1.0, 1.0]]
    >>> layer_head_masks(None, 2, 2, np.float32)
    [None, None]
    """
    if head_mask is None:
        return [None] * n_layers
    head_mask = as_float_array(head_mask, "head_mask").astype(dtype)
    if head_mask.shape != (n_layers, n_heads):
        raise ValueError(f"head_mask must have shape (n_layers, n_heads) = ({n_layers}, "
                         f"{n_heads}), got {head_mask.shape}")
    return list(head_mask)


class LanguageModel(Module):
    """The base of the lab's models: embeddings, head masks, readout, and the loss and its gradients.

    A model sets ``vocab_size``, ``d_model``, ``n_layers``, ``n_heads``, ``dtype``, ``token_embedding``
    ``(vocab_size, d_model)``, ``position_embedding`` ``(max_len, d_model)`` (None when positions enter
    elsewhere) and ``unembedding`` ``(d_model, vocab_size)`` (None when the readout is tied to the token
    embedding), and writes its forward pass (``forward``), :meth:`forward_batch` and :meth:`backward`.
    """

    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    dtype: np.dtype[Any]
    token_embedding: FloatArray
    position_embedding: FloatArray | None
    unembedding: FloatArray | None

    def forward_batch(self, batch: Any) -> tuple[FloatArray, ModelCache]:
        """The model's forward pass on a training batch's inputs: ``(logits, cache)``."""
        raise NotImplementedError

    def backward(self, d_logits: FloatArray, cache: ModelCache) -> dict[str, FloatArray]:
        """The gradient of every parameter (named as :meth:`parameters` names them) from ``d_logits``."""
        raise NotImplementedError

    def head_masks(self, head_mask: ArrayLike | None) -> list[FloatArray | None]:
        """One ``(n_heads,)`` head mask per layer (or None each) from an ``(n_layers, n_heads)`` array."""
        return layer_head_masks(head_mask, self.n_layers, self.n_heads, self.dtype)

    def embed(self, tokens: IntArray, start: int = 0, *, positions: FloatArray | None = None) -> FloatArray:
        """The residual stream a model starts from: each token's vector plus its position's.

        Parameters
        ----------
        tokens : int ndarray, shape (batch, seq), checked
        start : int, default 0
            Position of the first token (a decoding step's).
        positions : ndarray, shape (max_len, d_model), optional
            The position table; ``position_embedding`` by default (none when that is None).

        Returns
        -------
        ndarray, shape (batch, seq, d_model)
        """
        table = self.position_embedding if positions is None else positions
        if table is None:  # rotary: positions enter inside attention
            embedded: FloatArray = self.token_embedding[tokens]  # (batch, seq, d_model)
            return embedded
        return self.token_embedding[tokens] + table[start:start + tokens.shape[1]]  # (batch, seq, d_model)

    @property
    def readout_weights(self) -> FloatArray:
        """The readout matrix ``(d_model, vocab_size)``: the token embedding itself when tied."""
        return self.token_embedding.T if self.unembedding is None else self.unembedding

    def readout(self, normed: FloatArray) -> FloatArray:
        """Logits ``(batch, seq, vocab_size)`` from the final (normalised) stream: ``normed @ W``."""
        return linear(normed, self.readout_weights)

    def position_gradient(self, d_stream: FloatArray, table: FloatArray) -> FloatArray:
        """A position table's gradient from the stream's ``(batch, seq, d_model)``; 0 past ``seq``."""
        d_positions = np.zeros_like(table)
        d_positions[:d_stream.shape[1]] = d_stream.sum(axis=0)
        return d_positions

    def token_gradient(self, d_stream: FloatArray, tokens: IntArray) -> FloatArray:
        """The token table's gradient from the stream's: a token used twice collects both."""
        return embedding_backward(d_stream, tokens, self.vocab_size)  # (vocab_size, d_model)

    def loss_and_grads(self, batch: LabelledBatch) -> tuple[float, dict[str, FloatArray]]:
        """Mean cross-entropy on ``batch`` (where ``batch.loss_mask``) and its gradient for each parameter."""
        loss, grads, _ = self.loss_grads_and_logits(batch)
        return loss, grads

    def loss_grads_and_logits(self, batch: LabelledBatch) -> tuple[float, dict[str, FloatArray], FloatArray]:
        """:meth:`loss_and_grads` and the logits of the same forward pass (what :func:`train` records)."""
        logits, cache = self.forward_batch(batch)
        loss, d_logits = cross_entropy(logits, batch.targets, batch.loss_mask)
        return loss, self.backward(d_logits, cache), logits


class CausalLanguageModel(LanguageModel):
    """A decoder-only model: causal layers over ``tokens``; calling it gives next-token logits."""

    def forward(self, tokens: ArrayLike, *, head_mask: ArrayLike | None = None,
                mask: ArrayLike | None = None) -> tuple[FloatArray, ModelCache]:
        """The logits ``(batch, seq, vocab_size)`` for ``tokens`` ``(batch, seq)``, and the cache."""
        raise NotImplementedError

    def check_tokens(self, tokens: ArrayLike) -> IntArray:
        """``tokens`` as an integer array of shape (batch, seq), or a ValueError naming what is wrong."""
        raise NotImplementedError

    def attention_weights(self, cache: ModelCache) -> list[FloatArray]:
        """Every layer's attention weights, each ``(batch, n_heads, seq, seq)``, from a forward cache."""
        return [layer.parts["attention"].weights for layer in cache.layers]

    def forward_batch(self, batch: Any) -> tuple[FloatArray, ModelCache]:
        """:meth:`forward` on a batch's ``tokens``."""
        return self.forward(batch.tokens)

    @overload
    def __call__(self, tokens: ArrayLike, *, head_mask: ArrayLike | None = ..., mask: ArrayLike | None = ...,
                 return_weights: Literal[False] = ...) -> FloatArray: ...
    @overload
    def __call__(self, tokens: ArrayLike, *, head_mask: ArrayLike | None = ..., mask: ArrayLike | None = ...,
                 return_weights: Literal[True]) -> tuple[FloatArray, list[FloatArray]]: ...
    def __call__(self, tokens: ArrayLike, *, head_mask: ArrayLike | None = None,
                 mask: ArrayLike | None = None, return_weights: bool = False
                 ) -> FloatArray | tuple[FloatArray, list[FloatArray]]:
        """Next-token logits at every position: :meth:`forward` without the cache.

        Parameters
        ----------
        tokens : int array_like, shape (batch, seq)
        head_mask : array_like, shape (n_layers, n_heads), optional
            Multiplies each head's output; 0 removes a head (ablation).
        mask : bool array_like, shape (seq, seq), optional
            Narrows every layer's causal attention further, e.g. :func:`mha.sliding_window_mask`.
        return_weights : bool, default False
            Also return every layer's attention weights.

        Returns
        -------
        logits : ndarray, shape (batch, seq, vocab_size)
        weights : list of ndarray, each (batch, n_heads, seq, seq)
            One per layer, only with ``return_weights=True``.

        Raises
        ------
        ValueError
            If ``tokens`` are not integer ids in ``[0, vocab_size)`` of shape ``(batch, seq)`` within the
            model's length, or ``head_mask`` is not ``(n_layers, n_heads)``.
        """
        logits, cache = self.forward(tokens, head_mask=head_mask, mask=mask)
        return (logits, self.attention_weights(cache)) if return_weights else logits


class AttentionOnlyModel(CausalLanguageModel):
    """Token and position embeddings, causal attention layers with residual connections, a linear readout.

    Parameters
    ----------
    vocab_size : int
    seq_len : int
        Longest sequence the model reads (one learned position embedding per position).
    d_model : int, default 32
    n_heads : int, default 4
        Heads per layer.
    n_layers : int, default 2
    rng : numpy.random.Generator or int
        Source of the initial weights.
    dtype : np.float32 or np.float64, default np.float32

    Attributes
    ----------
    token_embedding : ndarray, shape (vocab_size, d_model)
    position_embedding : ndarray, shape (seq_len, d_model)
    layers : list of MultiHeadAttention
    unembedding : ndarray, shape (d_model, vocab_size)

    Examples
    --------
    >>> model = AttentionOnlyModel(vocab_size=10, seq_len=12, d_model=16, n_heads=2, rng=0)
    >>> logits, weights = model(np.zeros((3, 12), dtype=int), return_weights=True)
    >>> logits.shape, len(weights), weights[0].shape
    ((3, 12, 10), 2, (3, 2, 12, 12))
    """

    position_embedding: FloatArray  # always: learned positions
    unembedding: FloatArray  # always: its own readout matrix

    def __init__(self, vocab_size: int, seq_len: int, d_model: int = 32, n_heads: int = 4, n_layers: int = 2,
                 *, rng: Seed, dtype: DTypeLike = np.float32) -> None:
        self.vocab_size = check_positive_int(vocab_size, "vocab_size")
        self.seq_len = check_positive_int(seq_len, "seq_len")
        self.n_layers = check_positive_int(n_layers, "n_layers")
        self.dtype = check_dtype_argument(dtype)
        rng = as_generator(rng)
        d_model = check_positive_int(d_model, "d_model")
        self.token_embedding = rng.standard_normal((vocab_size, d_model)).astype(self.dtype)
        self.position_embedding = rng.standard_normal((seq_len, d_model)).astype(self.dtype)
        self.layers = [MultiHeadAttention(d_model, n_heads, rng=rng, dtype=self.dtype)
                       for _ in range(n_layers)]
        readout = rng.standard_normal((d_model, vocab_size)) / math.sqrt(d_model)  # logits of unit scale
        self.unembedding = readout.astype(self.dtype)
        self.d_model, self.n_heads = d_model, self.layers[0].n_heads

    @property  # computed: the arrays live in named attributes
    def _params(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        return {"token_embedding": self.token_embedding, "position_embedding": self.position_embedding,
                "unembedding": self.unembedding}

    def submodules(self) -> dict[str, Module]:
        """The attention layers, named ``layers.0``, ``layers.1``, ... (so ``layers.0.W_q``)."""
        return {f"layers.{i}": layer for i, layer in enumerate(self.layers)}

    def check_tokens(self, tokens: ArrayLike) -> IntArray:
        """``tokens`` as an integer array of shape (batch, seq), or a ValueError naming what is wrong."""
        return check_token_batch(tokens, self.vocab_size, self.seq_len, "seq_len")

    def forward(self, tokens: ArrayLike, *, head_mask: ArrayLike | None = None,
                mask: ArrayLike | None = None) -> tuple[FloatArray, ModelCache]:
        """Next-token logits for every position, and what the backward pass needs.

        Parameters
        ----------
        tokens : int array_like, shape (batch, seq)
        head_mask : array_like, shape (n_layers, n_heads), optional
            Multiplies each head's output; 0 removes a head (ablation).
        mask : bool array_like, shape (seq, seq), optional
            Narrows every layer's causal attention further.

        Returns
        -------
        logits : ndarray, shape (batch, seq, vocab_size)
        cache : ModelCache
            Every layer's cache (``cache.layers``) and the final residual stream.
        """
        tokens = self.check_tokens(tokens)
        r = self.embed(tokens)  # (batch, seq, d_model), the residual stream
        caches = []
        for layer, layer_head_mask in zip(self.layers, self.head_masks(head_mask), strict=True):
            out, cache = layer.forward(r, mask=mask, causal=True, head_mask=layer_head_mask)
            r = r + out
            caches.append(cache)
        logits = r @ self.unembedding  # (batch, seq, vocab_size)
        return logits, ModelCache(tokens, caches, {"stream": r})

    def attention_weights(self, cache: ModelCache) -> list[FloatArray]:
        """Every layer's attention weights, each ``(batch, n_heads, seq, seq)``, from a forward cache."""
        return [layer.weights for layer in cache.layers]

    def backward(self, d_logits: FloatArray, cache: ModelCache) -> dict[str, FloatArray]:
        """Every parameter's gradient from the logits' (``d_logits``, shaped like the logits)."""
        r = cache.parts["stream"]
        grads = {"unembedding": r.reshape(-1, self.d_model).T @ d_logits.reshape(-1, self.vocab_size)}
        d_r = d_logits @ self.unembedding.T  # (batch, seq, d_model)
        for i in reversed(range(self.n_layers)):
            layer_grads, d_input, _, _ = multi_head_backward(d_r, cache.layers[i])
            grads.update({f"layers.{i}.{name}": g for name, g in layer_grads.items()})
            d_r = d_r + d_input  # the residual path and the path through the layer
        grads["token_embedding"] = self.token_gradient(d_r, cache.tokens)
        grads["position_embedding"] = self.position_gradient(d_r, self.position_embedding)
        return grads
