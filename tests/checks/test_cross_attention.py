"""Tests of mha/checks/cross_attention.py: the right shape prediction gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail

RIGHT = {
    checks.check_cross_attention_shapes: {
        "W_q": (64, 64), "W_k": (48, 64), "W_v": (48, 64), "W_o": (64, 64),
        "weights": (2, 8, 7, 50), "output": (2, 7, 64)},
}

WRONG = [
    (checks.check_cross_attention_shapes, {
        "W_q": (64, 64), "W_k": (64, 64), "W_v": (48, 64), "W_o": (64, 64),
        "weights": (2, 8, 7, 50), "output": (2, 7, 64)},
     r"W_k: expected \(48, 64\), got \(64, 64\) \(keys are projected"),
    (checks.check_cross_attention_shapes, {"W_q": (64, 64)}, "no 'W_k' key"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)


def test_a_dict_with_placeholders_is_not_done_yet(capsys):
    checks.check_cross_attention_shapes(dict.fromkeys(("W_q", "W_k", "W_v", "W_o", "weights",
                                                       "output"), ...))
    assert "not done yet" in capsys.readouterr().out
