"""The transformer block, dropout and stacks of blocks, each checked against independent formulas."""

import math

import numpy as np
import pytest

import mha
from mha.block import (
    TransformerBlock,
    block_parameter_count,
    dropout,
)
from tests.reference_block import layer_norm_loop


# ---------------------------------------------------------------------------------------- dropout
def test_dropout_preserves_the_expectation():
    rng = np.random.default_rng(0)
    x = np.linspace(-2, 2, 50)
    rate, trials = 0.3, 4000
    mean = np.mean([dropout(x, rate, rng) for _ in range(trials)], axis=0)
    # each entry is x/(1-rate) with probability 1-rate, else 0: variance x² rate/(1-rate)
    std_of_mean = np.abs(x) * math.sqrt(rate / (1 - rate)) / math.sqrt(trials)
    assert np.all(np.abs(mean - x) <= 5 * std_of_mean + 1e-12)


def test_dropout_zeroes_about_rate_of_the_entries_and_scales_the_rest():
    x = np.ones(20000, dtype=np.float32)
    y = dropout(x, 0.25, np.random.default_rng(1))
    assert y.dtype == np.float32
    assert abs((y == 0).mean() - 0.25) < 5 * math.sqrt(0.25 * 0.75 / 20000)
    np.testing.assert_allclose(y[y != 0], np.float32(1 / 0.75))


def test_dropout_is_deterministic_given_a_seed_and_differs_between_calls():
    x = np.ones((4, 8))
    a = dropout(x, 0.5, np.random.default_rng(7))
    b = dropout(x, 0.5, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    rng = np.random.default_rng(7)
    assert not np.array_equal(dropout(x, 0.5, rng), dropout(x, 0.5, rng))


def test_dropout_off_is_the_identity_and_bad_arguments_raise():
    x = np.arange(5.0)
    assert dropout(x, 0.9, training=False) is x
    assert dropout(x, 0.0, np.random.default_rng(0)) is x
    with pytest.raises(ValueError, match=r"rate must be a number in \[0, 1\)"):
        dropout(x, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rate"):
        dropout(x, -0.1, np.random.default_rng(0))
    with pytest.raises(TypeError, match="Generator"):
        dropout(x, 0.5, 42)
    with pytest.raises(TypeError, match="Generator"):
        dropout(x, 0.5)


# ---------------------------------------------------------------------------------------- the block
def random_block(norm, seed=0, **kwargs):
    block = TransformerBlock(8, 2, 16, norm=norm, rng=seed, **kwargs)
    rng = np.random.default_rng(seed + 1)
    for part in (block.norm1, block.norm2, block.ffn):  # non-trivial gamma, beta and biases
        for name, arr in part.parameters().items():
            setattr(part, name, arr + 0.3 * rng.standard_normal(arr.shape))
    return block


def ln(x, norm):
    return layer_norm_loop(x, norm.gamma, norm.beta, norm.eps)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_block_equals_the_direct_formula(norm):
    block = random_block(norm)
    x = np.random.default_rng(5).standard_normal((2, 6, 8))
    attn = lambda y: block.attention(y, causal=True)  # noqa: E731
    ffn = block.ffn
    if norm == "pre":
        h = x + attn(ln(x, block.norm1))
        expected = h + ffn(ln(h, block.norm2))
    else:
        h = ln(x + attn(x), block.norm1)
        expected = ln(h + ffn(h), block.norm2)
    np.testing.assert_allclose(block(x, causal=True), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_block_matches_torch_transformer_encoder_layer(norm):
    torch = pytest.importorskip("torch")
    block = random_block(norm)
    attention_rng = np.random.default_rng(9)
    for name in ("b_q", "b_k", "b_v", "b_o"):
        setattr(block.attention, name, attention_rng.standard_normal(8))
    reference = torch.nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=norm == "pre",
        activation=lambda t: torch.nn.functional.gelu(t, approximate="tanh"), dtype=torch.float64)
    state = {f"self_attn.{k}": v for k, v in block.attention.to_torch_state_dict().items()}
    state |= {"linear1.weight": block.ffn.W_1.T, "linear1.bias": block.ffn.b_1,
              "linear2.weight": block.ffn.W_2.T, "linear2.bias": block.ffn.b_2,
              "norm1.weight": block.norm1.gamma, "norm1.bias": block.norm1.beta,
              "norm2.weight": block.norm2.gamma, "norm2.bias": block.norm2.beta}
    reference.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()})
    reference.eval()
    x = np.random.default_rng(4).standard_normal((2, 6, 8))
    future = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)  # torch: True = blocked
    with torch.no_grad():
        expected = reference(torch.from_numpy(x), src_mask=future).numpy()
    np.testing.assert_allclose(block(x, causal=True), expected, rtol=1e-10, atol=1e-10)


def test_pre_and_post_norm_differ_with_the_same_weights():
    pre, post = random_block("pre"), random_block("post")
    x = np.random.default_rng(0).standard_normal((4, 8))
    assert not np.allclose(pre(x), post(x))
    fresh_post = TransformerBlock(8, 2, norm="post", rng=0)  # gamma 1, beta 0: output ends in a norm
    np.testing.assert_allclose(fresh_post(x).mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(fresh_post(x).var(axis=-1), 1, rtol=1e-3)
    assert not np.allclose(TransformerBlock(8, 2, rng=0)(x).var(axis=-1), 1, rtol=1e-3)  # pre-norm does not


def test_block_dropout_only_in_training_with_an_explicit_generator():
    block = TransformerBlock(8, 2, dropout=0.5, rng=0)
    x = np.random.default_rng(1).standard_normal((5, 8))
    np.testing.assert_array_equal(block(x), block(x))  # evaluation: deterministic
    np.testing.assert_array_equal(block(x), TransformerBlock(8, 2, dropout=0.0, rng=0)(x))
    trained_a = block(x, training=True, rng=np.random.default_rng(3))
    trained_b = block(x, training=True, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(trained_a, trained_b)
    assert not np.allclose(trained_a, block(x))
    with pytest.raises(TypeError, match="rng=numpy.random.Generator"):
        block(x, training=True)


def test_block_keeps_float32_and_passes_masks_and_biases_through():
    block = TransformerBlock(8, 2, rng=0, dtype=np.float32)
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    out, weights = block(x, bias=mha.positions.alibi_bias(2, 5), causal=True, return_weights=True)
    assert out.dtype == np.float32 and weights.dtype == np.float32
    assert weights.shape == (2, 2, 5, 5)
    assert np.all(np.triu(weights[0, 0], 1) == 0)  # causal reached the attention


def test_block_parameter_count_is_12_d_squared_plus_13_d_and_matches_the_arrays():
    for d_model in (8, 16, 64):
        block = TransformerBlock(d_model, 4, rng=0)
        assert block.parameter_count() == sum(a.size for a in block.parameters().values())
        assert block.parameter_count() == 12 * d_model**2 + 13 * d_model
        assert block_parameter_count(d_model, 4) == 12 * d_model**2 + 13 * d_model
    # without biases: 4 d² (attention) + 2 d d_ff (FFN) + 4 d (norms)
    assert TransformerBlock(16, 4, 32, bias=False, rng=0).parameter_count() == 4 * 256 + 2 * 16 * 32 + 64
    assert block_parameter_count(16, 4, 32, bias=False) == 4 * 256 + 2 * 16 * 32 + 64
    names = set(TransformerBlock(8, 2, rng=0).parameters())
    assert {"attention.W_q", "ffn.W_1", "norm1.gamma", "norm2.beta"} <= names


def test_block_errors():
    with pytest.raises(ValueError, match="norm must be 'pre' or 'post'"):
        TransformerBlock(8, 2, norm="sandwich")
    with pytest.raises(ValueError, match="dropout rate"):
        TransformerBlock(8, 2, dropout=1.0)
    with pytest.raises(ValueError, match="not divisible"):
        TransformerBlock(10, 4)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., 8\)"):
        TransformerBlock(8, 2)(np.ones((3, 4)))


# ---------------------------------------------------------------------------------------- stacks





def test_head_mask_reaches_the_attention_layer():
    block = TransformerBlock(16, 4, norm="post", rng=0)
    x = np.random.default_rng(5).standard_normal((2, 6, 16))
    head_mask = np.array([1.0, 0.0, 1.0, 1.0])
    out = block(x, head_mask=head_mask)
    # By hand: the block's own parts, with the attention layer given the mask directly.
    attended = block.attention(x, head_mask=head_mask)
    h = block.norm1(x + attended)
    np.testing.assert_allclose(out, block.norm2(h + block.ffn(h)), atol=1e-12)
    assert not np.allclose(out, block(x))
    np.testing.assert_allclose(block(x, head_mask=np.ones(4)), block(x), atol=0)
