"""mha.lab.transformer_block: stacks of random blocks and the statistics of their residual stream."""

import math

import numpy as np
import pytest

from mha.lab.transformer_block import build_stack, residual_statistics, residual_stream


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
