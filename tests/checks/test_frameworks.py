"""Tests of mha/checks/frameworks.py: each right conversion gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

import numpy as np

from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail


def from_state_dict(state):
    w_q, w_k, w_v = np.split(state["in_proj_weight"], 3, axis=0)  # 3 x (out, in)
    return w_q.T, w_k.T, w_v.T, state["out_proj.weight"].T


RIGHT = {
    checks.check_keras_output_kernel: lambda w, h: w.reshape(h, w.shape[0] // h, w.shape[1]),
    checks.check_from_state_dict: from_state_dict,
}

WRONG = [
    (checks.check_from_state_dict,
     lambda s: (*np.split(s["in_proj_weight"], 3), s["out_proj.weight"]), "not transposed"),
    (checks.check_keras_output_kernel, lambda w, h: w.T.reshape(h, w.shape[0] // h, w.shape[1]),
     "you transposed W_o"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
