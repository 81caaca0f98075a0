"""Checks for the chapter "Attention as it is built today" (``chapters/modern_attention.md``).

What a learner finds here: the chapter's three exercises: :func:`check_streaming_mask` (a sliding window
with sink tokens), :func:`check_latent_cache` (bytes per token of DeepSeek-V2's cache under four kinds of
attention) and :func:`check_absorbed_scores` (multi-head latent attention's scores from the latents alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import cost, masks
from mha.checks._core import Checker, Mistake, learner_check
from mha.checks._shared import expect_values, input_rng


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
