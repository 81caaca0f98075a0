"""Tests of mha/checks/real_heads.py: a right previous_token_share gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

import numpy as np

from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail


def previous_token_share(weights):
    return np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean(axis=-1)


RIGHT = {
    checks.check_previous_token_share: previous_token_share,
}

WRONG = [
    (checks.check_previous_token_share,
     lambda w: np.diagonal(w, offset=1, axis1=-2, axis2=-1).mean(-1), r"\*next\* token"),
    (checks.check_previous_token_share,
     lambda w: np.diagonal(w, offset=-1, axis1=-2, axis2=-1).sum(-1) / w.shape[-1],
     "included query 0"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
