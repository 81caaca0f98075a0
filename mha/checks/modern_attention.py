"""Checks for the chapter "Attention as it is built today" (``chapters/modern_attention.md``).

What a learner finds here: the chapter's code exercises: :func:`check_streaming_mask` (a sliding window
with sink tokens), :func:`check_latent_cache` (bytes per token of DeepSeek-V2's cache under four kinds of
attention), :func:`check_absorbed_scores` (multi-head latent attention's scores from the latents alone) and
:func:`check_linear_state` (linear attention's fixed state against a KV cache); and the questions asked
before two solutions: :func:`check_softcap_weight` (the largest weight of soft-capped scores) and
:func:`check_rope_pair_order` (one rotary pair's speed under each RoPE scaling).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import cost, masks
from mha.attention import softmax
from mha.checks.machinery import Checker, Mistake, learner_check
from mha.checks.questions import Before, Number, Order, Range, check_function
from mha.checks.shared import expect_values, input_rng
from mha.positions import rope_frequencies
from mha.rope_scaling import SCALING_METHODS, scaled_rotary, turns_in_context, yarn_ramp


@learner_check
def check_streaming_mask(fn: Callable[..., Any], *, quiet: bool = False) -> None:
    """Check ``streaming_mask(seq, window, sinks)``: query i sees itself, the ``window - 1`` tokens
    before it, and the first ``sinks`` tokens (never a token after itself).

    Examples
    --------
    >>> def streaming_mask(seq, window, sinks):
    ...     behind = np.arange(seq)[:, None] - np.arange(seq)[None, :]  # (seq_q, seq_k): i - j
    ...     return (behind >= 0) & ((behind < window) | (np.arange(seq) < sinks))
    >>> check_streaming_mask(streaming_mask)
    ✔ check_streaming_mask passed: a causal band of window tokens, plus the sinks.
    """
    check = Checker("check_streaming_mask", fn, "streaming mask")
    for seq, window, sinks in ((10, 3, 2), (6, 1, 1), (5, 8, 0)):
        case = f"seq = {seq}, window = {window}, sinks = {sinks}"
        expected = masks.sliding_window_mask(seq, window=window, sinks=sinks)
        got = check.as_array(check.call(seq, window, sinks, case=case), case)
        if got.dtype != bool and got.shape == expected.shape and np.isin(got, (0, 1)).all():
            got = got != 0
        behind = np.arange(seq)[:, None] - np.arange(seq)[None, :]  # (seq_q, seq_k): i - j
        is_sink = np.arange(seq)[None, :] < sinks  # (1, seq_k)
        check.compare(got, expected, case=case, exact=True, mistakes=[
            Mistake("the early queries see sink tokens that come after them: a sink is still a "
                    "token of the past; keep i - j >= 0.",
                    lambda b=behind, w=window, s=is_sink: ((b >= 0) & (b < w)) | s),
            Mistake("the sinks are missing: every query should also see the first `sinks` tokens.",
                    lambda b=behind, w=window: (b >= 0) & (b < w)),
            Mistake(f"each row keeps window + 1 recent tokens: with window = {window} a query sees "
                    "itself and the window - 1 before it, so i - j < window.",
                    lambda b=behind, w=window, s=is_sink: (b >= 0) & ((b <= w) | s)),
        ])
    check.passed("a causal band of window tokens, plus the sinks.", quiet)


def _deepseek_cache_bytes() -> list[int]:
    """Bytes per token, 60 layers, 16-bit: 128 heads of 128 (MHA), 8 groups, 1 head, MLA 512 + 64."""
    per_layer = [cost.attention_cache_bytes(1, n_kv_heads=n, d_head=128, dtype=np.float16)
                 for n in (128, 8, 1)]
    per_layer.append(cost.attention_cache_bytes(1, kv_rank=512, d_rope=64, dtype=np.float16))
    return [60 * b for b in per_layer]


@learner_check
def check_latent_cache(values: object, *, quiet: bool = False) -> None:
    """Check four numbers: cache bytes per token of DeepSeek-V2's shapes (60 layers, 128 heads of width
    128, 16-bit) with multi-head, grouped-query (8 groups), multi-query and latent attention
    (latent 512, rotary key 64)."""
    check = Checker("check_latent_cache", lambda: None, "answer")
    expected = _deepseek_cache_bytes()
    one_layer = tuple(b // 60 for b in expected)
    no_values = tuple(b // 2 for b in expected)
    expect_values(check, values, expected, "bytes per token for MHA, GQA-8, MQA and MLA", {
        one_layer: "that is one layer; every one of the 60 layers keeps its own cache.",
        no_values: "keys and values both: multi-head, grouped and multi-query attention cache two vectors "
                   "per head (MLA's latent stands for both, so it counts once).",
    })
    check.passed(f"{expected}: MLA caches less than GQA with 8 groups, about what 2.25 groups would.",
                 quiet)


@learner_check
def check_absorbed_scores(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                          quiet: bool = False) -> None:
    """Check ``absorbed_scores(q_nope, W_uk, c)``: the position-free part of every head's scores,
    ``q_nope[i] · (c W_uk,i)`` for head ``i``, computed without building the keys: shape
    (n_heads, seq_q, seq_k).

    ``q_nope`` is (n_heads, seq_q, d_nope), ``W_uk`` (kv_rank, n_heads · d_nope), ``c`` (seq_k, kv_rank).
    """
    rng = input_rng(rng)
    check = Checker("check_absorbed_scores", fn, "absorbed_scores")
    n_heads, d_nope, kv_rank = 3, 4, 5
    q_nope = rng.normal(size=(n_heads, 6, d_nope))
    W_uk = rng.normal(size=(kv_rank, n_heads * d_nope))
    c = rng.normal(size=(7, kv_rank))
    keys = (c @ W_uk).reshape(7, n_heads, d_nope).transpose(1, 0, 2)  # (n_heads, seq_k, d_nope)
    expected = q_nope @ keys.transpose(0, 2, 1)  # (n_heads, seq_q, seq_k)
    wrong_split = (c @ W_uk).reshape(7, d_nope, n_heads).transpose(2, 0, 1)  # heads as the inner axis
    case = "3 heads, d_nope 4, kv_rank 5, 6 queries, 7 latents"
    check.compare(check.call(q_nope, W_uk, c, case=case), expected, case=case, mistakes=[
        Mistake("the heads are cut from W_uk's columns in the wrong order: head i owns columns "
                "i·d_nope to (i+1)·d_nope, so reshape to (kv_rank, n_heads, d_nope).",
                lambda: q_nope @ wrong_split.transpose(0, 2, 1)),
    ])
    check.passed("the same scores as the keys c W_uk would give, from the latents alone.", quiet)


def _linear_state_bytes() -> list[int]:
    """One layer of 32 heads of width 128, 16-bit: the linear-attention state, the KV cache of 8,192
    tokens, and the shortest length whose KV cache holds more bytes than the state."""
    state = cost.linear_attention_cost(1, 128, n_heads=32, dtype=np.float16).score_bytes
    per_token = cost.attention_cache_bytes(1, n_kv_heads=32, d_head=128, dtype=np.float16)
    return [state, 8192 * per_token, state // per_token + 1]


@learner_check
def check_linear_state(values: object, *, quiet: bool = False) -> None:
    """Check three numbers for one layer of 32 heads of width 128 (``d_v`` = 128, 16-bit): the bytes of
    linear attention's state (``S`` and ``z`` of every head), the bytes of a KV cache of 8,192 tokens, and
    the shortest length at which the KV cache holds more bytes than the state."""
    check = Checker("check_linear_state", lambda: None, "answer")
    expected = _linear_state_bytes()
    state, cache, crossover = expected
    per_token = cache // 8192
    expect_values(check, values, expected, "state bytes, cache bytes at 8,192 tokens, crossover length", {
        (32 * 128 * 128 * 2, cache, crossover): "the state is S and z: beside the d_head × d_v matrix S, "
                                                "each head keeps the d_head numbers of the normaliser z.",
        (state, cache // 2, 2 * state // per_token + 1): "a KV cache keeps two vectors a token and "
                                                         "head, a key and a value.",
        (2 * state, 2 * cache, crossover): "16-bit numbers take 2 bytes each, not 4.",
        (state // 32, cache // 32, crossover): "that is one head; the layer has 32, each with its own state "
                                               "and its own keys and values.",
        (state, cache, crossover - 1): f"at {crossover - 1} tokens the cache holds "
                                       f"{(crossover - 1) * per_token:,} bytes, still fewer than the "
                                       f"state's {state:,}: the first length at which it is larger is "
                                       f"{crossover}.",
    })
    check.passed(f"{expected}: the state is the size of a {state / per_token:.1f}-token KV cache, and "
                 f"stays that size; at 8,192 tokens the cache is {cache / state:.0f} times larger.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
def _capped(scores: tuple[float, ...], cap: float) -> np.ndarray:
    """``cap · tanh(s / cap)`` of each score: the soft-cap of the question, computed for its texts."""
    return cap * np.tanh(np.asarray(scores) / cap)


_ROW = (12.0, 4.0, 0.0)
_CAPPED = _capped(_ROW, 5.0)  # (3,)
_CAPPED_WEIGHT = float(softmax(_CAPPED)[0])
_RAW_WEIGHT = float(softmax(np.asarray(_ROW))[0])
_SQUASH = (f"The cap squashes 12 to about {_CAPPED[0]:.2f} and 4 to about {_CAPPED[1]:.2f}, so the lead "
           f"shrinks to {_CAPPED[0] - _CAPPED[1]:.1f}.")

SOFTCAP_WEIGHT = Number("check_softcap_weight", (
    "One query's scores are (12, 4, 0). Soft-cap them with a cap of 5, s ↦ 5 · tanh(s / 5), then take the "
    "softmax. What weight does the first key get? (Two decimals.)"),
    Range(0.815, 0.84), unit="of the row's weight", wrong=[
    Range(0.99, 1.001, "that is the softmax of the raw scores: a lead of 8 makes the row one-hot. "
                       + _SQUASH),
    Range(0.715, 0.74, f"that clips the scores at 5 (a hard cap: 5, 4, 0). tanh bends before the cap: 4 "
                       f"becomes 5 · tanh(0.8) ≈ {_CAPPED[1]:.2f}, not 4, so the first key keeps a larger "
                       "lead."),
    Range(0.49, 0.505, "that is 5 · tanh(s), without dividing by the cap inside: both 12 and 4 saturate at "
                       "5 and tie. Dividing by c keeps small scores almost unchanged."),
    Range(0.465, 0.49, "that is tanh(s / 5) without multiplying back by 5: every score lands in (−1, 1) "
                       "and the row flattens. The cap multiplies tanh, so scores can reach ±5."),
    Range(0.76, 0.785, f"that divides the scores by 5, a temperature, not a cap: soft-capping hardly "
                       f"changes a score well below the cap (4 becomes {_CAPPED[1]:.2f}, not 0.8)."),
], otherwise=f"cap each score with 5 · tanh(s / 5) first (about {_CAPPED[0]:.2f}, {_CAPPED[1]:.2f}, 0), "
             "then the softmax of those.",
    explanation=f"5 · tanh(12 / 5) ≈ {_CAPPED[0]:.2f} and 5 · tanh(4 / 5) ≈ {_CAPPED[1]:.2f}: the lead of 8 "
                f"shrinks to {_CAPPED[0] - _CAPPED[1]:.1f}, and the first key gets about "
                f"{_CAPPED_WEIGHT:.2f} of the weight instead of {_RAW_WEIGHT:.4f}. A capped row can never be "
                "one-hot: its lead is at most 2c.")

check_softcap_weight = check_function(SOFTCAP_WEIGHT, __name__,
                                      "Grade your answer to “A capped row”: a number.")

def _pair_speeds(pair: int = 1) -> dict[str, float]:
    """Radians per position of one pair in the chapter's tables: d_head 16, trained on 32, scale 4."""
    return {method: float(scaled_rotary(method, 16, scale=4.0, original_context=32).frequencies[pair])
            for method in SCALING_METHODS}


_SPEED = _pair_speeds()
_ALONG = float(yarn_ramp(16, 32)[1])  # where pair 1 sits on YaRN's ramp: 1 kept, 0 interpolated
_TURNS = float(turns_in_context(rope_frequencies(16), 32)[1])
_NTK_SLOWING = _SPEED["none"] / _SPEED["ntk"]
_YARN_SLOWING = _SPEED["none"] / _SPEED["yarn"]

ROPE_PAIR_ORDER = Order("check_rope_pair_order", (
    "The tiny GPT's heads have 16 dimensions, 8 rotary pairs, trained on 32 positions. Rescaled for 4 times "
    f"the context (s = 4), how fast does the second-fastest pair (i = 1, θ = 10000^(−2/16) ≈ "
    f"{_SPEED['none']:.2f} radians a position) turn under each table? Order them fastest first."), [
    "position interpolation", "no scaling", "YaRN (α = 1, β = 32)", "NTK-aware scaling"], "bdca",
    mistakes=[
    Before("d", "b", "NTK-aware scaling never speeds a pair up: it raises the base, which slows every pair "
                     f"but the fastest (the second by s^(2/14) ≈ {_NTK_SLOWING:.2f})."),
    Before("c", "b", "YaRN never speeds a pair up: it interpolates the pairs that turn few times and "
                     "leaves the fastest alone at best."),
    Before("a", "b", "position interpolation divides every speed by s = 4; nothing is faster than the "
                     "unscaled table."),
    Before("a", "d", "interpolation slows every pair by the full s = 4; NTK-aware scaling slows pair i by "
                     "s^(2i/(d − 2)), only the slowest by the full 4, so this fast pair keeps most of "
                     "its speed."),
    Before("c", "d", "YaRN ramps in the pair index, from the pair that turns β = 32 times over the training "
                     "context to the one that turns α = 1 time, rounded outwards to whole pairs: over 32 "
                     f"positions that is pair 0 to pair 2, so pair 1 sits at {_ALONG:.0%} of the ramp and is "
                     f"slowed by {_YARN_SLOWING:.2f}, while NTK-aware scaling slows it by only "
                     f"{_NTK_SLOWING:.2f}."),
    Before("a", "c", "YaRN interpolates a pair at most as much as position interpolation does; in its "
                     "ramp it keeps part of the speed, so it is never slower."),
], otherwise=f"compare each table's speed of pair 1 with θ₁ ≈ {_SPEED['none']:.2f}: interpolation divides by "
             "4, NTK-aware scaling by 4^(1/7), YaRN by a ramp between the two extremes.",
    explanation=f"no scaling ({_SPEED['none']:.3f}), NTK-aware ({_SPEED['ntk']:.3f}: slowed by 4^(1/7) ≈ "
                f"{_NTK_SLOWING:.2f}), YaRN ({_SPEED['yarn']:.3f}: its ramp runs from pair 0 to pair 2 here, "
                f"and pair 1, at {_ALONG:.0%} of it, runs at {_SPEED['yarn'] / _SPEED['none']:.1%} of its "
                f"speed), interpolation ({_SPEED['interpolation']:.3f}: "
                "divided by 4). NTK-aware scaling keeps this pair nearest its trained speed; YaRN keeps only "
                "the fastest pair whole. (The paper's formula, a ramp in turns, would slow this pair almost "
                f"as much as interpolation: it turns {_TURNS:.1f} times over 32 positions, just past α.)")

check_rope_pair_order = check_function(
    ROPE_PAIR_ORDER, __name__, "Grade your answer to “One pair, four tables”: letters, fastest first.")
