"""Tests of mha/checks/efficient_attention.py: each right answer gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

import math

import numpy as np

import mha
from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail


def query_chunked_attention(q, k, v, chunk):
    parts = [mha.scaled_dot_product_attention(q[..., i:i + chunk, :], k, v)
             for i in range(0, q.shape[-2], chunk)]
    return np.concatenate(parts, axis=-2)


def merge(state1, state2):
    (m1, l1, a1), (m2, l2, a2) = state1, state2
    m = max(m1, m2)
    r1, r2 = math.exp(m1 - m), math.exp(m2 - m)
    return m, l1 * r1 + l2 * r2, a1 * r1 + a2 * r2


RIGHT = {
    checks.check_cache_tokens: [49_152, 196_608, 1_572_864],
    checks.check_query_chunks: query_chunked_attention,
    checks.check_merge_states: merge,
}

WRONG = [
    (checks.check_merge_states, lambda s1, s2: (max(s1[0], s2[0]), s1[1] + s2[1], s1[2] + s2[2]),
     "without rescaling"),
    (checks.check_cache_tokens, [49_152.5, 196_608, 1_572_864], "expected whole numbers, got 49152.5"),
    (checks.check_cache_tokens, [1, 2, 3], r"expected \[49152, 196608, 1572864\]"),
    (checks.check_query_chunks, lambda q, k, v, c: sum(
        mha.scaled_dot_product_attention(q, k[..., i:i + c, :], v[..., i:i + c, :])
        for i in range(0, k.shape[-2], c)), "you cut the keys"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
