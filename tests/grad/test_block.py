"""mha.grad.block against central finite differences of the package's own forward passes.

The numerical side calls ``LayerNorm``, ``FeedForward``, ``TransformerBlock`` and ``DecoderBlock`` as a
learner would; the analytic side takes the caches of their ``forward`` to mha.grad.
"""

import numpy as np
import pytest

import mha
from mha.feed_forward import ACTIVATIONS
from mha.grad import (
    activation_backward,
    block_backward,
    decoder_block_backward,
    feed_forward_backward,
    layer_norm_backward,
)
from tests.gradcheck import assert_gradients_match, numerical_gradient


def _randomise(params, rng):
    for arr in params.values():  # fresh norms are ones/zeros and biases zeros: exercise every entry
        arr[...] = rng.standard_normal(arr.shape) * 0.5


def _check_all(loss, analytic_grads, params, d_inputs):
    for name, arr in params.items():
        assert_gradients_match(analytic_grads[name], numerical_gradient(loss, arr), name)
    for name, (analytic, arr) in d_inputs.items():
        assert_gradients_match(analytic, numerical_gradient(loss, arr), name)


def test_layer_norm_backward_matches_finite_differences():
    rng = np.random.default_rng(0)
    norm = mha.LayerNorm(5)
    _randomise(norm.parameters(), rng)
    x, upstream = rng.standard_normal((2, 3, 5)) * 3 + 1, rng.standard_normal((2, 3, 5))
    y, cache = norm.forward(x)
    np.testing.assert_array_equal(y, norm(x))
    grads, dx = layer_norm_backward(upstream, cache)
    _check_all(lambda: float(np.sum(norm(x) * upstream)), grads, norm.parameters(), {"x": (dx, x)})


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_activation_backward_matches_finite_differences(activation):
    x = np.linspace(-3, 3, 13) + 0.01  # avoid relu's kink at exactly 0
    analytic = activation_backward(activation, x, np.ones_like(x))
    numeric = numerical_gradient(lambda: float(np.sum(ACTIVATIONS[activation](x))), x)
    if activation == "gelu_exact":  # the slope of x Φ(x), with the package's erf (error < 1.5e-7) for Φ
        np.testing.assert_allclose(analytic, numeric, atol=2e-6)
    else:
        assert_gradients_match(analytic, numeric, activation)


@pytest.mark.parametrize("bias", [True, False])
def test_feed_forward_backward_matches_finite_differences(bias):
    rng = np.random.default_rng(1)
    ffn = mha.FeedForward(4, 6, bias=bias, rng=2)
    _randomise(ffn.parameters(), rng)
    x, upstream = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    out, cache = ffn.forward(x)
    np.testing.assert_array_equal(out, ffn(x))
    grads, dx = feed_forward_backward(upstream, cache)
    assert set(grads) == set(ffn.parameters())
    _check_all(lambda: float(np.sum(ffn(x) * upstream)), grads, ffn.parameters(), {"x": (dx, x)})


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("causal", [True, False])
def test_block_backward_matches_finite_differences(norm, causal):
    rng = np.random.default_rng(4)
    block = mha.TransformerBlock(4, 2, d_ff=6, norm=norm, rng=5)
    _randomise(block.parameters(), rng)
    x, upstream = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    mask = np.array([True, True, False])[None, None, None, :]  # the last key is padding
    out, cache = block.forward(x, mask=mask, causal=causal)
    np.testing.assert_array_equal(out, block(x, mask=mask, causal=causal))
    grads, dx = block_backward(upstream, cache)
    assert set(grads) == set(block.parameters())

    def loss():
        return float(np.sum(block(x, mask=mask, causal=causal) * upstream))

    _check_all(loss, grads, block.parameters(), {"x": (dx, x)})


def test_decoder_block_backward_matches_finite_differences_including_the_memory():
    rng = np.random.default_rng(6)
    block = mha.DecoderBlock(4, 2, d_ff=6, activation="gelu", rng=7)
    _randomise(block.parameters(), rng)
    x, memory = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    upstream = rng.standard_normal((2, 3, 4))
    memory_mask = np.array([[True] * 5, [True, True, True, False, False]])[:, None, None, :]
    out, cache = block.forward(x, memory, memory_mask=memory_mask)
    np.testing.assert_array_equal(out, block(x, memory, memory_mask=memory_mask))
    grads, dx, d_memory = decoder_block_backward(upstream, cache)
    assert np.all(d_memory[1, 3:] == 0)  # padded source positions receive no gradient

    def loss():
        return float(np.sum(block(x, memory, memory_mask=memory_mask) * upstream))

    _check_all(loss, grads, block.parameters(), {"x": (dx, x), "memory": (d_memory, memory)})


def test_block_forward_keeps_float32():
    block = mha.TransformerBlock(4, 2, rng=0, dtype=np.float32)
    x = np.ones((1, 3, 4), dtype=np.float32)
    out, cache = block.forward(x, causal=True)
    grads, dx = block_backward(np.ones_like(out), cache)
    assert out.dtype == dx.dtype == np.float32
    assert all(g.dtype == np.float32 for g in grads.values())


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_block_backward_goes_through_dropout_with_the_forwards_masks(norm):
    """Training with dropout: the backward multiplies by the same masks the forward drew."""
    rng = np.random.default_rng(8)
    block = mha.TransformerBlock(4, 2, d_ff=6, norm=norm, dropout=0.3, rng=9)
    _randomise(block.parameters(), rng)
    x, upstream = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))

    def run():  # the same dropout masks at every call: a fresh generator of the same seed
        return block.forward(x, causal=True, training=True, rng=np.random.default_rng(10))

    out, cache = run()
    assert all(scale is not None for scale in cache.dropout)
    assert not np.allclose(out, block(x, causal=True))  # something was dropped
    grads, dx = block_backward(upstream, cache)
    _check_all(lambda: float(np.sum(run()[0] * upstream)), grads, block.parameters(), {"x": (dx, x)})


def test_the_backward_passes_refuse_each_others_caches():
    block, decoder = mha.TransformerBlock(4, 2, rng=0), mha.DecoderBlock(4, 2, rng=0)
    x = np.ones((1, 3, 4))
    with pytest.raises(ValueError, match="use decoder_block_backward"):
        block_backward(x, decoder.forward(x, x)[1])
    with pytest.raises(ValueError, match="use block_backward"):
        decoder_block_backward(x, block.forward(x)[1])
