"""What the chapter on modern attention runs: windows and their reach, sinks, streaming, long contexts.

The variants themselves are core code (:mod:`mha.masks`, :class:`mha.RollingKVCache`,
:class:`mha.ModernAttention`, :mod:`mha.rope_scaling`, :class:`mha.LatentAttention`,
:mod:`mha.linear_attention`); this module runs the experiments that measure them on the course's tiny
GPT (:class:`mha.lab.TinyGPT` with rotary positions, trained on the course's prose with a first token
``BOS`` before every window) and on the pretrained encoder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mha.block import TransformerBlock
from mha.efficient import KVCache, RollingKVCache
from mha.grad.loss import log_softmax
from mha.lab.measure import peak_bytes
from mha.lab.tasks import Batch
from mha.lab.tiny_gpt import TinyGPT, per_position_loss
from mha.layers import MultiHeadAttention
from mha.masks import causal_mask, sliding_window_mask
from mha.rope_scaling import YARN_RAMPS, scaled_rotary
from mha.typing import FloatArray, Seed
from mha.validation import as_generator, check_positive_int
from mha.variants import ModernAttention

if TYPE_CHECKING:  # the encoder needs the pretrained extra; only its type is named here
    from mha.pretrained import Encoder

__all__ = ["bos_batch", "bos_windows", "first_token_weight", "stream_losses", "reread_losses",
           "context_losses", "receptive_field", "cache_growth", "largest_logit", "logit_ranges",
           "window_similarity"]


# ------------------------------------------------------------------------------------------ data
def _with_bos(windows: np.ndarray, targets: np.ndarray, bos: int) -> Batch:
    tokens = np.concatenate([np.full((len(windows), 1), bos), windows], axis=1)  # (batch, seq)
    zeros = np.zeros(len(tokens), dtype=np.int64)
    return Batch(tokens, targets, np.ones(tokens.shape, dtype=bool), zeros, zeros)


def bos_batch(ids: ArrayLike, batch: int, seq_len: int, rng: Seed, *, bos: int) -> Batch:
    """``batch`` random windows of ``seq_len`` tokens: ``bos``, then ``seq_len - 1`` characters of ``ids``.

    Every target is the next character, so the model learns to predict the first character after ``bos``
    too. The start token is what real models put first (Llama's ``<s>``), and what their heads park on.

    Examples
    --------
    >>> b = bos_batch(np.arange(100), 2, 5, rng=0, bos=999)
    >>> b.tokens[:, 0].tolist(), bool(np.all(b.targets[:, :-1] == b.tokens[:, 1:]))
    ([999, 999], True)
    """
    ids = np.asarray(ids)
    batch, seq_len = check_positive_int(batch, "batch"), check_positive_int(seq_len, "seq_len", minimum=2)
    starts = as_generator(rng).integers(0, ids.size - seq_len, size=batch)  # (batch,)
    window = starts[:, None] + np.arange(seq_len)  # (batch, seq_len): the characters, then one more
    return _with_bos(ids[window[:, :-1]], ids[window], bos)


def bos_windows(ids: ArrayLike, seq_len: int, *, bos: int, n_windows: int | None = None) -> Batch:
    """Consecutive windows of ``ids`` (held-out text), each ``bos`` and ``seq_len - 1`` characters.

    Examples
    --------
    >>> bos_windows(np.arange(9), 3, bos=99).tokens.tolist()
    [[99, 0, 1], [99, 2, 3], [99, 4, 5], [99, 6, 7]]
    """
    ids = np.asarray(ids)
    seq_len = check_positive_int(seq_len, "seq_len", minimum=2)
    step = seq_len - 1
    n = (ids.size - 1) // step if n_windows is None else min(n_windows, (ids.size - 1) // step)
    if n < 1:
        raise ValueError(f"the text has {ids.size} tokens; a window of {seq_len} needs {seq_len}")
    chars = ids[:n * step].reshape(n, step)  # (n, seq_len - 1)
    following = ids[1:n * step + 1].reshape(n, step)
    return _with_bos(chars, np.concatenate([chars[:, :1], following], axis=1), bos)


# ------------------------------------------------------------------------------------------ sinks
def first_token_weight(weights: Sequence[NDArray[np.floating]], *, from_query: int = 8,
                       ) -> NDArray[np.floating]:
    """Mean attention weight every head gives the first token, from queries ``from_query`` on.

    Parameters
    ----------
    weights : sequence of ndarray, each (batch, n_heads, seq, seq)
        One per layer (what ``model(tokens, return_weights=True)`` returns).
    from_query : int, default 8
        Early queries have few keys to choose from; they would inflate the average.

    Returns
    -------
    ndarray, shape (n_layers, n_heads)

    Examples
    --------
    >>> w = np.full((1, 2, 10, 10), 0.1)
    >>> first_token_weight([w, w]).tolist()
    [[0.1, 0.1], [0.1, 0.1]]
    """
    return np.stack([w[..., from_query:, 0].mean(axis=(0, 2)) for w in weights])


def window_similarity(encoder: Encoder, text: str, *, window: int,
                      sinks: Sequence[int] = (0, 1)) -> dict[int, NDArray[np.floating]]:
    """How close each token's final state stays to the full model's when attention is cut to a window.

    Every token of the encoder may see only the tokens within ``window - 1`` positions on either side,
    plus the first ``sinks`` tokens (``[CLS]`` is the first); the cosine similarity of its last hidden
    state with the unrestricted model's is returned, one per token, for each number of sinks.

    Returns
    -------
    dict sinks -> ndarray, shape (seq,)
    """
    _, ids, _, _ = encoder.tokenize([text])  # (1, seq)
    seq = ids.shape[1]
    full, _ = encoder.forward(ids, return_attentions=False)
    full = full[0]  # (seq, d_model)
    near = np.abs(np.arange(seq)[:, None] - np.arange(seq)[None, :]) < window  # (seq, seq)
    similarity = {}
    for n_sinks in sinks:
        allowed = near | (np.arange(seq) < n_sinks)[None, :]  # (seq, seq): the window, and the sinks
        local = encoder.forward(ids, return_attentions=False, attention_mask=allowed)[0][0]
        cosine = (full * local).sum(-1) / (np.linalg.norm(full, axis=-1) * np.linalg.norm(local, axis=-1))
        similarity[n_sinks] = cosine
    return similarity


# ------------------------------------------------------------------------------------------ streaming
def stream_losses(model: TinyGPT, tokens: ArrayLike, *, cache: str = "full", window: int | None = None,
                  sinks: int = 0) -> NDArray[np.floating]:
    """Loss (nats) of every next token while decoding a long stream one token at a time.

    Parameters
    ----------
    model : TinyGPT
        With rotary positions (it reads any length).
    tokens : int array_like, shape (seq,)
    cache : {"full", "window"}
        A :class:`mha.KVCache` that keeps everything (*dense* attention), or a :class:`mha.RollingKVCache`
        of ``window`` tokens plus ``sinks`` first ones.

    Returns
    -------
    ndarray, shape (seq - 1,): the loss of predicting ``tokens[t + 1]`` after reading ``tokens[:t + 1]``
    """
    tokens = np.asarray(tokens)
    if cache not in ("full", "window"):
        raise ValueError(f"cache must be 'full' or 'window', got {cache!r}")
    if cache == "window" and window is None:
        raise ValueError("a rolling cache needs window=")

    def new_cache(attention):
        if cache == "full":
            return KVCache(1, attention.n_kv_heads, attention.d_head, dtype=model.dtype, capacity=tokens.size)
        return RollingKVCache(1, attention.n_kv_heads, attention.d_head, window=window, sinks=sinks,
                              dtype=model.dtype)

    caches = [new_cache(block.attention) for block in model.blocks]
    losses = np.empty(tokens.size - 1)
    for t in range(tokens.size - 1):
        logits = model.decode(tokens[None, t:t + 1], caches)[0, -1].astype(np.float64)  # (vocab_size,)
        losses[t] = -log_softmax(logits)[tokens[t + 1]]
    return losses


def reread_losses(model: TinyGPT, tokens: ArrayLike, *, start: int) -> NDArray[np.floating]:
    """Loss of every next token from ``start`` on, each read afresh as in training.

    Token ``t + 1`` is predicted from the stream's first token (its start token, e.g. ``BOS``) followed by
    the ``context - 2`` tokens before ``t`` and ``t`` itself: a full training window, ``model.context``
    long, for every prediction. It is what a decoder that keeps a window of recent tokens aims for, with
    none of a rolling cache's state (one batched pass, no cache).

    Parameters
    ----------
    model : TinyGPT
    tokens : int array_like, shape (seq,)
        The stream, its start token first.
    start : int
        The first ``t`` to predict from; ``start >= model.context - 1`` so that every window is full.

    Returns
    -------
    ndarray, shape (seq - 1 - start,): the loss of predicting ``tokens[t + 1]``, ``t = start .. seq - 2``

    Raises
    ------
    ValueError
        ``tokens`` that are not one stream of integer ids, a ``start`` before the first full window, or
        one that leaves nothing to predict.

    Examples
    --------
    >>> model = TinyGPT(5, 4, d_model=8, n_heads=2, positions="rotary", rng=0)
    >>> reread_losses(model, [4, 0, 1, 2, 3, 0, 1], start=3).shape
    (3,)
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be one stream of integer ids, shape (seq,), got {tokens.dtype} "
                         f"{tokens.shape}")
    context = model.context
    start = check_positive_int(start, "start", minimum=context - 1)
    if start > tokens.size - 2:
        raise ValueError(f"start={start} leaves no token to predict in a stream of {tokens.size}")
    ends = np.arange(start, tokens.size - 1)  # (n,): the last token each window reads
    recent = ends[:, None] + np.arange(2 - context, 1)[None, :]  # (n, context - 1): positions read
    windows = np.concatenate([np.full((ends.size, 1), tokens[0]), tokens[recent]], axis=1)  # (n, context)
    logits = model(windows)[:, -1].astype(np.float64)  # (n, vocab_size): after each window's last token
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return np.log(np.exp(shifted).sum(axis=-1)) - shifted[np.arange(ends.size), tokens[ends + 1]]


# ------------------------------------------------------------------------------------------ long contexts
def context_losses(model: TinyGPT, batches: Mapping[int, Batch], *, original_context: int,
                   methods: Sequence[str] = ("none", "interpolation", "ntk", "yarn"), ramp: str = "index",
                   ) -> dict[str, dict[int, NDArray[np.floating]]]:
    """Per-position loss of a rotary model on longer windows, under each RoPE scaling method.

    Parameters
    ----------
    model : TinyGPT
        With rotary positions, trained on windows of ``original_context`` tokens.
    batches : mapping length -> Batch
        Held-out windows of each length (e.g. :func:`bos_windows`).
    original_context : int
    methods : sequence of str
        From :data:`mha.rope_scaling.SCALING_METHODS`; each layer's table is set to
        ``scaled_rotary(method, d_head, scale=length / original_context)`` for the batch of that length.
    ramp : {"index", "turns"}, default "index"
        YaRN's ramp (:func:`mha.rope_scaling.yarn_ramp`): as models run it, or as the paper writes it.

    Returns
    -------
    dict method -> dict length -> ndarray (length,), nats per position
    """
    if ramp not in YARN_RAMPS:
        raise ValueError(f"ramp must be one of {YARN_RAMPS}, got {ramp!r}")
    layers = [block.attention for block in model.blocks
              if isinstance(block.attention, ModernAttention) and block.attention.rope is not None]
    if len(layers) != len(model.blocks):
        raise ValueError("context_losses needs a model with rotary positions (TinyGPT(positions='rotary'))")
    before = [layer.rope for layer in layers]
    results: dict[str, dict[int, NDArray[np.floating]]] = {}
    try:
        for method in methods:
            for length, batch in batches.items():
                scale = max(1.0, length / original_context)
                for layer in layers:
                    layer.rope = scaled_rotary(method, layer.d_head, scale=scale,
                                               original_context=original_context, ramp=ramp)
                results.setdefault(method, {})[length] = per_position_loss(model, batch)
    finally:
        for layer, rope in zip(layers, before, strict=True):
            layer.rope = rope
    return results


# ------------------------------------------------------------------------------------------ windows
def receptive_field(n_layers: int, seq: int, *, window: int, d_model: int = 16,
                    rng: Seed = 0) -> NDArray[np.int_]:
    """How far a change to token 0 travels through ``n_layers`` layers of sliding-window attention.

    A stack of random pre-norm blocks attends within ``window``; token 0's input is nudged, and every
    output that moves (by more than 1e-12) counts as reached.

    Returns
    -------
    ndarray of int, shape (n_layers,)
        The furthest position reached after 1, 2, ... layers: ``layers · (window - 1)``.

    Examples
    --------
    >>> receptive_field(3, 20, window=4).tolist()
    [3, 6, 9]
    """
    n_layers, seq = check_positive_int(n_layers, "n_layers"), check_positive_int(seq, "seq")
    rng = as_generator(rng)
    blocks = [TransformerBlock(d_model, 2, rng=rng) for _ in range(n_layers)]
    mask = sliding_window_mask(seq, window=window)
    x: FloatArray = rng.standard_normal((1, seq, d_model))
    nudged = x.copy()
    nudged[0, 0] += rng.standard_normal(d_model)  # a direction (a constant shift the layer norm would undo)
    reach = []
    for block in blocks:
        x, nudged = block(x, mask=mask), block(nudged, mask=mask)
        moved = np.abs(nudged - x).max(axis=-1)[0] > 1e-12  # (seq,)
        reach.append(int(np.flatnonzero(moved).max()))
    return np.array(reach)


def cache_growth(layer: MultiHeadAttention, n_tokens: int, *, window: int, sinks: int = 0, every: int = 64,
                 rng: Seed = 0) -> dict[str, dict[str, list[int]]]:
    """Decode ``n_tokens`` random tokens through ``layer`` with a full and a rolling cache; measure both.

    Returns
    -------
    dict cache name -> {"tokens": [...], "cache_bytes": [...], "step_peak_bytes": [...]}
        Every ``every`` tokens: the bytes the cache holds (``cache.nbytes``) and the peak bytes NumPy
        allocated during one more decoding step (:func:`mha.lab.peak_bytes`), which include the scores.
    """
    rng = as_generator(rng)
    x = rng.standard_normal((1, n_tokens + 1, layer.d_model)).astype(layer.dtype)
    caches = {"full KV cache": KVCache(1, layer.n_kv_heads, layer.d_head, dtype=layer.dtype),
              f"rolling, window {window} + {sinks} sinks": RollingKVCache(
                  1, layer.n_kv_heads, layer.d_head, window=window, sinks=sinks, dtype=layer.dtype)}
    results: dict[str, dict[str, list[int]]] = {
        name: {"tokens": [], "cache_bytes": [], "step_peak_bytes": []} for name in caches}
    for name, cache in caches.items():
        for t in range(n_tokens):
            def step(t=t, cache=cache):
                layer.decode(x[:, t:t + 1], cache)

            if (t + 1) % every:
                step()
                continue
            results[name]["step_peak_bytes"].append(peak_bytes(step))  # the step itself, traced
            results[name]["tokens"].append(t + 1)
            results[name]["cache_bytes"].append(cache.nbytes)
    return results


# ------------------------------------------------------------------------------------------ QK-norm
def largest_logit(model: TinyGPT, tokens: ArrayLike) -> float:
    """The largest absolute score any head of ``model`` gives a visible key on ``tokens`` (batch, seq).

    The scores are those the softmax sees (after QK-norm and soft-capping when the layers have them).
    """
    _, cache = model.forward(tokens)
    largest = 0.0
    for block in cache.layers:
        attention = block.parts["attention"]  # the LayerCache of the block's attention
        layer = attention.layer if isinstance(attention.layer, ModernAttention) else \
            ModernAttention.like(attention.layer)
        logits = layer.attention_logits(attention)  # (batch, n_heads, seq, seq)
        visible = causal_mask(logits.shape[-2], logits.shape[-1])
        largest = max(largest, float(np.abs(logits[..., visible]).max()))
    return largest


def logit_ranges(layer: MultiHeadAttention, scales: Sequence[float], *, seq: int = 32,
                 rng: Seed = 0) -> dict[str, dict[str, list[float]]]:
    """Score range and softmax entropy of one layer's heads as its input grows, plain, QK-normed, capped.

    The same weights (``layer``) with the three steps; inputs are standard normal times each scale.

    Returns
    -------
    dict step name -> {"largest": [...], "entropy": [...]}
        The largest absolute score and the mean entropy (nats) of the causal rows, one per scale.
    """
    rng = as_generator(rng)
    x = rng.standard_normal((1, seq, layer.d_model))
    steps = {"plain": ModernAttention.like(layer), "QK-norm": ModernAttention.like(layer, qk_norm=True),
             "soft-cap 5": ModernAttention.like(layer, softcap=5.0)}
    visible = causal_mask(seq)
    results: dict[str, dict[str, list[float]]] = {name: {"largest": [], "entropy": []} for name in steps}
    for scale in scales:
        for name, step in steps.items():
            _, cache = step.forward(x * scale, causal=True)
            logits = step.attention_logits(cache)
            w = cache.weights
            if w is None:  # the annex's tiles keep no weights; forward() always does
                raise ValueError("attention weights are needed for the entropy")
            entropy = -(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)).sum(-1)  # (1, heads, seq)
            results[name]["largest"].append(float(np.abs(logits[..., visible]).max()))
            results[name]["entropy"].append(float(entropy[..., 1:].mean()))
    return results
