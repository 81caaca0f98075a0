"""mha.block_grad against central finite differences of the package's own forward passes.

The numerical side calls ``LayerNorm``, ``FeedForward``, ``TransformerBlock`` and the decoder block as a
learner would; only the analytic side uses mha.block_grad.
"""

import numpy as np
import pytest

import mha
from mha.block_grad import (
    activation_backward,
    block_backward,
    block_forward,
    decoder_block_backward,
    decoder_block_forward,
    embedding_backward,
    feed_forward_backward,
    feed_forward_forward,
    layer_norm_backward,
    layer_norm_forward,
)
from mha.feed_forward import ACTIVATIONS
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
    y, cache = layer_norm_forward(norm, x)
    np.testing.assert_allclose(y, norm(x), rtol=1e-12)
    grads, dx = layer_norm_backward(upstream, cache)
    _check_all(lambda: float(np.sum(norm(x) * upstream)), grads, norm.parameters(), {"x": (dx, x)})


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_activation_backward_matches_finite_differences(activation):
    x = np.linspace(-3, 3, 13) + 0.01  # avoid relu's kink at exactly 0
    analytic = activation_backward(activation, x, np.ones_like(x))
    numeric = numerical_gradient(lambda: float(np.sum(ACTIVATIONS[activation](x))), x)
    if activation == "gelu_exact":  # the package's erf is an approximation (error < 1.5e-7): so is its slope
        np.testing.assert_allclose(analytic, numeric, atol=2e-6)
    else:
        assert_gradients_match(analytic, numeric, activation)


@pytest.mark.parametrize("bias", [True, False])
def test_feed_forward_backward_matches_finite_differences(bias):
    rng = np.random.default_rng(1)
    ffn = mha.FeedForward(4, 6, bias=bias, rng=2)
    _randomise(ffn.parameters(), rng)
    x, upstream = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    out, cache = feed_forward_forward(ffn, x)
    np.testing.assert_allclose(out, ffn(x), rtol=1e-12)
    grads, dx = feed_forward_backward(upstream, cache)
    assert set(grads) == set(ffn.parameters())
    _check_all(lambda: float(np.sum(ffn(x) * upstream)), grads, ffn.parameters(), {"x": (dx, x)})


def test_embedding_backward_sums_repeated_tokens_like_finite_differences():
    rng = np.random.default_rng(3)
    table, tokens = rng.standard_normal((5, 3)), np.array([[0, 4, 0, 2]])
    upstream = rng.standard_normal((1, 4, 3))
    analytic = embedding_backward(upstream, tokens, 5)
    numeric = numerical_gradient(lambda: float(np.sum(table[tokens] * upstream)), table)
    assert_gradients_match(analytic, numeric, "table")
    assert np.all(analytic[[1, 3]] == 0)  # unused tokens get nothing


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("causal", [True, False])
def test_block_backward_matches_finite_differences(norm, causal):
    rng = np.random.default_rng(4)
    block = mha.TransformerBlock(4, 2, d_ff=6, norm=norm, rng=5)
    _randomise(block.parameters(), rng)
    x, upstream = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    mask = np.array([True, True, False])[None, None, None, :]  # the last key is padding
    out, cache = block_forward(block, x, mask=mask, causal=causal)
    np.testing.assert_allclose(out, block(x, mask=mask, causal=causal), rtol=1e-11)
    grads, dx = block_backward(upstream, cache)
    assert set(grads) == set(block.parameters())

    def loss():
        return float(np.sum(block(x, mask=mask, causal=causal) * upstream))

    _check_all(loss, grads, block.parameters(), {"x": (dx, x)})


class _Decoder:
    """The attributes decoder_block_forward reads, built straight from the package's layers."""

    def __init__(self, rng):
        self.self_attention = mha.MultiHeadAttention(4, 2, rng=rng)
        self.cross_attention = mha.MultiHeadAttention(4, 2, rng=rng)
        self.ffn = mha.FeedForward(4, 6, rng=rng)
        self.norm1, self.norm2, self.norm3 = (mha.LayerNorm(4) for _ in range(3))

    def parameters(self):
        parts = ("self_attention", "cross_attention", "ffn", "norm1", "norm2", "norm3")
        return {f"{p}.{n}": a for p in parts for n, a in getattr(self, p).parameters().items()}

    def __call__(self, x, memory, memory_mask):
        x = x + self.self_attention(self.norm1(x), causal=True)
        x = x + self.cross_attention(self.norm2(x), memory, mask=memory_mask)
        return x + self.ffn(self.norm3(x))


def test_decoder_block_backward_matches_finite_differences_including_the_memory():
    rng = np.random.default_rng(6)
    block = _Decoder(np.random.default_rng(7))
    _randomise(block.parameters(), rng)
    x, memory = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    upstream = rng.standard_normal((2, 3, 4))
    memory_mask = np.array([[True] * 5, [True, True, True, False, False]])[:, None, None, :]
    out, cache = decoder_block_forward(block, x, memory, memory_mask=memory_mask)
    np.testing.assert_allclose(out, block(x, memory, memory_mask), rtol=1e-11)
    grads, dx, d_memory = decoder_block_backward(upstream, cache)
    assert np.all(d_memory[1, 3:] == 0)  # padded source positions receive no gradient

    def loss():
        return float(np.sum(block(x, memory, memory_mask) * upstream))

    _check_all(loss, grads, block.parameters(), {"x": (dx, x), "memory": (d_memory, memory)})


def test_block_forward_keeps_float32():
    block = mha.TransformerBlock(4, 2, rng=0, dtype=np.float32)
    x = np.ones((1, 3, 4), dtype=np.float32)
    out, cache = block_forward(block, x, causal=True)
    grads, dx = block_backward(np.ones_like(out), cache)
    assert out.dtype == dx.dtype == np.float32
    assert all(g.dtype == np.float32 for g in grads.values())


@pytest.mark.parametrize(("d_out", "tokens", "words"), [
    (np.ones((1, 2, 2)), np.array([[-1, 0]]), r"tokens must lie in \[0, 3\), got values from -1"),
    (np.ones((1, 2, 2)), np.array([[5, 0]]), r"tokens must lie in \[0, 3\), got values from 0 to 5"),
    (np.ones((1, 2, 2)), np.array([[0.0, 1.0]]), "expected integer tokens of shape"),
    (np.ones((1, 2, 2)), np.array([0, 1, 2]), r"expected integer tokens of shape \(1, 2\)"),
])
def test_embedding_backward_names_tokens_it_cannot_place(d_out, tokens, words):
    from mha.block_grad import embedding_backward
    with pytest.raises(ValueError, match=words):
        embedding_backward(d_out, tokens, 3)
