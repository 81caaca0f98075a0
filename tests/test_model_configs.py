"""The published configs: the numbers the chapter's table is computed from, checked against each paper."""

from pathlib import Path

import numpy as np
import pytest

from mha.model_configs import PUBLISHED, comparison_rows

BIBLIOGRAPHY = Path(__file__).resolve().parent.parent / "references.bib"


def test_every_config_is_consistent_and_has_its_source():
    for config in PUBLISHED.values():
        assert config.source.startswith("https://")
        if config.kv_rank is None:
            assert config.n_heads % config.n_kv_heads == 0


@pytest.mark.skipif(not BIBLIOGRAPHY.is_file(), reason="the book's references.bib is not in the sdist")
def test_every_config_is_cited():
    bib = BIBLIOGRAPHY.read_text(encoding="utf8")
    for config in PUBLISHED.values():
        assert f"{{{config.cite}," in bib, config.cite


@pytest.mark.parametrize(("name", "per_token_kib"), [
    # 2 (k and v) · kv heads · head width · layers · 2 bytes, from each paper's table of hyper-parameters
    ("Llama 3 8B", 2 * 8 * 128 * 32 * 2 / 1024),
    ("Qwen2.5 7B", 2 * 4 * 128 * 28 * 2 / 1024),
    ("DeepSeek-V2", (512 + 64) * 60 * 2 / 1024),
])
def test_cache_per_token_follows_the_papers_hyper_parameters(name, per_token_kib):
    assert PUBLISHED[name].bytes_per_token(8192) / 1024 == pytest.approx(per_token_kib)


def test_windows_make_the_cache_per_token_fall_with_the_length():
    rows = {row["model"]: row for row in comparison_rows((8192, 131072))}
    for name in ("Mistral 7B", "Gemma 2 9B"):
        assert rows[name]["bytes_per_token_131072"] < rows[name]["bytes_per_token_8192"]
    for name in ("Llama 3 8B", "DeepSeek-V2", "Qwen2.5 7B"):
        assert rows[name]["bytes_per_token_131072"] == rows[name]["bytes_per_token_8192"]
    gemma = PUBLISHED["Gemma 2 9B"]  # half its layers are global: at 128k they dominate
    global_only = 21 * 2 * 8 * 256 * 2
    assert gemma.bytes_per_token(131072) == pytest.approx(global_only + 21 * 2 * 8 * 256 * 2 * 4096 / 131072)


def test_the_cache_dtype_sets_the_bytes():
    llama = PUBLISHED["Llama 3 8B"]
    assert llama.cache_bytes(100, dtype=np.float32) == 2 * llama.cache_bytes(100)


#: The attention keys of each model's released config.json (``AttentionConfig.source``), as the files write
#: them, transcribed by hand; checked against copies of the official files (see the 2026-12 review).
RELEASED = {
    "Llama 3 8B": {"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
                   "num_key_value_heads": 8, "max_position_embeddings": 8192},
    "Mistral 7B": {"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
                   "num_key_value_heads": 8, "sliding_window": 4096, "max_position_embeddings": 32768},
    "Gemma 2 9B": {"num_hidden_layers": 42, "hidden_size": 3584, "num_attention_heads": 16,
                   "num_key_value_heads": 8, "head_dim": 256, "sliding_window": 4096,
                   "attn_logit_softcapping": 50.0, "max_position_embeddings": 8192},
    "DeepSeek-V2": {"num_hidden_layers": 60, "hidden_size": 5120, "num_attention_heads": 128,
                    "kv_lora_rank": 512, "qk_rope_head_dim": 64, "max_position_embeddings": 163840},
    "Qwen2.5 7B": {"num_hidden_layers": 28, "hidden_size": 3584, "num_attention_heads": 28,
                   "num_key_value_heads": 4, "max_position_embeddings": 131072},
}


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_every_field_is_the_released_config_json(name):
    released, config = RELEASED[name], PUBLISHED[name]
    assert config.source.endswith("/config.json")
    assert (config.n_layers, config.d_model, config.n_heads, config.context) == (
        released["num_hidden_layers"], released["hidden_size"], released["num_attention_heads"],
        released["max_position_embeddings"])
    if "kv_lora_rank" in released:  # latent attention: no per-head keys in the cache
        assert (config.kv_rank, config.d_rope) == (released["kv_lora_rank"], released["qk_rope_head_dim"])
        assert config.n_kv_heads is None and config.d_head is None
    else:
        assert config.n_kv_heads == released["num_key_value_heads"] and config.kv_rank is None
        width = released.get("head_dim", released["hidden_size"] // released["num_attention_heads"])
        assert config.d_head == width
    assert config.window == released.get("sliding_window")
    assert config.softcap == released.get("attn_logit_softcapping")
    assert (config.local_layers > 0) == ("sliding_window" in released)


def test_rows_price_a_sequence_at_each_models_own_context():
    for row in comparison_rows((8192,)):
        config = PUBLISHED[row["model"]]
        assert row["context"] == config.context
        assert row["cache_context"] == config.cache_bytes(config.context)
    # Mistral's window caps its cache: at 32,768 tokens it holds what it holds at 4,096
    mistral = PUBLISHED["Mistral 7B"]
    assert mistral.cache_bytes(mistral.context) == mistral.cache_bytes(4096) == 2 * 8 * 128 * 32 * 2 * 4096
