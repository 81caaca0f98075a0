"""A tiny encoder–decoder built from the package's layers, and tasks whose right cross-attention is known.

The encoder is pre-norm :class:`mha.TransformerBlock` s over the source; each decoder block adds
cross-attention between its causal self-attention and its feed-forward network
(:class:`mha.DecoderBlock`). Source padding is masked in the encoder and in every cross-attention.

The tasks (copy, reverse, sort, word order) record, for each target token, the source position it comes
from (its *alignment*): the diagonal for copy, the anti-diagonal for reverse, a permutation for sort, and
for the toy translation a word-for-word dictionary whose adjectives move after their noun (``the big cat``
→ ``le chat grand``). Sources end with an end token that the target's end token aligns to, so every target
position has one source position to read; sources of different lengths are padded and carry a padding
mask. A learned cross-attention map can then be scored against the right answer (:func:`alignment_match`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np

from mha.block import BlockCache, DecoderBlock
from mha.grad import block_backward, decoder_block_backward, layer_norm_backward
from mha.lab.models import LanguageModel, ModelCache
from mha.lab.transformer_block import build_stack
from mha.module import Module, linear
from mha.normalization import LayerNorm
from mha.typing import ArrayLike, BoolArray, DTypeLike, FloatArray, IntArray, Seed
from mha.validation import as_generator, check_dtype_argument, check_positive_int

__all__ = ["Seq2Seq", "greedy_decode", "VOCABULARY", "PAD", "BOS", "EOS", "TASKS", "Seq2SeqBatch",
           "make_batch", "alignment_match", "words"]


class Seq2Seq(LanguageModel):
    """Encoder–decoder transformer with a shared token table and a tied output layer.

    Parameters
    ----------
    vocab_size, max_len : int
        ``max_len``: longest source and longest target sequence.
    d_model, n_heads : int, default 32, 2
    encoder_layers, decoder_layers : int, default 1, 2
        Blocks on each side. ``encoder_layers=0`` leaves each source token alone (embedding and position,
        normalised): the decoder then has to read every token where it is.
    d_ff : int, optional
    rng : numpy.random.Generator or int
    dtype : np.float32 or np.float64, default np.float32

    Examples
    --------
    >>> model = Seq2Seq(12, 6, d_model=8, n_heads=2, rng=0)
    >>> source, mask = np.array([[3, 4, 5, 0]]), np.array([[True, True, True, False]])
    >>> logits, cross = model(source, mask, np.array([[1, 5, 4]]), return_weights=True)
    >>> logits.shape, cross[0].shape
    ((1, 3, 12), (1, 2, 3, 4))
    """

    def __init__(self, vocab_size: int, max_len: int, d_model: int = 32, n_heads: int = 2,
                 encoder_layers: int = 1, decoder_layers: int = 2, d_ff: int | None = None, *, rng: Seed,
                 dtype: DTypeLike = np.float32) -> None:
        self.vocab_size = check_positive_int(vocab_size, "vocab_size")
        self.max_len = check_positive_int(max_len, "max_len")
        self.d_model = check_positive_int(d_model, "d_model")
        check_positive_int(encoder_layers, "encoder_layers", minimum=0)
        check_positive_int(decoder_layers, "decoder_layers")
        self.dtype = check_dtype_argument(dtype)
        rng = as_generator(rng)

        def table(rows):
            return (rng.standard_normal((rows, d_model)) * 0.1).astype(self.dtype)

        self.token_embedding = table(vocab_size)
        self.source_positions, self.target_positions = table(max_len), table(max_len)
        self.encoder = build_stack(encoder_layers, d_model, n_heads, d_ff=d_ff, activation="relu",
                                   scaled_init=True, rng=rng, dtype=self.dtype) if encoder_layers else []
        self.decoder = [DecoderBlock(d_model, n_heads, d_ff, rng=rng, dtype=self.dtype)
                        for _ in range(decoder_layers)]
        self.encoder_norm = LayerNorm(d_model, dtype=self.dtype)
        self.decoder_norm = LayerNorm(d_model, dtype=self.dtype)
        self.n_heads = self.decoder[0].cross_attention.n_heads
        self.n_layers = len(self.decoder)
        self.position_embedding = None  # two tables of their own: source_positions, target_positions
        self.unembedding = None  # the readout is tied to the token embedding

    @property  # computed: the arrays live in named attributes
    def _params(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        return {"token_embedding": self.token_embedding, "source_positions": self.source_positions,
                "target_positions": self.target_positions}

    def submodules(self) -> dict[str, Module]:
        """``encoder.0``, ``decoder.0``, ``decoder.1``, ..., ``encoder_norm``, ``decoder_norm``."""
        parts: dict[str, Module] = {f"encoder.{i}": block for i, block in enumerate(self.encoder)}
        parts.update({f"decoder.{i}": block for i, block in enumerate(self.decoder)})
        return {**parts, "encoder_norm": self.encoder_norm, "decoder_norm": self.decoder_norm}

    def _check(self, tokens, name):
        tokens = np.asarray(tokens)
        if tokens.dtype.kind not in "iu" or tokens.ndim != 2 or not 1 <= tokens.shape[1] <= self.max_len:
            raise ValueError(f"{name} must be integers of shape (batch, 1..{self.max_len}), got "
                             f"{tokens.dtype} "
                             f"{tokens.shape}")
        if tokens.min() < 0 or tokens.max() >= self.vocab_size:
            raise ValueError(f"{name} ids must lie in [0, {self.vocab_size})")
        return tokens

    @staticmethod
    def _key_mask(source_mask: ArrayLike) -> BoolArray:
        return np.asarray(source_mask, dtype=bool)[:, None, None, :]  # (batch, 1, 1, seq_k)

    def encode(self, source: IntArray, source_mask: ArrayLike) -> np.ndarray:
        """The encoder's output, shape (batch, seq_k, d_model)."""
        return self._encode(self._check(source, "source"), self._key_mask(source_mask))[0]

    def _encode(self, source: IntArray, key_mask: BoolArray) -> tuple[FloatArray, list[BlockCache], Any]:
        """The memory, the encoder blocks' caches and the encoder norm's, from checked ``source``."""
        r = self.embed(source, positions=self.source_positions)  # (batch, seq_k, d_model)
        caches = []
        for block in self.encoder:
            r, cache = block.forward(r, mask=key_mask)
            caches.append(cache)
        memory, memory_cache = self.encoder_norm.forward(r)
        return memory, caches, memory_cache

    def forward(self, source: IntArray, source_mask: ArrayLike, tokens: IntArray
                ) -> tuple[FloatArray, ModelCache]:
        """Next-token logits for decoder input ``tokens`` (batch, seq_q) reading ``source`` (batch, seq_k).

        Parameters
        ----------
        source : int ndarray, shape (batch, seq_k)
        source_mask : bool array_like, shape (batch, seq_k)
            False on padding: no query reads it.
        tokens : int ndarray, shape (batch, seq_q)

        Returns
        -------
        logits : ndarray, shape (batch, seq_q, vocab_size)
        cache : ModelCache
            The decoder blocks' caches (``cache.layers``), the encoder's and the norms' (``cache.parts``).
        """
        source = self._check(source, "source")
        tokens = self._check(tokens, "tokens")
        key_mask = self._key_mask(source_mask)
        memory, encoder_caches, memory_cache = self._encode(source, key_mask)
        x = self.embed(tokens, positions=self.target_positions)  # (batch, seq_q, d_model)
        caches = []
        for block in self.decoder:
            x, cache = block.forward(x, memory, memory_mask=key_mask)
            caches.append(cache)
        normed, norm_cache = self.decoder_norm.forward(x)
        logits = self.readout(normed)  # (batch, seq_q, vocab_size), the tied readout
        parts = {"source": source, "encoder": encoder_caches, "memory": memory, "memory_norm": memory_cache,
                 "normed": normed, "norm": norm_cache}
        return logits, ModelCache(tokens, caches, parts)

    def forward_batch(self, batch: Seq2SeqBatch) -> tuple[FloatArray, ModelCache]:
        """:meth:`forward` on a batch's source, source mask and decoder input."""
        return self.forward(batch.source, batch.source_mask, batch.tokens)

    @overload
    def __call__(self, source: IntArray, source_mask: BoolArray, tokens: IntArray, *,
                 return_weights: Literal[False] = ...) -> FloatArray: ...
    @overload
    def __call__(self, source: IntArray, source_mask: BoolArray, tokens: IntArray, *,
                 return_weights: Literal[True]) -> tuple[FloatArray, list[FloatArray]]: ...
    def __call__(self, source: IntArray, source_mask: BoolArray, tokens: IntArray, *,
                 return_weights: bool = False) -> FloatArray | tuple[FloatArray, list[FloatArray]]:
        """Next-token logits for decoder input ``tokens`` (batch, seq_q), reading ``source`` (batch, seq_k).

        With ``return_weights=True`` also returns each decoder block's cross-attention weights,
        (batch, n_heads, seq_q, seq_k).
        """
        logits, cache = self.forward(source, source_mask, tokens)
        if not return_weights:
            return logits
        return logits, [block.parts["cross_attention"].weights for block in cache.layers]

    def backward(self, d_logits: FloatArray, cache: ModelCache) -> dict[str, FloatArray]:
        """Every parameter's gradient from the logits' (``d_logits``, shaped like the logits)."""
        grads = {}

        def named(prefix, g):
            grads.update({f"{prefix}.{name}": arr for name, arr in g.items()})

        normed, source, tokens = cache.parts["normed"], cache.parts["source"], cache.tokens
        d_table = d_logits.reshape(-1, self.vocab_size).T @ normed.reshape(-1, self.d_model)  # tied readout
        g, d_x = layer_norm_backward(linear(d_logits, self.token_embedding), cache.parts["norm"])
        named("decoder_norm", g)
        d_memory = np.zeros_like(cache.parts["memory"])
        for i in reversed(range(len(self.decoder))):
            g, d_x, d_mem = decoder_block_backward(d_x, cache.layers[i])
            named(f"decoder.{i}", g)
            d_memory += d_mem  # every decoder block reads the same memory
        g, d_r = layer_norm_backward(d_memory, cache.parts["memory_norm"])
        named("encoder_norm", g)
        for i in reversed(range(len(self.encoder))):
            g, d_r = block_backward(d_r, cache.parts["encoder"][i])
            named(f"encoder.{i}", g)
        d_tokens = d_table + self.token_gradient(d_x, tokens)  # the table is read three times
        grads["token_embedding"] = d_tokens + self.token_gradient(d_r, source)
        grads["source_positions"] = self.position_gradient(d_r, self.source_positions)
        grads["target_positions"] = self.position_gradient(d_x, self.target_positions)
        return grads


def greedy_decode(model: Seq2Seq, source: IntArray, source_mask: BoolArray, *, bos: int, eos: int,
                  max_new: int | None = None, use_cache: bool = True) -> tuple[IntArray, FloatArray]:
    """Write the most likely target, one token at a time, until every row has produced ``eos``.

    Parameters
    ----------
    model : Seq2Seq
    source : int ndarray, shape (batch, seq_k)
    source_mask : bool ndarray, shape (batch, seq_k)
        False on padding.
    bos, eos : int
        Start and end tokens.
    max_new : int, optional
        At most this many tokens (default ``model.max_len``).
    use_cache : bool, default True
        Keep each decoder block's self-attention keys and values (one position of work per step); False
        reruns the decoder over the whole prefix every step. Same tokens either way.

    Returns
    -------
    tokens : int ndarray, shape (batch, n_steps)
        The written tokens, without the start token; after ``eos`` a row repeats ``eos``.
    cross : ndarray, shape (batch, n_heads, n_steps, seq_k)
        The last decoder block's cross-attention at every step.
    """
    max_new = model.max_len if max_new is None else check_positive_int(max_new, "max_new")
    memory = model.encode(source, source_mask)
    key_mask = model._key_mask(source_mask)
    batch = memory.shape[0]
    written = np.full((batch, 1), bos, dtype=np.int64)
    caches = [block.self_attention.new_cache(batch, capacity=max_new) for block in model.decoder]
    crosses, done = [], np.zeros(batch, dtype=bool)
    for step in range(max_new):
        if use_cache:
            r = model.token_embedding[written[:, -1:]] + model.target_positions[step:step + 1]
            for block, cache in zip(model.decoder, caches, strict=True):
                r, cross = block.decode(r, memory, cache, memory_mask=key_mask)
            logits, cross = model.readout(model.decoder_norm(r))[:, -1], cross[:, :, -1]
        else:
            r = model.token_embedding[written] + model.target_positions[:written.shape[1]]
            for block in model.decoder:
                r, cross = block(r, memory, memory_mask=key_mask, return_weights=True)
            logits, cross = model.readout(model.decoder_norm(r))[:, -1], cross[:, :, -1]
        nxt = np.where(done, eos, logits.argmax(axis=-1))  # (batch,)
        written = np.concatenate([written, nxt[:, None]], axis=1)
        crosses.append(cross)
        done |= nxt == eos
        if done.all():
            break
    return written[:, 1:], np.stack(crosses, axis=2)


# ------------------------------------------------------------------------------------------ the tasks
DIGITS = [str(d) for d in range(10)]
NOUNS = {"cat": "chat", "dog": "chien", "bird": "oiseau", "house": "maison", "car": "voiture",
         "fish": "poisson"}
ADJECTIVES = {"black": "noir", "white": "blanc", "big": "grand", "small": "petit", "red": "rouge",
              "old": "vieux"}
DETERMINERS = {"the": "le", "a": "un"}
VERBS = {"sees": "voit", "likes": "aime", "eats": "mange"}
_LEXICON = {**NOUNS, **ADJECTIVES, **DETERMINERS, **VERBS}

#: One vocabulary for every task: padding, start, end, digits, English words, French words.
VOCABULARY = ["<pad>", "<s>", "</s>", *DIGITS, *_LEXICON, *_LEXICON.values()]
PAD, BOS, EOS = 0, 1, 2
_ID = {w: i for i, w in enumerate(VOCABULARY)}
TASKS = ("copy", "reverse", "sort", "translate")


@dataclass(frozen=True)
class Seq2SeqBatch:
    """A padded batch of (source, target) pairs.

    Attributes
    ----------
    source : int ndarray, shape (batch, seq_k)
        Source tokens, then ``</s>``, then padding.
    source_mask : bool ndarray, shape (batch, seq_k)
        True on real tokens (``</s>`` included), False on padding.
    tokens : int ndarray, shape (batch, seq_q)
        Decoder input: ``<s>`` then the target shifted right (teacher forcing).
    targets : int ndarray, shape (batch, seq_q)
        The target tokens, then ``</s>``, then padding.
    loss_mask : bool ndarray, shape (batch, seq_q)
        True where ``targets`` is a real token.
    alignment : int ndarray, shape (batch, seq_q)
        Source position each target token comes from; -1 on padding.
    """

    source: np.ndarray
    source_mask: np.ndarray
    tokens: np.ndarray
    targets: np.ndarray
    loss_mask: np.ndarray
    alignment: np.ndarray


def words(ids: ArrayLike) -> list[str]:
    """Token ids to their words, padding dropped.

    Examples
    --------
    >>> words([3, 4, 2, 0])
    ['0', '1', '</s>']
    """
    return [VOCABULARY[i] for i in np.asarray(ids).tolist() if i != PAD]


def _sentence(rng):
    """An English sentence ``det [adj] noun verb det [adj] noun`` and its word-order translation."""
    english, french, alignment = [], [], []

    def phrase():
        det, noun = rng.choice(list(DETERMINERS)), rng.choice(list(NOUNS))
        adj = rng.choice(list(ADJECTIVES)) if rng.random() < 0.6 else None
        start = len(english)
        english.extend([det, adj, noun] if adj else [det, noun])
        french.extend([DETERMINERS[det], NOUNS[noun]] + ([ADJECTIVES[adj]] if adj else []))
        alignment.extend([start, start + 2, start + 1] if adj else [start, start + 1])

    phrase()
    verb = rng.choice(list(VERBS))
    alignment.append(len(english))
    english.append(verb)
    french.append(VERBS[verb])
    phrase()
    return [_ID[w] for w in english], [_ID[w] for w in french], alignment


def _example(task, rng, min_len, max_len):
    if task == "translate":
        return _sentence(rng)
    n = int(rng.integers(min_len, max_len + 1))
    source = rng.choice(10, size=n, replace=False) + _ID["0"]  # distinct digits: one right alignment
    order = {"copy": np.arange(n), "reverse": np.arange(n)[::-1], "sort": np.argsort(source)}[task]
    return source.tolist(), source[order].tolist(), order.tolist()


def make_batch(task: str, batch: int, rng: Seed, *, min_len: int = 3, max_len: int = 8) -> Seq2SeqBatch:
    """A fresh padded batch of ``task`` examples (digit tasks: ``min_len`` to ``max_len`` distinct digits).

    Examples
    --------
    >>> b = make_batch("reverse", 2, rng=0, min_len=3, max_len=4)
    >>> [words(s) for s in b.source]
    [['7', '2', '3', '4', '</s>'], ['6', '9', '5', '</s>']]
    >>> [words(t) for t in b.targets]
    [['4', '3', '2', '7', '</s>'], ['5', '9', '6', '</s>']]
    >>> b.alignment.tolist()  # -1: padding
    [[3, 2, 1, 0, 4], [2, 1, 0, 3, -1]]
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    batch = check_positive_int(batch, "batch")
    if not 1 <= min_len <= max_len <= 10:
        raise ValueError(f"need 1 <= min_len <= max_len <= 10 distinct digits, got {min_len}, {max_len}")
    rng = as_generator(rng)
    examples = [_example(task, rng, min_len, max_len) for _ in range(batch)]
    seq = max(len(s) for s, _, _ in examples) + 1  # + </s>
    source = np.full((batch, seq), PAD, dtype=np.int64)
    targets = np.full((batch, seq), PAD, dtype=np.int64)
    alignment = np.full((batch, seq), -1, dtype=np.int64)
    for i, (src, tgt, align) in enumerate(examples):  # building Python lists of words: one row at a time
        source[i, :len(src) + 1] = src + [EOS]
        targets[i, :len(tgt) + 1] = tgt + [EOS]
        alignment[i, :len(align) + 1] = align + [len(src)]
    tokens = np.concatenate([np.full((batch, 1), BOS), targets[:, :-1]], axis=1)  # (batch, seq)
    tokens[tokens == EOS] = PAD  # the decoder never reads the final </s>
    return Seq2SeqBatch(source, source != PAD, tokens, targets, targets != PAD, alignment)


def alignment_match(cross: FloatArray, alignment: FloatArray) -> np.ndarray:
    """Each head's mean cross-attention weight on the source position a target token comes from.

    1 means every target token reads exactly its aligned source token; a uniform head over ``n`` source
    tokens scores ``1 / n``.

    Parameters
    ----------
    cross : ndarray, shape (batch, n_heads, seq_q, seq_k)
    alignment : int ndarray, shape (batch, seq_q)
        -1 where a target position does not count.

    Returns
    -------
    ndarray, shape (n_heads,)

    Examples
    --------
    >>> cross = np.eye(3)[None, None].repeat(2, axis=1)  # two heads reading the diagonal
    >>> alignment_match(cross, np.array([[0, 1, -1]]))
    array([1., 1.])
    """
    alignment = np.asarray(alignment)
    counted = alignment >= 0  # (batch, seq_q)
    picked = np.take_along_axis(cross, np.maximum(alignment, 0)[:, None, :, None], axis=-1)[..., 0]
    return (picked * counted[:, None]).sum(axis=(0, 2)) / counted.sum()  # (n_heads,)
