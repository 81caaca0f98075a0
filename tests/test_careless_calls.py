"""Careless calls a Python user makes, each refused with a message that names the cause and the fix.

The calls are the ones issue 51 and the 2026-12 ecosystem review found answered with a raw Python error
(``could not convert string to float``, ``'object' object has no attribute``), a bare ``KeyError``, or no
error at all (a string formatted as bytes, a negative feature map giving a "weight" of 909090.9, a
float32 layer writing float64 keys). Each test asserts the kind of error and the words a user needs:
what was wrong, and what to do instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import mha
from mha.cost import format_bytes, format_count, format_flops
from mha.latent_attention import LatentAttention
from mha.linear_attention import linear_attention, linear_attention_recurrent
from mha.model_configs import PUBLISHED, UnknownModel, comparison_rows
from mha.rope_scaling import scaled_rotary


def message(kind, call) -> str:
    with pytest.raises(kind) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize("base", ["abc", -1.0, 1.0, float("nan"), None, True])
def test_a_latent_layer_refuses_a_base_that_is_no_rope_base_when_built(base):
    text = message(ValueError, lambda: LatentAttention(32, 4, kv_rank=8, d_nope=8, d_rope=4, base=base))
    assert "base must be a finite number > 1" in text and repr(base) in text


def test_a_latent_layer_with_a_good_base_rotates_with_it():
    x = np.random.default_rng(0).standard_normal((1, 5, 32))
    a = LatentAttention(32, 4, kv_rank=8, d_nope=8, d_rope=4, base=10.0, rng=0)
    b = LatentAttention(32, 4, kv_rank=8, d_nope=8, d_rope=4, base=10000.0, rng=0)
    assert a.base == 10.0 and not np.allclose(a(x), b(x))  # the base reaches the rotation


@pytest.mark.parametrize("layer", [object(), "layer", None, np.ones((4, 4))])
def test_modern_like_names_what_it_copies(layer):
    text = message(TypeError, lambda: mha.ModernAttention.like(layer))
    assert "copies the sizes and weights of a MultiHeadAttention" in text and type(layer).__name__ in text
    assert "ModernAttention(d_model, n_heads" in text  # the way to build one instead


@pytest.mark.parametrize("option", ["n_kv_heads", "dtype", "bias"])
def test_modern_like_refuses_an_option_it_copies(option):
    value = {"n_kv_heads": 1, "dtype": np.float32, "bias": False}[option]
    text = message(TypeError, lambda: mha.ModernAttention.like(mha.MultiHeadAttention(8, 2, rng=0),
                                                                **{option: value}))
    assert option in text and "rope, qk_norm, softcap" in text


@pytest.mark.parametrize(("name", "close"), [("llama3-8b", "Llama 3 8B"), ("mistral", "Mistral 7B"),
                                             ("GPT-9", None)])
def test_an_unknown_published_model_lists_the_names(name, close):
    with pytest.raises(KeyError) as caught:  # still a KeyError: `except KeyError` keeps working
        PUBLISHED[name]
    assert isinstance(caught.value, UnknownModel)
    text = str(caught.value)
    assert repr(name) in text and all(repr(k) in text for k in PUBLISHED)
    assert (f"Did you mean {close!r}?" in text) == (close is not None)
    assert PUBLISHED.get(name) is None and name not in PUBLISHED  # the dict protocol is untouched


@pytest.mark.parametrize("seqs", [8192, "8192", None])
def test_comparison_rows_wants_lengths(seqs):
    text = message(TypeError, lambda: comparison_rows(seqs=seqs))
    assert "seqs must be a sequence of lengths" in text and "e.g." in text


def test_comparison_rows_refuses_a_length_below_one():
    assert "seqs[i] must be >= 1" in message(ValueError, lambda: comparison_rows(seqs=(0,)))


@pytest.mark.parametrize("fmt", [format_bytes, format_flops, format_count])
@pytest.mark.parametrize("amount", ["1000", b"10", None, True, [1]])
def test_the_formatters_refuse_what_is_not_a_number(fmt, amount):
    text = message(TypeError, lambda: fmt(amount))
    assert "as a number (int or float)" in text and type(amount).__name__ in text
    assert ("float(...)" in text) == isinstance(amount, str)


def test_the_formatters_take_numpy_numbers():
    assert format_bytes(np.int64(2048)) == format_bytes(2048.0) == "2 KiB"
    assert format_flops(np.float32(1.5e9)) == "1.5 GFLOP"


@pytest.mark.parametrize(("feature_map", "words"), [
    (lambda z: z, "values down to"),  # the identity: negative features
    (lambda z: np.where(z > 0, np.inf, 1.0), "NaN or infinite"),
    (lambda z: -np.exp(z), "values down to"),
])
def test_linear_attention_refuses_a_feature_map_that_is_not_a_weight(feature_map, words):
    q, k, v = np.random.default_rng(0).standard_normal((3, 2, 5, 4))
    for fn in (lambda: linear_attention(q, k, v, feature_map=feature_map),
               lambda: linear_attention(q, k, v, causal=True, feature_map=feature_map),
               lambda: linear_attention_recurrent(q, k, v, feature_map=feature_map)):
        text = message(ValueError, fn)
        assert "feature_map must return finite values >= 0" in text and words in text
        assert "elu_feature_map" in text  # the fix


def test_linear_attention_refuses_a_feature_map_of_the_wrong_shape_or_kind():
    q, k, v = np.random.default_rng(0).standard_normal((3, 5, 4))
    text = message(ValueError, lambda: linear_attention(q, k, v, feature_map=lambda z: z.sum(-1)))
    assert "(5,) + (features,)" in text
    assert "must be a function" in message(TypeError, lambda: linear_attention(q, k, v, feature_map=3))


def test_a_nonnegative_feature_map_is_welcome():
    q, k, v = np.random.default_rng(0).standard_normal((3, 5, 4))
    relu = linear_attention(q, k, v, feature_map=lambda z: np.maximum(z, 0) + 0.1)
    assert relu.shape == (5, 4) and np.isfinite(relu).all()
    weights_sum = linear_attention(q, k, np.ones((5, 1)), feature_map=np.exp)  # rows of weights sum to 1
    np.testing.assert_allclose(weights_sum, 1.0, atol=1e-5)


@pytest.mark.parametrize(("layer_dtype", "cache_dtype"), [(np.float32, np.float64), (np.float64, np.float32)])
def test_decoding_into_a_cache_of_another_dtype_is_refused(layer_dtype, cache_dtype):
    layer = mha.MultiHeadAttention(8, 2, rng=0, dtype=layer_dtype)
    cache = mha.RollingKVCache(1, 2, 4, window=3, dtype=cache_dtype)
    text = message(TypeError, lambda: layer.decode(np.ones((1, 1, 8), layer_dtype), cache))
    assert np.dtype(cache_dtype).name in text and np.dtype(layer_dtype).name in text
    assert "layer.new_cache" in text and cache.length == 0  # nothing was stored


def test_decoding_into_the_layers_own_cache_keeps_float32():
    layer = mha.MultiHeadAttention(8, 2, rng=0, dtype=np.float32)
    block = mha.TransformerBlock(8, 2, rng=0, dtype=np.float32)
    assert layer.decode(np.ones((1, 1, 8), np.float32), layer.new_cache()).dtype == np.float32
    assert block.decode(np.ones((1, 1, 8), np.float32), block.attention.new_cache()).dtype == np.float32
    text = message(TypeError, lambda: block.decode(np.ones((1, 1, 8), np.float32),
                                                   mha.KVCache(1, 2, 4, dtype=np.float64)))
    assert "float64" in text and "float32" in text


def test_a_keras_shaped_mask_is_told_to_add_the_heads_axis():
    layer = mha.MultiHeadAttention(8, 2, rng=0)
    text = message(ValueError, lambda: layer(np.ones((3, 6, 8)), mask=np.ones((3, 6, 6), bool)))
    assert "needs an axis for the heads, mask[:, None]" in text
    plain = message(ValueError, lambda: layer(np.ones((3, 6, 8)), mask=np.ones((4, 4), bool)))
    assert "mask[:, None]" not in plain  # only where it is the fix


def test_yarn_names_original_context():
    text = message(ValueError, lambda: scaled_rotary("yarn", 16, scale=4, original_context=-64))
    assert "original_context must be >= 1" in text


def test_an_overflow_in_float64_does_not_advise_float64():
    q = np.full((1, 2, 4), 1e160)
    text = message(ValueError, lambda: mha.scaled_dot_product_attention(q, q, q))
    assert "overflowed float64" in text and "compute in float64" not in text
    q32 = np.full((1, 2, 4), 1e20, np.float32)
    text = message(ValueError, lambda: mha.scaled_dot_product_attention(q32, q32, q32))
    assert "compute in float64" in text


def test_a_parameter_the_layer_lacks_is_named():
    text = message(ValueError, lambda: setattr(mha.MultiHeadAttention(8, 2, bias=False, rng=0), "b_q",
                                               np.zeros(8)))
    assert "b_q does not exist" in text and "bias=False" in text
