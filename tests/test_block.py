"""The transformer block and its parts, each checked against formulas written out independently."""

import math

import numpy as np
import pytest

import mha
from mha.block import (
    FeedForward,
    LayerNorm,
    TransformerBlock,
    block_parameter_count,
    build_stack,
    dropout,
    gelu,
    layer_norm,
    residual_statistics,
    residual_stream,
)


def layer_norm_loop(x, gamma, beta, eps):
    """Reference: per row, mean and (population) variance with math.fsum, then scale and shift."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        mean = math.fsum(row) / len(row)
        var = math.fsum((v - mean) ** 2 for v in row) / len(row)
        scaled = zip(row, gamma, beta, strict=True)
        out[idx] = [g * (v - mean) / math.sqrt(var + eps) + b for v, g, b in scaled]
    return out


def exact_gelu(x):
    return np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in np.ravel(x)]).reshape(np.shape(x))


# ---------------------------------------------------------------------------------------- layer norm
def test_layer_norm_equals_the_loop_reference_and_normalises_each_token():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 5.0, size=(2, 4, 10))
    gamma, beta = rng.standard_normal(10), rng.standard_normal(10)
    np.testing.assert_allclose(layer_norm(x, gamma, beta, eps=1e-5), layer_norm_loop(x, gamma, beta, 1e-5),
                               rtol=1e-12, atol=1e-12)
    y = LayerNorm(10)(x)
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1, rtol=1e-6)  # 1 - eps / var, var ~ 25


def test_layer_norm_float32_stays_float32_and_survives_a_large_offset():
    rng = np.random.default_rng(1)
    x64 = 1e4 + rng.standard_normal((8, 64))  # features share a large offset
    x32 = x64.astype(np.float32)
    y32 = LayerNorm(64, dtype=np.float32)(x32)
    assert y32.dtype == np.float32
    reference = layer_norm_loop(x32.astype(np.float64), np.ones(64), np.zeros(64), 1e-5)
    np.testing.assert_allclose(y32, reference, atol=2e-3)
    # the one-pass shortcut mean(x²) - mean(x)² loses everything at this offset in float32
    shortcut_var = (x32 * x32).mean(axis=-1) - x32.mean(axis=-1) ** 2
    true_var = x32.astype(np.float64).var(axis=-1)  # about 1
    assert np.abs(shortcut_var - true_var).max() > 0.5


def test_layer_norm_constant_row_gives_beta_not_nan():
    norm = LayerNorm(4)
    norm.beta = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_allclose(norm(np.full((2, 4), 7.0)), [[1, 2, 3, 4]] * 2)


def test_layer_norm_errors():
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., 4\)"):
        LayerNorm(4)(np.ones((2, 5)))
    with pytest.raises(ValueError, match="eps must be"):
        LayerNorm(4, eps=0)
    with pytest.raises(ValueError, match="finite"):
        layer_norm(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="gamma must have shape"):
        layer_norm(np.ones((2, 3)), gamma=np.ones(4))


# ---------------------------------------------------------------------------------------- feed-forward
def test_gelu_is_close_to_the_exact_erf_form_and_keeps_float32():
    x = np.linspace(-6, 6, 241)
    np.testing.assert_allclose(gelu(x), exact_gelu(x), atol=1e-3)
    assert gelu(x.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_feed_forward_equals_its_formula_token_by_token(activation):
    ffn = FeedForward(6, 24, activation=activation, rng=0)
    rng = np.random.default_rng(1)
    ffn.b_1, ffn.b_2 = rng.standard_normal(24), rng.standard_normal(6)
    x = rng.standard_normal((2, 5, 6))
    act = exact_gelu if activation == "gelu" else (lambda h: np.maximum(h, 0))
    tolerance = 2e-3 if activation == "gelu" else 1e-12
    for b in range(2):
        for t in range(5):  # position-wise: each token alone gives the same answer
            expected = act(x[b, t] @ ffn.W_1 + ffn.b_1) @ ffn.W_2 + ffn.b_2
            np.testing.assert_allclose(ffn(x)[b, t], expected, atol=tolerance)
            np.testing.assert_allclose(ffn(x[b, t]), ffn(x)[b, t], rtol=1e-12)


def test_feed_forward_errors_and_no_bias():
    assert set(FeedForward(4, 8, bias=False).parameters()) == {"W_1", "W_2"}
    with pytest.raises(ValueError, match="activation must be one of"):
        FeedForward(4, 8, activation="swish")


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
def test_pre_norm_stream_is_the_input_plus_every_block_update():
    blocks = build_stack(3, 8, 2, rng=0)
    x = np.random.default_rng(1).standard_normal((5, 8))
    states = residual_stream(blocks, x)
    np.testing.assert_array_equal(states[0], x)
    for layer, block in enumerate(blocks):
        np.testing.assert_allclose(states[layer + 1], block(states[layer]), rtol=1e-12)


def test_scaled_init_shrinks_the_residual_writes_only():
    plain, scaled = build_stack(8, 8, 2, rng=0), build_stack(8, 8, 2, rng=0, scaled_init=True)
    np.testing.assert_allclose(scaled[3].attention.W_o, plain[3].attention.W_o / 4)  # 1/sqrt(2 * 8)
    np.testing.assert_allclose(scaled[3].ffn.W_2, plain[3].ffn.W_2 / 4)
    np.testing.assert_array_equal(scaled[3].ffn.W_1, plain[3].ffn.W_1)


def test_residual_statistics_against_direct_computations():
    rng = np.random.default_rng(0)
    states = rng.standard_normal((4, 3, 6))  # (n_blocks + 1, seq, d_model)
    stats = residual_statistics(states)
    for layer in range(4):
        assert stats["rms"][layer] == pytest.approx(math.sqrt(np.mean(states[layer] ** 2)))
        cosines = [states[layer, t] @ states[0, t] / np.linalg.norm(states[layer, t]) /
                   np.linalg.norm(states[0, t]) for t in range(3)]
        assert stats["cosine"][layer] == pytest.approx(np.mean(cosines))
    for layer in range(3):
        ratios = [np.linalg.norm(states[layer + 1, t] - states[layer, t]) / np.linalg.norm(states[layer, t])
                  for t in range(3)]
        assert stats["update"][layer] == pytest.approx(np.mean(ratios))
    with pytest.raises(ValueError, match="n_blocks >= 1"):
        residual_statistics(states[:1])


def test_post_norm_keeps_the_stream_at_unit_size_and_pre_norm_lets_it_grow():
    x = np.random.default_rng(0).standard_normal((8, 16))
    post = residual_statistics(residual_stream(build_stack(12, 16, 2, norm="post", rng=1), x))
    pre = residual_statistics(residual_stream(build_stack(12, 16, 2, norm="pre", rng=1), x))
    np.testing.assert_allclose(post["rms"][1:], 1.0, rtol=1e-4)  # LayerNorm output, gamma 1, beta 0
    assert pre["rms"][-1] > 1.5 * pre["rms"][0]


# ---------------------------------------------------------------------------------------- widget
def test_stack_widget_statistics_are_cached_read_only_and_rendered():
    pytest.importorskip("matplotlib")
    from mha.explorers.block import render_stack, stack_explorer, stack_statistics

    stats = stack_statistics(4, "post", False)
    assert stack_statistics(4, "post", False) is stats
    with pytest.raises(ValueError, match="read-only"):
        stats["rms"][0] = 5.0
    np.testing.assert_allclose(stats["rms"][1:], 1.0, rtol=1e-4)
    fig = render_stack(4, "scaled")
    assert fig.axes[0].get_legend_handles_labels()[1] == ["pre-norm", "post-norm"]
    with pytest.raises(ValueError, match="init must be"):
        render_stack(4, "huge")
    assert len(stack_explorer(depths=(2, 4)).frames) == 4
