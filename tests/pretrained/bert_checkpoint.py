"""A tiny BERT checkpoint written to disk, and a slow reference forward pass that reads its raw arrays.

The checkpoint has Hugging Face's layout (``config.json``, ``model.safetensors`` with ``(out, in)`` linear
weights, ``tokenizer.json``) at toy sizes, so loader tests run in milliseconds without the real model. The
reference shares no code with ``mha``: loops from ``tests/reference.py`` and ``tests/reference_block.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.reference import multi_head_loop
from tests.reference_block import exact_gelu, layer_norm_loop

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on", "mat", ".", "a", "dog", "ran", "##s"]
CONFIG = {"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2,
          "intermediate_size": 16, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
          "max_position_embeddings": 12, "type_vocab_size": 2, "vocab_size": len(VOCAB),
          "position_embedding_type": "absolute"}


def tiny_weights(config=CONFIG, seed: int = 0, prefix: str = "") -> dict[str, np.ndarray]:
    """Random float32 arrays under BERT's names, linear weights (out, in), plus a pooler to be ignored."""
    rng = np.random.default_rng(seed)
    d, ff = config["hidden_size"], config["intermediate_size"]

    def normal(*shape, scale=0.5):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    arrays = {"embeddings.word_embeddings.weight": normal(config["vocab_size"], d),
              "embeddings.position_embeddings.weight": normal(config["max_position_embeddings"], d),
              "embeddings.token_type_embeddings.weight": normal(config["type_vocab_size"], d),
              "embeddings.LayerNorm.weight": 1 + normal(d, scale=0.1), "embeddings.LayerNorm.bias": normal(d),
              "pooler.dense.weight": normal(d, d), "pooler.dense.bias": normal(d)}
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        for part in ("query", "key", "value"):
            arrays[f"{p}.attention.self.{part}.weight"] = normal(d, d)
            arrays[f"{p}.attention.self.{part}.bias"] = normal(d)
        arrays |= {f"{p}.attention.output.dense.weight": normal(d, d),
                   f"{p}.attention.output.dense.bias": normal(d),
                   f"{p}.attention.output.LayerNorm.weight": 1 + normal(d, scale=0.1),
                   f"{p}.attention.output.LayerNorm.bias": normal(d),
                   f"{p}.intermediate.dense.weight": normal(ff, d),
                   f"{p}.intermediate.dense.bias": normal(ff),
                   f"{p}.output.dense.weight": normal(d, ff), f"{p}.output.dense.bias": normal(d),
                   f"{p}.output.LayerNorm.weight": 1 + normal(d, scale=0.1),
                   f"{p}.output.LayerNorm.bias": normal(d)}
    return {prefix + name: value for name, value in arrays.items()}


def write_tokenizer(path: Path) -> None:
    """A WordPiece tokenizer over VOCAB, lower-casing, adding [CLS] ... [SEP] like BERT's."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate(VOCAB)}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tokenizer.save(str(path))


def write_checkpoint(folder: Path, *, config=CONFIG, weights=None) -> Path:
    """Write config.json, model.safetensors and tokenizer.json into ``folder``; return it."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    save_file(tiny_weights(config) if weights is None else weights, str(folder / "model.safetensors"))
    write_tokenizer(folder / "tokenizer.json")
    return folder


def reference_forward(arrays: dict, ids, n_heads: int, eps: float, head_off=None):
    """BERT on one sequence of ids, in float64 loops.

    Returns hidden (seq, d_model) and attentions (n_layers, n_heads, seq, seq).

    ``head_off`` is an optional (layer, head) whose output is removed: its rows of the output projection
    are zeroed, which is what switching the head off means.
    """
    a = {name: np.asarray(value, dtype=np.float64) for name, value in arrays.items()}
    ids = list(ids)
    x = a["embeddings.word_embeddings.weight"][ids] + a["embeddings.position_embeddings.weight"][:len(ids)]
    x = x + a["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm_loop(x, a["embeddings.LayerNorm.weight"], a["embeddings.LayerNorm.bias"], eps)
    d_model = x.shape[1]
    d_head = d_model // n_heads
    n_layers = 1 + max(int(name.split(".")[2]) for name in a if name.startswith("encoder.layer."))
    all_weights = []
    for i in range(n_layers):
        p = f"encoder.layer.{i}"
        params = {}
        for ours, theirs in (("q", "query"), ("k", "key"), ("v", "value")):
            params[f"W_{ours}"] = a[f"{p}.attention.self.{theirs}.weight"].T
            params[f"b_{ours}"] = a[f"{p}.attention.self.{theirs}.bias"]
        params["W_o"] = a[f"{p}.attention.output.dense.weight"].T.copy()
        params["b_o"] = a[f"{p}.attention.output.dense.bias"]
        if head_off is not None and head_off[0] == i:
            params["W_o"][head_off[1] * d_head:(head_off[1] + 1) * d_head] = 0.0
        attended, weights = multi_head_loop(x, {"key": x, "value": x}, params, n_heads)
        all_weights.append(weights)
        h = layer_norm_loop(x + attended, a[f"{p}.attention.output.LayerNorm.weight"],
                            a[f"{p}.attention.output.LayerNorm.bias"], eps)
        inner = exact_gelu(h @ a[f"{p}.intermediate.dense.weight"].T + a[f"{p}.intermediate.dense.bias"])
        ff = inner @ a[f"{p}.output.dense.weight"].T + a[f"{p}.output.dense.bias"]
        x = layer_norm_loop(h + ff, a[f"{p}.output.LayerNorm.weight"], a[f"{p}.output.LayerNorm.bias"], eps)
    return x, np.stack(all_weights)
