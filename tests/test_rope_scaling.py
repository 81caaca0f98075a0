import math
import types

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
    yarn_ramp,
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


def test_the_papers_yarn_ramps_in_turns():
    theta = rope_frequencies(64, base=10000.0)
    ratio = yarn_frequencies(64, 16.0, 4096, ramp="turns") / theta
    turns = turns_in_context(theta, 4096)
    np.testing.assert_allclose(ratio[turns > 32], 1.0)
    np.testing.assert_allclose(ratio[turns < 1], 1 / 16)
    ramp = (turns >= 1) & (turns <= 32)
    assert ramp.any()
    np.testing.assert_allclose(ratio[ramp], (turns[ramp] - 1) / 31 * (1 - 1 / 16) + 1 / 16, rtol=1e-12)
    assert turns[0] == pytest.approx(4096 / (2 * math.pi))


def yarn_by_the_reference_recipe(d_head, scale, context, base=10000.0, beta_slow=1.0, beta_fast=32.0,
                                 truncate=True):
    """YaRN's table as the reference code computes it, written from its description, one pair at a time.

    The pair i that turns n times over `context` positions solves context * base**(-2i/d) / 2pi = n.
    The ramp runs linearly in the pair index from the beta_fast pair (rounded down, at least 0) to the
    beta_slow pair (rounded up, at most d_head - 1); a pair before it keeps its speed, one after it is
    divided by the scale.
    """
    def pair_turning(n):
        return d_head / 2 * math.log(context / (2 * math.pi * n)) / math.log(base)

    start, stop = pair_turning(beta_fast), pair_turning(beta_slow)
    if truncate:
        start, stop = math.floor(start), math.ceil(stop)
    start, stop = max(start, 0), min(stop, d_head - 1)
    if stop == start:
        stop = stop + 0.001
    table = []
    for i in range(d_head // 2):
        speed = 1.0 / base ** (2 * i / d_head)
        along = min(max((i - start) / (stop - start), 0.0), 1.0)  # 0 before the ramp, 1 after it
        table.append(along * speed / scale + (1 - along) * speed)
    return np.array(table)


#: (d_head, scale, original context, base, beta_slow, beta_fast, truncate): Llama 2 and 3 style, DeepSeek-V2's
#: rotary part (64, x40), Qwen2.5 (base 1e6, x4), gpt-oss (no truncation), the chapter's tiny GPT, one pair
#: only, and contexts so short or so long that the ramp's ends leave the table.
YARN_CASES = [
    (128, 4.0, 4096, 10000.0, 1.0, 32.0, True), (128, 8.0, 8192, 500000.0, 1.0, 32.0, True),
    (64, 40.0, 4096, 10000.0, 1.0, 32.0, True), (128, 4.0, 32768, 1e6, 1.0, 32.0, True),
    (64, 32.0, 4096, 150000.0, 1.0, 32.0, False), (16, 4.0, 32, 10000.0, 1.0, 32.0, True),
    (2, 4.0, 32, 10000.0, 1.0, 32.0, True), (16, 2.5, 4, 10000.0, 1.0, 32.0, True),
    (16, 3.0, 10**9, 10000.0, 1.0, 32.0, True), (32, 16.0, 2048, 10000.0, 0.5, 8.0, False),
]


@pytest.mark.parametrize("case", YARN_CASES)
def test_yarn_follows_the_reference_code_ramp_in_the_pair_index(case):
    d_head, scale, context, base, slow, fast, truncate = case
    ours = yarn_frequencies(d_head, scale, context, base=base, alpha=slow, beta=fast, truncate=truncate)
    expected = yarn_by_the_reference_recipe(d_head, scale, context, base, slow, fast, truncate)
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12)


def transformers_yarn(case, *, in_float64):
    """Hugging Face transformers' own YaRN table and attention factor for ``case``.

    Its code computes in float32 (``torch.float``); with ``in_float64`` the same code runs with float64
    standing in for float32, to compare the recipe rather than the rounding.
    """
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import LlamaConfig, modeling_rope_utils

    d_head, scale, context, base, slow, fast, truncate = case
    config = LlamaConfig(hidden_size=2 * d_head, num_attention_heads=2, head_dim=d_head,
                         max_position_embeddings=int(scale * context),
                         rope_parameters={"rope_type": "yarn", "factor": scale, "rope_theta": base,
                                          "original_max_position_embeddings": context, "beta_slow": slow,
                                          "beta_fast": fast, "truncate": truncate})
    if not in_float64:
        table, factor = modeling_rope_utils._compute_yarn_parameters(config)
        return table.numpy(), factor
    wider = types.SimpleNamespace(**{name: getattr(torch, name) for name in dir(torch)
                                     if not name.startswith("__")})
    wider.float = wider.float32 = torch.float64
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(modeling_rope_utils, "torch", wider)
        table, factor = modeling_rope_utils._compute_yarn_parameters(config)
    assert table.dtype == torch.float64
    return table.numpy(), factor


@pytest.mark.parametrize("case", YARN_CASES)
def test_yarn_equals_transformers_to_1e_12_in_float64(case):
    table, factor = transformers_yarn(case, in_float64=True)
    d_head, scale, context, base, slow, fast, truncate = case
    ours = scaled_rotary("yarn", d_head, scale=scale, original_context=context, base=base, alpha=slow,
                         beta=fast)
    if truncate:  # scaled_rotary keeps the reference's default rounding
        np.testing.assert_allclose(ours.frequencies, table, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        yarn_frequencies(d_head, scale, context, base=base, alpha=slow, beta=fast, truncate=truncate), table,
        rtol=1e-12, atol=1e-12)
    assert ours.attention_factor == pytest.approx(factor, rel=1e-12)


@pytest.mark.parametrize("case", YARN_CASES[:6])
def test_yarn_equals_transformers_as_it_runs_in_float32(case):
    table, _ = transformers_yarn(case, in_float64=False)
    d_head, scale, context, base, slow, fast, truncate = case
    ours = yarn_frequencies(d_head, scale, context, base=base, alpha=slow, beta=fast, truncate=truncate)
    np.testing.assert_allclose(ours, table, rtol=1e-6)


def test_the_two_ramps_part_where_the_chapter_says():
    """At the tiny GPT's setting the index ramp keeps the fastest pair; the paper's interpolates it."""
    index, turns = yarn_ramp(16, 32), yarn_ramp(16, 32, ramp="turns")
    assert index[0] == 1.0 and index[1] == 0.5 and np.all(index[2:] == 0.0)
    assert turns[0] < 0.2 and np.all(turns <= index)
    # with Llama's 4096 tokens the two agree at both ends, and part in the middle
    index, turns = yarn_ramp(128, 4096), yarn_ramp(128, 4096, ramp="turns")
    assert index[0] == turns[0] == 1.0 and index[-1] == turns[-1] == 0.0
    assert np.abs(index - turns).max() > 0.3


def test_yarn_keeps_every_speed_between_interpolation_and_none():
    for ramp in ("index", "turns"):
        for d_head, scale, context in [(16, 4.0, 32), (128, 40.0, 4096), (8, 2.0, 3)]:
            theta = rope_frequencies(d_head)
            table = yarn_frequencies(d_head, scale, context, ramp=ramp)
            assert np.all(table <= theta * (1 + 1e-15)) and np.all(table >= theta / scale * (1 - 1e-15))
            assert np.all(np.diff(table / theta) <= 1e-15)  # slower pairs are never kept more


def test_careless_yarn_arguments_are_refused():
    with pytest.raises(ValueError, match=r"ramp must be one of \('index', 'turns'\), got 'linear'"):
        yarn_frequencies(16, 4.0, 32, ramp="linear")
    with pytest.raises(TypeError, match="truncate must be True or False, got str"):
        yarn_ramp(16, 32, truncate="no")
    with pytest.raises(ValueError, match="beta must exceed alpha"):
        yarn_ramp(16, 32, alpha=32, beta=1)
    with pytest.raises(ValueError, match="alpha must be a finite number > 0, got 0"):
        yarn_ramp(16, 32, alpha=0)
    with pytest.raises(TypeError, match="original_context must be an integer, got float"):
        yarn_ramp(16, 32.0)
    with pytest.raises(ValueError, match="original_context must be >= 1, got 0"):
        yarn_frequencies(16, 4.0, 0)
    with pytest.raises(ValueError, match="d_head must be even"):
        yarn_frequencies(15, 4.0, 32)
    with pytest.raises(ValueError, match="base must be"):
        yarn_frequencies(16, 4.0, 32, base=1.0)
    with pytest.raises(ValueError, match="scale is the factor by which the context grows"):
        yarn_frequencies(16, 0.5, 32)
    with pytest.raises(ValueError, match="scale must be a finite number > 0, got nan"):
        scaled_rotary("yarn", 16, scale=float("nan"), original_context=32)


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
