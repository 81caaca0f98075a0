"""Tests of mha/checks/tiny_gpt.py: a right with_temperature gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

import mha
from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail

RIGHT = {
    checks.check_temperature: lambda logits, t: mha.softmax(logits / t),
}

WRONG = [
    (checks.check_temperature, lambda z, t: mha.softmax(z * t), "multiplied the logits"),
    (checks.check_temperature, lambda z, t: mha.softmax(z), "temperature is ignored"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
