import math

import numpy as np
import pytest

import mha
from mha.positions import rope_frequencies
from mha.rope_scaling import (
    RotaryTable,
    ntk_aware_frequencies,
    position_interpolation,
    scaled_rotary,
    turns_in_context,
    yarn_attention_factor,
    yarn_frequencies,
)


def test_interpolation_reads_position_m_as_m_over_s():
    rng = np.random.default_rng(0)
    x, d = rng.standard_normal((10, 8)), 8
    table = position_interpolation(rope_frequencies(d), 4.0)
    squeezed = mha.apply_rotary(x, np.arange(10), frequencies=table)
    np.testing.assert_allclose(squeezed, mha.apply_rotary(x, np.arange(10) / 4.0), rtol=1e-12)


@pytest.mark.parametrize("d_head", [4, 16, 128])
def test_ntk_keeps_the_fastest_pair_and_slows_the_slowest_by_exactly_s(d_head):
    ratio = ntk_aware_frequencies(d_head, 8.0) / rope_frequencies(d_head)
    assert ratio[0] == pytest.approx(1.0) and ratio[-1] == pytest.approx(1 / 8)
    assert np.all(np.diff(ratio) < 0)  # slower and slower in between


def test_yarn_interpolates_slow_pairs_keeps_fast_ones_and_ramps_between():
    theta = rope_frequencies(64, base=10000.0)
    ratio = yarn_frequencies(theta, 16.0, 4096) / theta
    turns = turns_in_context(theta, 4096)
    np.testing.assert_allclose(ratio[turns > 32], 1.0)
    np.testing.assert_allclose(ratio[turns < 1], 1 / 16)
    ramp = (turns >= 1) & (turns <= 32)
    assert ramp.any() and np.all((ratio[ramp] >= 1 / 16) & (ratio[ramp] <= 1))
    assert turns[0] == pytest.approx(4096 / (2 * math.pi))


def test_yarn_attention_factor_follows_the_paper():
    assert yarn_attention_factor(40.0) == pytest.approx(0.1 * math.log(40.0) + 1)


@pytest.mark.parametrize("method", ["none", "interpolation", "ntk", "yarn"])
def test_scaled_rotary_gives_a_table_for_every_method(method):
    table = scaled_rotary(method, 16, scale=4.0, original_context=32)
    assert table.method == method and table.d_head == 16
    assert (table.attention_factor > 1) == (method == "yarn")
    assert np.all(table.frequencies <= rope_frequencies(16) + 1e-15)  # scaling only ever slows pairs


def test_rotary_tables_and_scales_are_checked():
    with pytest.raises(ValueError, match="every frequency must be > 0"):
        RotaryTable(np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="scale is the factor by which the context grows"):
        position_interpolation(rope_frequencies(4), 0.5)
    with pytest.raises(ValueError, match="YaRN needs original_context"):
        scaled_rotary("yarn", 8, scale=2.0)
    with pytest.raises(ValueError, match=r"frequencies must have shape \(d_head // 2,\) = \(2,\)"):
        mha.apply_rotary(np.ones((3, 4)), frequencies=np.ones(3))
