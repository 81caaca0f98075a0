"""The cost model, tied to the arrays the package really creates."""

import numpy as np
import pytest

import mha
from mha import cost
from mha.cost import format_bytes, format_count, format_flops

CONFIGS = [
    {},
    {"bias": False},
    {"n_kv_heads": 2},
    {"n_kv_heads": 1, "bias": False},
    {"kdim": 5, "vdim": 7},
]


@pytest.mark.parametrize("config", CONFIGS)
def test_parameter_count_equals_the_size_of_the_real_arrays(config):
    layer = mha.MultiHeadAttention(16, 4, rng=0, **config)
    real = sum(arr.size for arr in layer.parameters().values())
    assert cost.parameter_count(16, 4, **config) == real


def test_heads_do_not_change_parameter_count_at_fixed_d_model():
    counts = {h: cost.parameter_count(512, h) for h in (1, 2, 4, 8, 16)}
    assert len(set(counts.values())) == 1


@pytest.mark.parametrize("config", CONFIGS)
def test_flops_match_the_shapes_of_the_matrix_products(config):
    """Recount every matmul from the operand shapes of an actual forward pass."""
    layer = mha.MultiHeadAttention(16, 4, rng=0, **config)
    batch, seq_q, seq_k = 2, 5, 7
    rng = np.random.default_rng(0)
    query = rng.standard_normal((batch, seq_q, 16))
    key = rng.standard_normal((batch, seq_k, layer.kdim))
    value = rng.standard_normal((batch, seq_k, layer.vdim))
    q, k, v = layer.project(query, key, value)
    _, weights = layer(query, key, value, return_weights=True)
    bias = layer.bias

    def matmul(a_rows, inner, b_cols):
        return 2 * a_rows * inner * b_cols

    f = cost.flops(batch, seq_q, 16, 4, seq_k=seq_k, **config)
    assert f.q_projection == matmul(batch * seq_q, *layer.W_q.shape) + bias * q.size
    assert f.k_projection == matmul(batch * seq_k, *layer.W_k.shape) + bias * k.size
    assert f.v_projection == matmul(batch * seq_k, *layer.W_v.shape) + bias * v.size
    # every score is a dot product of length d_head, for each of the n_heads query heads
    assert f.scores == weights.size * 2 * layer.d_head + q.size
    assert f.softmax == 5 * weights.size
    assert f.weighted_sum == weights.size * 2 * layer.d_head
    assert f.output_projection == matmul(batch * seq_q, *layer.W_o.shape) + bias * q.size
    assert f.total == sum(f.as_dict()[k] for k in f.as_dict() if k != "total")
    assert f.matmul == f.total - f.softmax


def test_score_work_is_quadratic_in_sequence_length_and_projections_linear():
    short, long = cost.flops(1, 256, 64, 4), cost.flops(1, 1024, 64, 4)
    assert long.softmax == 16 * short.softmax
    assert long.weighted_sum == 16 * short.weighted_sum
    assert long.q_projection == 4 * short.q_projection


def test_score_memory_equals_the_weights_array_and_grows_with_heads():
    for n_heads in (1, 4, 8):
        layer = mha.MultiHeadAttention(32, n_heads, rng=0, dtype=np.float32)
        _, w = layer(np.zeros((2, 9, 32), np.float32), return_weights=True)
        assert cost.memory_bytes(2, 9, 32, n_heads, dtype=np.float32).scores == w.nbytes


def test_memory_items_match_projection_arrays():
    layer = mha.MultiHeadAttention(16, 4, rng=0)
    x = np.zeros((3, 6, 16))
    q, k, v = layer.project(x)
    m = cost.memory_bytes(3, 6, 16, 4, dtype=np.float64)
    assert m.qkv == q.nbytes + k.nbytes + v.nbytes
    assert m.inputs == x.nbytes and m.output == layer(x).nbytes
    assert m.peak == m.inputs + m.qkv + m.scores + m.context


def test_chunked_scores_are_one_tile_per_head():
    full = cost.memory_bytes(1, 4096, 512, 8, dtype=np.float32)
    tiled = cost.memory_bytes(1, 4096, 512, 8, dtype=np.float32, block_size=128)
    assert full.scores == 8 * 4096 * 4096 * 4
    assert tiled.scores == 8 * (128 * 128 + 2 * 128) * 4
    assert tiled.qkv == full.qkv


def test_cached_decoding_is_cheaper_and_the_gap_grows_with_position():
    ratios = [cost.decode_step_flops(p, 64, 4, cached=False) / cost.decode_step_flops(p, 64, 4)
              for p in (1, 16, 256)]
    assert ratios[0] == pytest.approx(1.0)
    assert ratios[0] < ratios[1] < ratios[2]


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: cost.parameter_count(10, 4), "not divisible"),
        (lambda: cost.flops(1, 0, 8, 2), "seq_q must be >= 1"),
        (lambda: cost.memory_bytes(1, 4, 8, 2, block_size=0), "block_size must be >= 1"),
        (lambda: cost.kv_cache_bytes(1, 4, 8, 4, n_kv_heads=3), "not a multiple"),
    ],
)
def test_cost_errors(call, words):
    with pytest.raises(ValueError, match=words):
        call()


# ------------------------------------------------------------------------------------ formatting
def _three_digit_mantissa(text: str) -> float:
    number, _ = text.split(" ", 1) if " " in text else (text, "")
    return float(number)


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "0.977 KiB"),  # 1000 B would need four digits: the next unit
        (1023, "0.999 KiB"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (2**20 - 1, "1 MiB"),  # 1023.999 KiB rounds to 1.02e3: the next unit
        (5 * 2**20, "5 MiB"),
        (3 * 2**40, "3 TiB"),
    ],
)
def test_format_bytes_at_the_unit_boundaries(n, text):
    assert format_bytes(n) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 FLOP"), (999, "999 FLOP"), (999.4, "999 FLOP"), (999.5, "1 kFLOP"), (1000, "1 kFLOP"),
     (999_500, "1 MFLOP"), (999_499, "999 kFLOP"), (2.5e12, "2.5 TFLOP")],
)
def test_format_flops_at_the_unit_boundaries(n, text):
    assert format_flops(n) == text


def test_formatters_never_show_an_exponent_or_four_digits():
    amounts = np.unique(np.round(np.geomspace(1, 2**50, 4000)))  # up to 1 PiB, the largest unit
    amounts = np.concatenate([amounts, 1000 * 1024.0 ** np.arange(5) - 0.5, 1024.0 ** np.arange(6)])
    for n in amounts:
        for text in (format_bytes(n), format_flops(n), format_count(n)):
            assert "e" not in text.split(" ")[0], text
            assert _three_digit_mantissa(text) < 1000, text


def test_format_count_is_decimal():
    assert (format_count(12), format_count(1500), format_count(2_000_000)) == ("12", "1.5 k", "2 M")


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf")])
def test_formatters_reject_impossible_amounts(bad):
    for formatter in (format_bytes, format_flops, format_count):
        with pytest.raises(ValueError, match="finite, non-negative"):
            formatter(bad)


# ------------------------------------------------------------------- caches and patterns of modern attention
def test_attention_cache_bytes_agrees_with_the_plain_kv_cache_formula():
    for n_kv in (8, 2, 1):
        assert mha.cost.attention_cache_bytes(1000, n_kv_heads=n_kv, d_head=64, batch=3) == \
            mha.cost.kv_cache_bytes(3, 1000, 512, 8, n_kv_heads=n_kv)


def test_a_window_caps_the_cache_and_sinks_add_to_it():
    full = mha.cost.attention_cache_bytes(10_000, n_kv_heads=4, d_head=32)
    windowed = mha.cost.attention_cache_bytes(10_000, n_kv_heads=4, d_head=32, window=1000, sinks=4)
    assert windowed * 10_000 == full * 1004
    assert mha.cost.attention_cache_bytes(500, n_kv_heads=4, d_head=32, window=1000) == \
        mha.cost.attention_cache_bytes(500, n_kv_heads=4, d_head=32)


def test_published_claims_about_the_caches():
    # DeepSeek-V2 (its Table 1): MLA caches (d_c + d_h^R) l numbers a token, like GQA with 2.25 groups.
    mla = mha.cost.attention_cache_bytes(1, kv_rank=512, d_rope=64)
    assert mla == mha.cost.attention_cache_bytes(1, n_kv_heads=1, d_head=128) * 2.25
    # Mistral 7B: at 32k tokens the rolling buffer of 4096 keeps an eighth of the cache.
    mistral = mha.model_configs.PUBLISHED["Mistral 7B"]
    full = 32 * 2 * 8 * 128 * 32768 * 2  # every layer keeping all 32k tokens, 16-bit
    assert mistral.cache_bytes(32768) * 8 == full


def test_pattern_cost_counts_only_the_scores_a_pattern_keeps():
    causal = mha.cost.pattern_cost(mha.causal_mask(64), 16, n_heads=2)
    assert causal.scores == 2 * 64 * 65 // 2
    full = mha.cost.flops(1, 64, 32, 2)
    # the dense cost model's attention items (without the scale) are the pattern cost of an all-True mask
    dense = mha.cost.pattern_cost(np.ones((64, 64), dtype=bool), 16, n_heads=2)
    assert dense.flops == full.scores - 64 * 32 + full.softmax + full.weighted_sum
    assert causal.density == pytest.approx(65 / 128)


def test_linear_attention_cost_grows_with_the_sequence_and_its_state_does_not():
    a = mha.cost.linear_attention_cost(100, 8, n_heads=2)
    b = mha.cost.linear_attention_cost(300, 8, n_heads=2)
    assert b.flops == 3 * a.flops and a.score_bytes == b.score_bytes == 2 * (8 * 8 + 8) * 4
