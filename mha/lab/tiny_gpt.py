"""A tiny character-level GPT built from the package's own blocks, trained with its own backward passes.

Token and position embeddings, pre-norm :class:`mha.TransformerBlock` s with causal attention, a final
layer norm, and an output layer that reuses the token embedding (*tied*: ``logits = r @ Eᵀ``) or has its
own matrix. With ``positions="rotary"`` the blocks rotate queries and keys instead
(:class:`mha.ModernAttention`, which also takes QK-norm and soft-capping), and the model reads sequences of
any length. :func:`mha.lab.training.train` trains it (Adam, a warm-up and cosine schedule, one BLAS
thread so that every run gives the same numbers); :func:`generate` writes with the KV cache.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np

from mha.efficient import KVCache
from mha.grad import block_backward, layer_norm_backward
from mha.grad.loss import log_softmax
from mha.lab.models import CausalLanguageModel, ModelCache, check_token_batch
from mha.lab.tasks import Batch
from mha.lab.transformer_block import build_stack
from mha.module import Module, linear
from mha.normalization import LayerNorm
from mha.typing import ArrayLike, DTypeLike, FloatArray, IntArray, Seed
from mha.validation import as_float_array, as_generator, check_dtype_argument, check_positive_int
from mha.variants import ModernAttention

__all__ = ["TinyGPT", "sample_next", "generate", "per_position_loss"]


class TinyGPT(CausalLanguageModel):
    """A decoder-only transformer over characters.

    Parameters
    ----------
    vocab_size : int
    context : int
        Longest sequence it reads (one learned position embedding per position).
    d_model, n_heads, n_layers : int, default 64, 4, 2
    d_ff : int, optional
        Feed-forward width; ``4 * d_model`` by default.
    tied : bool, default True
        Output logits ``r @ token_embeddingᵀ`` (no output matrix of its own).
    activation : {"relu", "gelu", "gelu_exact"}, default "relu"
        Of the feed-forward networks. ReLU (the 2017 paper's) trains as well here and costs a fraction
        of GELU's ``tanh`` in NumPy.
    positions : {"learned", "rotary"}, default "learned"
        A learned vector per position, added to the embeddings (at most ``context`` tokens); or RoPE
        inside every attention layer (no position vectors: any length can be read, ``context`` is the
        training length).
    attention : dict, optional
        Options of :class:`mha.ModernAttention` for every layer (``qk_norm=True``, ``softcap=30.0`` ...);
        implies ModernAttention layers (with ``rope`` from ``positions``).
    rng : numpy.random.Generator or int
    dtype : np.float32 or np.float64, default np.float32

    Examples
    --------
    >>> model = TinyGPT(vocab_size=10, context=8, d_model=16, n_heads=2, rng=0)
    >>> logits, weights = model(np.zeros((3, 8), dtype=int), return_weights=True)
    >>> logits.shape, len(weights), weights[0].shape
    ((3, 8, 10), 2, (3, 2, 8, 8))
    """

    def __init__(self, vocab_size: int, context: int, d_model: int = 64, n_heads: int = 4, n_layers: int = 2,
                 d_ff: int | None = None, *, tied: bool = True, activation: str = "relu",
                 positions: str = "learned", attention: dict[str, Any] | None = None, rng: Seed,
                 dtype: DTypeLike = np.float32) -> None:
        self.vocab_size = check_positive_int(vocab_size, "vocab_size")
        self.context = check_positive_int(context, "context")
        self.n_layers = check_positive_int(n_layers, "n_layers")
        self.d_model = check_positive_int(d_model, "d_model")
        self.dtype = check_dtype_argument(dtype)
        rng = as_generator(rng)
        if positions not in ("learned", "rotary"):
            raise ValueError(f"positions must be 'learned' or 'rotary', got {positions!r}")
        self.positions = positions
        self.token_embedding = (rng.standard_normal((vocab_size, d_model)) * 0.1).astype(self.dtype)
        self.position_embedding = (rng.standard_normal((context, d_model)) * 0.1).astype(self.dtype) \
            if positions == "learned" else None
        self.blocks = build_stack(n_layers, d_model, n_heads, d_ff=d_ff, activation=activation,
                                  scaled_init=True, rng=rng, dtype=self.dtype)
        if positions == "rotary" or attention:
            for block in self.blocks:  # the same weights, the step of a modern layer
                block.attention = ModernAttention.like(block.attention, rope=positions == "rotary",
                                                       **(attention or {}))
        self.n_heads = self.blocks[0].attention.n_heads
        self.norm = LayerNorm(d_model, dtype=self.dtype)
        self.tied = bool(tied)
        self.unembedding = None if tied else \
            (rng.standard_normal((d_model, vocab_size)) / math.sqrt(d_model)).astype(self.dtype)

    @property  # computed: the arrays live in named attributes
    def _params(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        params = {"token_embedding": self.token_embedding}
        if self.position_embedding is not None:
            params["position_embedding"] = self.position_embedding
        return params if self.unembedding is None else {**params, "unembedding": self.unembedding}

    def submodules(self) -> dict[str, Module]:
        """The blocks (``blocks.0``, ...) and the final ``norm``: names such as ``blocks.0.attention.W_q``."""
        return {**{f"blocks.{i}": block for i, block in enumerate(self.blocks)}, "norm": self.norm}

    def check_tokens(self, tokens: ArrayLike) -> IntArray:
        """``tokens`` as an integer array of shape (batch, seq), or a ValueError naming what is wrong."""
        rotary = self.position_embedding is None
        longest = np.iinfo(np.int64).max if rotary else self.context  # rotary: any length
        return check_token_batch(tokens, self.vocab_size, longest, "context")

    def forward(self, tokens: ArrayLike, *, head_mask: ArrayLike | None = None,
                mask: ArrayLike | None = None) -> tuple[FloatArray, ModelCache]:
        """Next-character logits at every position, and what the backward pass needs.

        Parameters
        ----------
        tokens : int array_like, shape (batch, seq)
        head_mask : array_like, shape (n_layers, n_heads), optional
            0 removes a head (ablation).
        mask : bool array_like, shape (seq, seq), optional
            Narrows every layer's causal attention further, e.g. :func:`mha.sliding_window_mask`.

        Returns
        -------
        logits : ndarray, shape (batch, seq, vocab_size)
        cache : ModelCache
            Every block's cache (``cache.layers``) and the final norm's.
        """
        tokens = self.check_tokens(tokens)
        r = self.embed(tokens)  # (batch, seq, d_model), the residual stream
        caches = []
        for block, layer_mask in zip(self.blocks, self.head_masks(head_mask), strict=True):
            r, cache = block.forward(r, mask=mask, causal=True, head_mask=layer_mask)
            caches.append(cache)
        normed, norm_cache = self.norm.forward(r)
        logits = self.readout(normed)  # (batch, seq, vocab_size)
        return logits, ModelCache(tokens, caches, {"normed": normed, "norm": norm_cache})

    def backward(self, d_logits: FloatArray, cache: ModelCache) -> dict[str, FloatArray]:
        """Every parameter's gradient from the logits' (``d_logits``, shaped like the logits)."""
        normed, weights = cache.parts["normed"], self.readout_weights
        d_readout = normed.reshape(-1, self.d_model).T @ d_logits.reshape(-1, self.vocab_size)
        grads = {}
        norm_grads, d_r = layer_norm_backward(linear(d_logits, weights.T), cache.parts["norm"])
        grads.update({f"norm.{name}": g for name, g in norm_grads.items()})
        for i in reversed(range(self.n_layers)):
            block_grads, d_r = block_backward(d_r, cache.layers[i])
            grads.update({f"blocks.{i}.{name}": g for name, g in block_grads.items()})
        d_tokens = self.token_gradient(d_r, cache.tokens)  # (vocab_size, d_model)
        if self.tied:
            d_tokens += d_readout.T  # the table is used twice: as input and as output layer
        else:
            grads["unembedding"] = d_readout
        grads["token_embedding"] = d_tokens
        if self.position_embedding is not None:
            grads["position_embedding"] = self.position_gradient(d_r, self.position_embedding)
        return grads

    # ------------------------------------------------------------------ decoding
    def new_caches(self, batch: int = 1) -> list[KVCache]:
        """One empty KV cache per block, sized for the whole context."""
        return [block.attention.new_cache(batch, capacity=self.context) for block in self.blocks]

    def decode(self, tokens_new: ArrayLike, caches: Sequence[KVCache]) -> FloatArray:
        """Logits for new tokens, reusing the keys and values of the tokens already in ``caches``.

        Parameters
        ----------
        tokens_new : int array_like, shape (batch, n_new)
        caches : list of KVCache
            From :meth:`new_caches`; updated in place.

        Returns
        -------
        ndarray, shape (batch, n_new, vocab_size)

        Raises
        ------
        ValueError
            If the tokens are not ids of this vocabulary, ``caches`` are not one per block, or decoding
            would pass the context of a model with learned positions.
        """
        tokens_new = self.check_tokens(tokens_new)
        if len(caches) != self.n_layers:
            raise ValueError(f"caches must hold one KVCache per block ({self.n_layers}), got {len(caches)}: "
                             "make them with model.new_caches(batch)")
        start = caches[0].length
        if self.position_embedding is not None and start + tokens_new.shape[1] > self.context:
            raise ValueError(f"decoding past the context: {start} cached + {tokens_new.shape[1]} new > "
                             f"{self.context} positions")
        r = self.embed(tokens_new, start)
        for block, cache in zip(self.blocks, caches, strict=True):
            r = block.decode(r, cache)
        return self.readout(self.norm(r))

    def __repr__(self) -> str:
        n = self.parameter_count()
        return (f"TinyGPT(vocab_size={self.vocab_size}, context={self.context}, d_model={self.d_model}, "
                f"n_heads={self.n_heads}, n_layers={self.n_layers}, tied={self.tied}, parameters={n})")


def sample_next(logits: ArrayLike, rng: Seed, *, temperature: float = 1.0,
                top_k: int | None = None) -> np.ndarray:
    """Draw one token per row of ``logits`` (batch, vocab_size).

    ``temperature`` divides the logits (below 1: sharper, above 1: flatter; 0: always the most likely);
    ``top_k`` keeps only the k most likely tokens. One uniform number per row, read through the cumulative
    probabilities, so the same generator state always picks the same tokens.

    Examples
    --------
    >>> logits = np.log(np.array([[0.1, 0.6, 0.3]]))
    >>> sample_next(logits, np.random.default_rng(0), temperature=0).tolist()
    [1]
    >>> draws = [sample_next(logits, np.random.default_rng(s), top_k=2)[0] for s in range(200)]
    >>> sorted({int(d) for d in draws})  # token 0 is outside the top 2
    [1, 2]
    """
    logits = as_float_array(logits, "logits")
    if logits.ndim != 2:
        raise ValueError(f"logits must have shape (batch, vocab_size), got {logits.shape}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and not 1 <= top_k <= logits.shape[1]:
        raise ValueError(f"top_k must lie in [1, vocab_size={logits.shape[1]}], got {top_k}")
    u = as_generator(rng).random(logits.shape[0])  # drawn even when greedy: the stream stays aligned
    if temperature == 0:
        return logits.argmax(axis=1)
    logits = logits.astype(np.float64) / temperature
    if top_k is not None:
        kth = np.sort(logits, axis=1)[:, -top_k][:, None]  # (batch, 1)
        logits = np.where(logits >= kth, logits, -np.inf)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    cumulative = np.cumsum(probs, axis=1)  # (batch, vocab_size)
    picked = (cumulative < (u * cumulative[:, -1])[:, None]).sum(axis=1)
    return np.minimum(picked, logits.shape[1] - 1)


@overload
def generate(model: TinyGPT, prompt: ArrayLike, n_new: int, *, rng: Seed, temperature: float = ...,
             top_k: int | None = ..., use_cache: bool = ...,
             return_logits: Literal[False] = ...) -> IntArray: ...
@overload
def generate(model: TinyGPT, prompt: ArrayLike, n_new: int, *, rng: Seed, temperature: float = ...,
             top_k: int | None = ..., use_cache: bool = ...,
             return_logits: Literal[True]) -> tuple[IntArray, FloatArray]: ...
def generate(model: TinyGPT, prompt: ArrayLike, n_new: int, *, rng: Seed, temperature: float = 1.0,
             top_k: int | None = None, use_cache: bool = True,
             return_logits: bool = False) -> IntArray | tuple[IntArray, FloatArray]:
    """Continue ``prompt`` by ``n_new`` sampled tokens, with the KV cache or by full recomputation.

    The model sees at most ``model.context`` tokens. When the window is full, it restarts from the last
    ``context // 2`` tokens: the cache is emptied and refilled with them in one pass (without the cache,
    the same window is recomputed). Both paths see the same tokens, so they write the same text.

    Parameters
    ----------
    model : TinyGPT
    prompt : int array_like, shape (batch, seq_prompt)
        At most ``model.context`` tokens.
    n_new : int
    rng : numpy.random.Generator or int
    temperature, top_k
        See :func:`sample_next`.
    use_cache : bool, default True
        Feed each new token alone through the cached keys and values (one position of work per token);
        False reruns the whole window every step.
    return_logits : bool, default False
        Also return the logits each new token was drawn from, shape (batch, n_new, vocab_size).

    Returns
    -------
    tokens : int ndarray, shape (batch, seq_prompt + n_new)

    Examples
    --------
    >>> model = TinyGPT(5, 6, d_model=8, n_heads=2, rng=0)
    >>> a = generate(model, [[1, 2]], 9, rng=3)
    >>> b = generate(model, [[1, 2]], 9, rng=3, use_cache=False)
    >>> a.shape, bool(np.all(a == b))
    ((1, 11), True)
    """
    tokens = model.check_tokens(np.asarray(prompt))
    n_new = check_positive_int(n_new, "n_new")
    rng = as_generator(rng)
    start, step_input, all_logits = 0, tokens, []
    caches = model.new_caches(tokens.shape[0]) if use_cache else None
    for _ in range(n_new):
        if tokens.shape[1] - start == model.context:  # the window is full: keep its second half
            start = tokens.shape[1] - model.context // 2
            if use_cache:
                caches, step_input = model.new_caches(tokens.shape[0]), tokens[:, start:]
        if caches is not None:  # use_cache
            logits = model.decode(step_input, caches)[:, -1]  # (batch, vocab_size)
        else:
            logits = model(tokens[:, start:])[:, -1]
        step_input = sample_next(logits, rng, temperature=temperature, top_k=top_k)[:, None]  # (batch, 1)
        tokens = np.concatenate([tokens, step_input], axis=1)
        all_logits.append(logits)
    return (tokens, np.stack(all_logits, axis=1)) if return_logits else tokens


def per_position_loss(model: TinyGPT, batch: Batch, *, head_mask: ArrayLike | None = None) -> np.ndarray:
    """Cross-entropy at every position, averaged over the batch: shape (seq,), nats.

    Examples
    --------
    >>> model = TinyGPT(4, 6, d_model=8, n_heads=2, rng=0)
    >>> from mha.lab.text import text_windows
    >>> per_position_loss(model, text_windows(np.arange(13) % 4, 6)).shape
    (6,)
    """
    logits = model(batch.tokens, head_mask=head_mask).astype(np.float64)  # (batch, seq, vocab_size)
    log_probs = log_softmax(logits)  # (batch, seq, vocab_size)
    picked = np.take_along_axis(log_probs, batch.targets[..., None], axis=-1)[..., 0]  # (batch, seq)
    return -picked.mean(axis=0)
