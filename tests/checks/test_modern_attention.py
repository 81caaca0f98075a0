"""Tests of mha/checks/modern_attention.py: right answers pass, wrong ones name the slip."""

import numpy as np

import mha
from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail


def streaming_mask(seq, window, sinks):
    behind = np.arange(seq)[:, None] - np.arange(seq)[None, :]
    return (behind >= 0) & ((behind < window) | (np.arange(seq)[None, :] < sinks))


def absorbed_scores(q_nope, W_uk, c):
    n_heads, _, d_nope = q_nope.shape
    W_heads = W_uk.reshape(W_uk.shape[0], n_heads, d_nope).transpose(1, 0, 2)
    return q_nope @ W_heads.transpose(0, 2, 1) @ c.T


# bytes per token, by hand: 60 layers, 16-bit; k and v of 128, 8, 1 heads of 128; MLA's 512 + 64 once
CACHE = [60 * 2 * 2 * n * 128 for n in (128, 8, 1)] + [60 * (512 + 64) * 2]
# one layer, 32 heads of 128, 16-bit: S and z of each head; k and v of 8,192 tokens; 64.5 tokens' cache
STATE = [32 * (128 * 128 + 128) * 2, 8192 * 2 * 32 * 128 * 2, 65]

RIGHT = {
    checks.check_streaming_mask: streaming_mask,
    checks.check_latent_cache: CACHE,
    checks.check_absorbed_scores: absorbed_scores,
    checks.check_linear_state: STATE,
}

WRONG = [
    (checks.check_streaming_mask, lambda s, w, k: mha.sliding_window_mask(s, window=w), "sinks are missing"),
    (checks.check_streaming_mask,
     lambda s, w, k: (lambda b: ((b >= 0) & (b < w)) | (np.arange(s)[None, :] < k))(
         np.arange(s)[:, None] - np.arange(s)[None, :]), "sink tokens that come after them"),
    (checks.check_latent_cache, [b // 60 for b in CACHE], "that is one layer"),
    (checks.check_latent_cache, [b // 2 for b in CACHE], "keys and values both"),
    (checks.check_absorbed_scores,
     lambda q, W, c: q @ ((c @ W).reshape(len(c), q.shape[2], q.shape[0]).transpose(2, 1, 0)),
     "wrong order"),
    (checks.check_linear_state, [32 * 128 * 128 * 2, STATE[1], 65], "normaliser z"),
    (checks.check_linear_state, [STATE[0], STATE[1] // 2, 130], "a key and a value"),
    (checks.check_linear_state, [2 * STATE[0], 2 * STATE[1], 65], "2 bytes each"),
    (checks.check_linear_state, [STATE[0] // 32, STATE[1] // 32, 65], "that is one head"),
    (checks.check_linear_state, [STATE[0], STATE[1], 64], "1,048,576 bytes, still fewer"),
    (checks.check_linear_state, [STATE[0], STATE[1], 64.5], "expected whole numbers"),
]


test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
