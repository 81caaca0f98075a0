"""The attention of five published models, from their config files, and what their KV caches cost.

Each :class:`AttentionConfig` holds the numbers a model's released ``config.json`` gives for its attention,
field by field (the ``config.json`` key of each field is listed in :class:`AttentionConfig`), with the file
it comes from as ``source``; :meth:`AttentionConfig.cache_bytes` computes its cache with
:func:`mha.cost.attention_cache_bytes`, layer by layer. :func:`comparison_rows` is the table the chapter on
modern attention prints: nothing in it is typed in by hand except the configs themselves.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from mha.cost import attention_cache_bytes
from mha.typing import DTypeLike
from mha.validation import check_positive_int

__all__ = ["AttentionConfig", "PUBLISHED", "ModelTable", "UnknownModel", "comparison_rows"]


@dataclass(frozen=True)
class AttentionConfig:
    """The attention of one model, as published.

    Parameters
    ----------
    name : str
    n_layers, d_model, n_heads : int
        ``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``.
    n_kv_heads, d_head : int or None
        Key/value heads and their width: ``num_key_value_heads`` and ``head_dim`` (``hidden_size /
        num_attention_heads`` where the file has no ``head_dim``). None for latent attention, whose cache
        holds no per-head keys (DeepSeek-V2's file says 128 key/value heads: each head's keys are rebuilt
        from the cached latent).
    window : int or None
        ``sliding_window``, for the layers that use one.
    local_layers : int
        How many of the layers attend within ``window`` (the rest attend to everything). Not a
        ``config.json`` key: every layer in Mistral 7B's modelling code, every other one in Gemma 2's.
    kv_rank, d_rope : int or None
        Multi-head latent attention: ``kv_lora_rank`` (the cached latent's width) and ``qk_rope_head_dim``
        (the shared rotary key's).
    softcap : float or None
        ``attn_logit_softcapping``: attention-logit soft-capping.
    context : int
        ``max_position_embeddings``: the longest context the released configuration allows. It can exceed
        what the paper reports training on (Mistral 7B: 8,192 in the paper, 32,768 here).
    variants : tuple of str
        What the chapter calls the attention variants the model uses (from the paper where the
        ``config.json`` does not say it, e.g. Qwen2.5's YaRN, which its model card adds for 128k).
    cite : str
        Key of the paper in the course's ``references.bib``.
    source : str
        The released ``config.json`` every number comes from.

    Examples
    --------
    >>> llama = PUBLISHED["Llama 3 8B"]
    >>> llama.n_heads // llama.n_kv_heads, llama.window  # 4 query heads per key/value head, no window
    (4, None)
    """

    name: str
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int | None
    d_head: int | None
    context: int
    variants: tuple[str, ...]
    cite: str
    source: str
    window: int | None = None
    local_layers: int = 0
    kv_rank: int | None = None
    d_rope: int = 0
    softcap: float | None = None

    def cache_bytes(self, seq: int, *, dtype: DTypeLike = np.float16) -> int:
        """Bytes of the KV cache of one sequence of ``seq`` tokens, all layers, in ``dtype`` (16-bit default).

        Parameters
        ----------
        seq : int
            Tokens in the sequence.
        dtype : data-type, default np.float16
            What the cache stores.

        Returns
        -------
        int

        Raises
        ------
        ValueError
            ``seq`` below 1.
        TypeError
            ``seq`` is not an integer.

        Examples
        --------
        >>> PUBLISHED["Mistral 7B"].cache_bytes(8192) / 2**30  # its 4096-token window halves it at 8k
        0.5
        """
        seq = check_positive_int(seq, "seq")
        if self.kv_rank is not None:
            per_layer = attention_cache_bytes(seq, kv_rank=self.kv_rank, d_rope=self.d_rope, dtype=dtype)
            return self.n_layers * per_layer
        local = 0 if not self.local_layers else attention_cache_bytes(
            seq, n_kv_heads=self.n_kv_heads, d_head=self.d_head, window=self.window, dtype=dtype)
        full = attention_cache_bytes(seq, n_kv_heads=self.n_kv_heads, d_head=self.d_head, dtype=dtype)
        return self.local_layers * local + (self.n_layers - self.local_layers) * full

    def bytes_per_token(self, seq: int, *, dtype: DTypeLike = np.float16) -> float:
        """:meth:`cache_bytes` divided by ``seq``: flat for full attention, falling once a window fills.

        Parameters
        ----------
        seq : int
            Tokens in the sequence.
        dtype : data-type, default np.float16

        Returns
        -------
        float

        Raises
        ------
        ValueError
            ``seq`` below 1.
        TypeError
            ``seq`` is not an integer.

        Examples
        --------
        >>> [PUBLISHED["Mistral 7B"].bytes_per_token(n) for n in (4096, 8192)]  # the window fills at 4096
        [131072.0, 65536.0]
        """
        return self.cache_bytes(seq, dtype=dtype) / seq


_HF = "https://huggingface.co/{}/blob/main/config.json"


class UnknownModel(KeyError):
    """A name :data:`PUBLISHED` does not hold; the message lists the names it does.

    Examples
    --------
    >>> try:
    ...     PUBLISHED["Llama 3 8b"]
    ... except UnknownModel as error:
    ...     print(isinstance(error, KeyError), str(error).endswith("Did you mean 'Llama 3 8B'?"))
    True True
    """

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0])


class ModelTable(dict[str, "AttentionConfig"]):
    """A dict of configs by name whose missing key is answered with the names it holds (and a close one).

    Examples
    --------
    >>> table = ModelTable(small=PUBLISHED["Mistral 7B"])
    >>> table["small"].window, isinstance(table, dict)
    (4096, True)
    """

    def __missing__(self, name: object) -> AttentionConfig:
        close = difflib.get_close_matches(str(name).lower(), [k.lower() for k in self], n=1, cutoff=0.5)
        hint = next((f" Did you mean {k!r}?" for k in self if close and k.lower() == close[0]), "")
        raise UnknownModel(f"no published model named {name!r}; the table holds {', '.join(map(repr, self))}."
                           f"{hint}")


#: The five models of the chapter's table, by name. Every number from each ``source``, the model's released
#: config.json (the keys are listed in :class:`AttentionConfig`); the comment above each entry quotes them.
PUBLISHED = ModelTable({
    # num_hidden_layers 32, hidden_size 4096, num_attention_heads 32, num_key_value_heads 8 (head_dim
    # 4096 / 32), max_position_embeddings 8192, rope_theta 500000.0.
    "Llama 3 8B": AttentionConfig(
        "Llama 3 8B", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_head=128, context=8192,
        variants=("GQA", "RoPE (base 500 000)"), cite="grattafiori2024llama3",
        source=_HF.format("meta-llama/Meta-Llama-3-8B")),
    # num_hidden_layers 32, hidden_size 4096, num_attention_heads 32, num_key_value_heads 8 (head_dim
    # 4096 / 32), sliding_window 4096, max_position_embeddings 32768.
    "Mistral 7B": AttentionConfig(
        "Mistral 7B", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_head=128, context=32768,
        window=4096, local_layers=32, variants=("GQA", "sliding window 4096", "rolling cache", "RoPE"),
        cite="jiang2023mistral", source=_HF.format("mistralai/Mistral-7B-v0.1")),
    # num_hidden_layers 42, hidden_size 3584, num_attention_heads 16, num_key_value_heads 8, head_dim 256,
    # sliding_window 4096, attn_logit_softcapping 50.0, max_position_embeddings 8192.
    "Gemma 2 9B": AttentionConfig(
        "Gemma 2 9B", n_layers=42, d_model=3584, n_heads=16, n_kv_heads=8, d_head=256, context=8192,
        window=4096, local_layers=21, softcap=50.0,
        variants=("GQA", "local/global layers (window 4096)", "soft-capping 50", "RoPE"),
        cite="gemmateam2024gemma2", source=_HF.format("google/gemma-2-9b")),
    # num_hidden_layers 60, hidden_size 5120, num_attention_heads 128, kv_lora_rank 512, qk_rope_head_dim
    # 64, max_position_embeddings 163840, rope_scaling {type yarn, factor 40, original 4096}.
    "DeepSeek-V2": AttentionConfig(
        "DeepSeek-V2", n_layers=60, d_model=5120, n_heads=128, n_kv_heads=None, d_head=None, context=163840,
        kv_rank=512, d_rope=64, variants=("MLA (latent 512 + rotary 64)", "YaRN (x40)"),
        cite="deepseekai2024deepseekv2", source=_HF.format("deepseek-ai/DeepSeek-V2")),
    # num_hidden_layers 28, hidden_size 3584, num_attention_heads 28, num_key_value_heads 4 (head_dim
    # 3584 / 28), max_position_embeddings 131072, rope_theta 1000000.0, use_sliding_window false.
    "Qwen2.5 7B": AttentionConfig(
        "Qwen2.5 7B", n_layers=28, d_model=3584, n_heads=28, n_kv_heads=4, d_head=128, context=131072,
        variants=("GQA", "QKV bias", "RoPE (base 1 000 000)", "YaRN for 128k"),
        cite="qwen2024qwen25", source=_HF.format("Qwen/Qwen2.5-7B")),
})


def comparison_rows(seqs: Iterable[int] = (8192, 131072), *,
                    dtype: DTypeLike = np.float16) -> list[dict[str, object]]:
    """One row per published model: its heads, and its cache per token and per sequence at ``seqs``.

    Parameters
    ----------
    seqs : iterable of int, default (8192, 131072)
        The sequence lengths to cost.
    dtype : data-type, default np.float16
        What the caches store.

    Returns
    -------
    list of dict
        Keys ``model``, ``heads``, ``kv_heads``, ``head_width``, ``window``, ``variants``, ``context`` (the
        config's ``max_position_embeddings``), ``cache_context`` (bytes of one sequence of that length) and,
        per length ``n`` in ``seqs``, ``bytes_per_token_{n}`` and ``cache_{n}`` (bytes of one sequence).

    Raises
    ------
    TypeError
        ``seqs`` is a string or not iterable, or a length is not an integer.
    ValueError
        A length below 1.

    Examples
    --------
    >>> rows = comparison_rows()
    >>> [row["model"] for row in rows][:2], rows[0]["bytes_per_token_8192"]
    (['Llama 3 8B', 'Mistral 7B'], 131072.0)
    """
    if isinstance(seqs, str) or not isinstance(seqs, Iterable):
        raise TypeError(f"seqs must be a sequence of lengths, e.g. ({seqs!r},), got {type(seqs).__name__} "
                        f"{seqs!r}")
    seqs = tuple(check_positive_int(seq, "seqs[i]") for seq in seqs)
    rows = []
    for config in PUBLISHED.values():
        row = {"model": config.name, "heads": config.n_heads,
               "kv_heads": config.n_kv_heads if config.kv_rank is None else "latent",
               "head_width": config.d_head if config.kv_rank is None else config.kv_rank + config.d_rope,
               "window": "-" if config.window is None else
               f"{config.window} ({config.local_layers}/{config.n_layers} layers)",
               "variants": ", ".join(config.variants), "context": config.context,
               "cache_context": config.cache_bytes(config.context, dtype=dtype)}
        for seq in seqs:
            row[f"bytes_per_token_{seq}"] = config.bytes_per_token(seq, dtype=dtype)
            row[f"cache_{seq}"] = config.cache_bytes(seq, dtype=dtype)
        rows.append(row)
    return rows
