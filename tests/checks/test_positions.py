"""Tests of mha/checks/positions.py: a right rotate_new_keys gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

import numpy as np

import mha
from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail


def rotate_new_keys(k_new, n_cached):
    return mha.apply_rotary(k_new, positions=np.arange(n_cached, n_cached + len(k_new)))


RIGHT = {
    checks.check_rotate_new_keys: rotate_new_keys,
}

WRONG = [
    (checks.check_rotate_new_keys, lambda k, n: mha.apply_rotary(k), "positions 0, 1"),
    (checks.check_rotate_new_keys,
     lambda k, n: mha.apply_rotary(k, positions=np.arange(n + 1, n + 1 + len(k))), "off by one"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
