"""Tests of mha/checks/heads_that_learn.py: the right entropy gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

import math

from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail

RIGHT = {
    checks.check_uniform_entropy: math.log(24) / 4,
}

WRONG = [
    (checks.check_uniform_entropy, math.log2(24) / 4, "in bits"),
    (checks.check_uniform_entropy, math.log(24), "the sum over the 4 queries"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
