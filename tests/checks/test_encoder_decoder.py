"""Tests of mha/checks/encoder_decoder.py: the right match score gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail

RIGHT = {
    checks.check_uniform_match: 1 / 6,
}

WRONG = [
    (checks.check_uniform_match, 0.2, r"expected 0\.166667, got 0\.2\. the source has 6"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
