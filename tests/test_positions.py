"""Position encodings: each checked against a formula written independently, with loops and ``math``."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mha
from mha.positions import (
    RelativePositionBias,
    alibi_bias,
    alibi_slopes,
    apply_rotary,
    relative_bias,
    relative_positions,
    rope_frequencies,
    sinusoidal_encoding,
)


# ---------------------------------------------------------------------------------------- sinusoidal
@pytest.mark.parametrize("seq_len, d_model, base", [(1, 2, 10000.0), (7, 6, 10000.0), (20, 16, 100.0)])
def test_sinusoidal_encoding_matches_the_paper_formula_entry_by_entry(seq_len, d_model, base):
    pe = sinusoidal_encoding(seq_len, d_model, base=base)
    for pos in range(seq_len):
        for i in range(d_model // 2):
            angle = pos / base ** (2 * i / d_model)
            assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-12)
            assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-12)


def test_sinusoidal_dot_product_depends_on_the_offset_only():
    pe = sinusoidal_encoding(64, 32)
    for offset in (1, 3, 10):
        dots = [pe[p] @ pe[p + offset] for p in range(64 - offset)]
        np.testing.assert_allclose(dots, dots[0], rtol=1e-10)
        # and it equals a sum of cosines of the offset (cos a cos b + sin a sin b = cos(a - b))
        expected = sum(math.cos(offset / 10000 ** (2 * i / 32)) for i in range(16))
        assert dots[0] == pytest.approx(expected, rel=1e-10)


def test_sinusoidal_encoding_dtype_and_errors():
    assert sinusoidal_encoding(4, 8, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="d_model must be even"):
        sinusoidal_encoding(4, 7)
    with pytest.raises(ValueError, match="seq_len must be >= 1"):
        sinusoidal_encoding(0, 8)
    with pytest.raises(ValueError, match="base must be"):
        sinusoidal_encoding(4, 8, base=1.0)
    with pytest.raises(TypeError, match="dtype"):
        sinusoidal_encoding(4, 8, dtype=np.int32)


# ---------------------------------------------------------------------------------------- relative bias
def bias_loop(table, seq_q, seq_k):
    """Reference: position of query i is seq_k - seq_q + i; clip the offset; look up the column."""
    n_heads, width = table.shape
    max_distance = (width - 1) // 2
    out = np.zeros((n_heads, seq_q, seq_k))
    for h in range(n_heads):
        for i in range(seq_q):
            for j in range(seq_k):
                offset = j - (seq_k - seq_q + i)
                offset = max(-max_distance, min(max_distance, offset))
                out[h, i, j] = table[h, offset + max_distance]
    return out


@pytest.mark.parametrize("seq_q, seq_k, max_distance", [(5, 5, 2), (3, 8, 4), (1, 6, 1), (6, 6, 0)])
def test_relative_bias_equals_the_loop_reference(seq_q, seq_k, max_distance):
    table = np.random.default_rng(0).standard_normal((3, 2 * max_distance + 1))
    np.testing.assert_array_equal(relative_bias(table, seq_q, seq_k), bias_loop(table, seq_q, seq_k))


def test_relative_positions_are_key_minus_query_and_end_aligned():
    offsets = relative_positions(2, 5)
    assert offsets.shape == (2, 5)
    # the last query sits at the last key position: offset 0 in the bottom-right corner
    assert offsets[-1, -1] == 0 and offsets[0, 3] == 0
    np.testing.assert_array_equal(np.diff(offsets, axis=1), 1)  # one step right = one position later
    np.testing.assert_array_equal(relative_positions(4), -relative_positions(4).T)


def test_bias_reaches_the_scores_like_a_per_head_softmax_loop():
    layer = mha.MultiHeadAttention(8, 2, rng=0)
    position_bias = RelativePositionBias(2, max_distance=3, rng=1, init_std=1.0)
    x = np.random.default_rng(2).standard_normal((5, 8))
    _, weights = layer(x, bias=position_bias(5), return_weights=True)
    q, k, _ = layer.project(x)
    bias = bias_loop(position_bias.table, 5, 5)
    for h in range(2):
        qh, kh = q[:, 4 * h:4 * h + 4], k[:, 4 * h:4 * h + 4]
        for i in range(5):
            scores = [qh[i] @ kh[j] / 2.0 + bias[h, i, j] for j in range(5)]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            np.testing.assert_allclose(weights[h, i], np.array(exps) / sum(exps), rtol=1e-12)


def test_a_strong_preference_for_offset_minus_one_makes_a_previous_token_head():
    layer = mha.MultiHeadAttention(16, 2, rng=0)
    position_bias = RelativePositionBias(2, max_distance=4)
    position_bias.prefer_offset(0, -1, strength=20.0)
    x = np.random.default_rng(0).standard_normal((7, 16))
    _, weights = layer(x, bias=position_bias(7), return_weights=True)
    np.testing.assert_array_equal(weights[0, 1:].argmax(axis=1), np.arange(6))  # token i looks at i - 1
    assert weights[0, 1:].max(axis=1).min() > 0.99
    assert weights[1].max() < 0.99  # head 1 kept its zero table: content decides


def test_bias_table_generalises_to_longer_sequences_by_clipping():
    position_bias = RelativePositionBias(1, max_distance=2, rng=0, init_std=1.0)
    long = position_bias(10)[0]
    assert long[9, 0] == position_bias.table[0, 0]  # offset -9 clipped to -2
    assert long[0, 9] == position_bias.table[0, -1]


def test_relative_position_bias_parameters_and_errors():
    position_bias = RelativePositionBias(4, 8, dtype=np.float32)
    assert position_bias.table.shape == (4, 17) and position_bias.table.dtype == np.float32
    assert position_bias.parameter_count() == 4 * 17
    assert not position_bias.table.any()  # position-blind until set
    np.testing.assert_array_equal(position_bias.offsets, np.arange(-8, 9))
    assert position_bias(5).dtype == np.float32
    with pytest.raises(ValueError, match="table must have shape"):
        position_bias.table = np.zeros((4, 16))
    with pytest.raises(ValueError, match="head must be in"):
        position_bias.prefer_offset(4, 0)
    with pytest.raises(ValueError, match="offset must be"):
        position_bias.prefer_offset(0, 9)
    with pytest.raises(ValueError, match="init_std"):
        RelativePositionBias(2, init_std=-1.0)
    with pytest.raises(ValueError, match="seq_k=2 < seq_q=3"):
        position_bias(3, 2)
    with pytest.raises(ValueError, match="table must have shape"):
        relative_bias(np.zeros((2, 4)), 3)


# ---------------------------------------------------------------------------------------- RoPE
def rotate_as_complex(x, positions, base=10000.0):
    """Reference: each pair (x[2i], x[2i+1]) is the complex number x[2i] + i x[2i+1], times e^{i p w_i}."""
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    speeds = np.array([base ** (-2 * i / d) for i in range(d // 2)])
    z = z * np.exp(1j * np.asarray(positions, dtype=float)[..., None] * speeds)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def test_rotary_equals_complex_multiplication():
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 8))  # (batch, n_heads, seq, d_head)
    np.testing.assert_allclose(apply_rotary(x), rotate_as_complex(x, np.arange(6)), rtol=1e-12, atol=1e-12)
    positions = np.array([5, 9, 100, 101, 102, 4000])
    np.testing.assert_allclose(apply_rotary(x, positions, base=500.0),
                               rotate_as_complex(x, positions, base=500.0), rtol=1e-11, atol=1e-11)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 500), n=st.integers(0, 500), shift=st.integers(-200, 2000),
       seed=st.integers(0, 2**32 - 1))
def test_rotary_score_depends_on_the_offset_only(m, n, shift, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 1, 16))  # one token each, d_head = 16
    score = apply_rotary(q, [m])[0] @ apply_rotary(k, [n])[0]
    shifted = apply_rotary(q, [m + shift])[0] @ apply_rotary(k, [n + shift])[0]
    assert shifted == pytest.approx(score, rel=1e-9, abs=1e-9)


def test_rotary_score_matrix_is_constant_along_diagonals_and_keeps_norms():
    x = np.broadcast_to(np.random.default_rng(3).standard_normal(32), (12, 32))  # one word at 12 positions
    rotated = apply_rotary(x)
    scores = rotated @ rotated.T  # (seq, seq)
    for offset in range(-11, 12):
        diagonal = np.diagonal(scores, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], rtol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=1), np.linalg.norm(x, axis=1), rtol=1e-12)


def test_rotary_keeps_float32_and_rejects_bad_input():
    x32 = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    out = apply_rotary(x32, np.array([1000, 1001, 1002, 1003]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, rotate_as_complex(x32.astype(np.float64), [1000, 1001, 1002, 1003]),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="must be even"):
        apply_rotary(np.ones((3, 5)))
    with pytest.raises(ValueError, match="do not broadcast"):
        apply_rotary(np.ones((3, 4)), positions=[0, 1])
    with pytest.raises(ValueError, match=r"positions of shape \(2, 3\) do not broadcast to x's .* = \(3,\)"):
        apply_rotary(np.ones((3, 4)), positions=np.zeros((2, 3)))  # would add an axis to the result
    assert apply_rotary(np.ones((2, 3, 4)), positions=np.arange(3)).shape == (2, 3, 4)
    with pytest.raises(ValueError, match="finite"):
        apply_rotary(np.ones((3, 4)), positions=[0, np.nan, 2])
    with pytest.raises(ValueError, match="shape"):
        apply_rotary(np.ones(4))


def test_rope_frequencies_follow_the_geometric_formula():
    speeds = rope_frequencies(10, base=1000.0)
    np.testing.assert_allclose(speeds, [1000.0 ** (-2 * i / 10) for i in range(5)], rtol=1e-14)


def test_rotary_attention_is_shift_invariant_but_not_order_blind():
    layer = mha.MultiHeadAttention(16, 2, rng=0)
    x = np.random.default_rng(1).standard_normal((6, 16))
    q, k, v = (mha.split_heads(a, 2) for a in layer.project(x))  # (n_heads, seq, d_head)

    def weights(positions):
        return mha.scaled_dot_product_attention(apply_rotary(q, positions), apply_rotary(k, positions), v,
                                                return_weights=True)[1]

    np.testing.assert_allclose(weights(np.arange(6) + 37), weights(np.arange(6)), rtol=1e-9)
    assert not np.allclose(weights(np.arange(6)[::-1]), weights(np.arange(6)))


# ---------------------------------------------------------------------------------------- ALiBi
@pytest.mark.parametrize("n_heads", [1, 2, 8, 16])
def test_alibi_slopes_for_powers_of_two_are_two_to_the_minus_8h_over_n(n_heads):
    expected = [2 ** (-8 * (h + 1) / n_heads) for h in range(n_heads)]
    np.testing.assert_allclose(alibi_slopes(n_heads), expected, rtol=1e-14)


def test_alibi_slopes_between_powers_of_two_interleave_the_next_power():
    # 6 heads: the 4 slopes of n=4, then the 1st and 3rd slopes of n=8 (2^-1, 2^-3)
    np.testing.assert_allclose(alibi_slopes(6), [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3], rtol=1e-14)
    assert len(set(alibi_slopes(12))) == 12


def test_alibi_bias_is_minus_slope_times_distance():
    bias = alibi_bias(4, 3, 5)
    slopes = alibi_slopes(4)
    for h in range(4):
        for i in range(3):
            for j in range(5):
                assert bias[h, i, j] == pytest.approx(-slopes[h] * abs(j - (2 + i)))
    assert alibi_bias(2, 4, dtype=np.float32).dtype == np.float32





