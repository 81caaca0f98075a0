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
