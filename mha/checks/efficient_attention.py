"""Checks for the chapter "Efficient attention" (``chapters/efficient_attention.md``).

What a learner finds here: the chapter's three exercises: :func:`check_query_chunks` (attention
computed one chunk of queries at a time), :func:`check_merge_states` (two online-softmax states
merged into one) and :func:`check_cache_tokens` (how many tokens of KV cache fit in memory).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention, cost
from mha.checks.machinery import Checker, Mistake, NotDone, learner_check, placeholder
from mha.checks.questions import Choice, Option, check_function
from mha.checks.shared import expect_value, expect_values, input_rng, number


@learner_check
def check_query_chunks(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                       quiet: bool = False) -> None:
    """Check ``query_chunked_attention(q, k, v, chunk)``: queries cut into chunks of ``chunk``
    rows, each chunk attending to all keys; equal to full attention."""
    rng = input_rng(rng)
    check = Checker("check_query_chunks", fn, "query_chunked_attention")
    q, k, v = (rng.normal(size=(2, 3, 10, 4)) for _ in range(3))
    expected = attention.scaled_dot_product_attention(q, k, v)
    for chunk in (3, 1, 16):
        case = f"q, k, v (2, 3, 10, 4), chunk {chunk}"
        keys_cut = sum(  # the mistake: cut the keys, each chunk's softmax on its own keys
            attention.scaled_dot_product_attention(q, k[..., i:i + chunk, :], v[..., i:i + chunk, :])
            for i in range(0, 10, chunk))
        mistakes = [Mistake(
            "you cut the keys: each chunk's softmax then normalises over its own keys only. Cut "
            "the queries; every query chunk attends to all the keys.", lambda c=keys_cut: c)]
        check.compare(check.call(q, k, v, chunk, case=case), expected, case=case,
                      mistakes=mistakes)
    check.passed("equal to full attention for chunks of 3, 1 and more than seq.", quiet)


def _state(q_row, k, v):
    scores = k @ q_row / math.sqrt(q_row.shape[-1])  # (seq_k,)
    m = float(scores.max())
    p = np.exp(scores - m)
    return m, float(p.sum()), p @ v


@learner_check
def check_merge_states(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                       quiet: bool = False) -> None:
    """Check ``merge(state1, state2)`` for online-softmax states ``(m, l, a)``: the running
    maximum, the sum of ``exp(score - m)`` and the matching weighted sum of values."""
    rng = input_rng(rng)
    check = Checker("check_merge_states", fn, "merge")
    q_row, k, v = rng.normal(size=4), 3 * rng.normal(size=(12, 4)), rng.normal(size=(12, 3))
    for cut in (5, 1):
        first, second = _state(q_row, k[:cut], v[:cut]), _state(q_row, k[cut:], v[cut:])
        case = f"halves of 12 keys cut after key {cut}"
        result = check.call(first, second, case=case)
        if placeholder(result):
            raise NotDone(check.name)
        if not isinstance(result, tuple | list) or len(result) != 3:
            check.fail(f"expected a state (m, l, a), got {type(result).__name__} (on {case}).")
        m, l_sum, a = result
        full = attention.scaled_dot_product_attention(q_row[None], k, v)[0]
        l_value = number(check, l_sum, "ℓ")
        if math.isclose(l_value, first[1] + second[1]) and not math.isclose(first[0], second[0]):
            check.fail("you added ℓ (and a) without rescaling: each state is relative to its own "
                       "maximum; multiply by exp(m_i - m) with m the larger maximum (on "
                       f"{case}).")
        check.compare(np.asarray(a) / l_value, full, case=case + ", a / ℓ")
        expect_value(check, m, max(first[0], second[0]), f"the merged maximum m (on {case})")
    check.passed("a / ℓ of the merged state equals attention over all the keys.", quiet)


def _tokens_that_fit(n_layers: int = 32) -> list[int]:
    return [24 * 2**30 // (n_layers * cost.kv_cache_bytes(1, 1, 4096, 32, n_kv_heads=n_kv,
                                                          dtype=np.float16))
            for n_kv in (32, 8, 1)]


@learner_check
def check_cache_tokens(tokens: object, *, quiet: bool = False) -> None:
    """Check how many tokens of KV cache fit in 24 GiB (32 layers, d_model 4096, 32 heads,
    16-bit) with 32, 8 and 1 key/value heads: a list of three numbers."""
    check = Checker("check_cache_tokens", lambda: None, "answer")
    expected = _tokens_that_fit()
    expect_values(check, tokens, expected, "tokens that fit with 32, 8 and 1 key/value heads", {
        tuple(_tokens_that_fit(1)): "that is for one layer; each of the 32 layers caches every "
                                    "token."})
    check.passed(f"{expected}: each halving of the key/value heads doubles it.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
DISTILLED_POOL = Choice("check_distilled_pool", (
    "The random layer pooled to one key/value head has a relative error near 1. After 300 steps of "
    "fitting it to its eight-head teacher, how much of that error is left?"), [
    Option("Almost none, as with the trained model after uptraining.",
           hint="the trained model's *task* needed only one key/value head per layer, so nothing was missing "
                "after uptraining. A random teacher's eight heads compute eight unrelated things, and one "
                "key/value head cannot express them all."),
    Option("Some of it goes, most stays.",
           explains="training finds the best compromise one key/value head allows, and for eight unrelated "
                    "heads that compromise is poor. Whether sharing is cheap depends on what the heads have "
                    "in common."),
    Option("All of it: pooling throws the information away for good.",
           hint="training does move the pooled layer towards its teacher, so the error falls; it cannot fall "
                "to zero, because one key/value head cannot express eight unrelated ones."),
])

check_distilled_pool = check_function(DISTILLED_POOL, __name__,
                                      "Grade your answer to “Distil the random layer”: a letter.")
