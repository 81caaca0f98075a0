"""Tests of mha/checks/cost.py: each right count gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

from mha import checks
from tests.checks.answers import right_answers_pass, wrong_answers_fail

RIGHT = {
    checks.check_kv_budget: [6, 24, 192],
    checks.check_block_size: 512,
    checks.check_crossover: 1025,
}

WRONG = [
    (checks.check_crossover, 1024, r"expected 1025, got 1024\. 1024 = 2·d_model"),
    (checks.check_crossover, 7, "expected 1025, got 7"),
    (checks.check_crossover, "a lot", "should be a number, got str"),
    (checks.check_kv_budget, [3, 12, 96], r"expected \[6, 24, 192\], got \[3, 12, 96\]\. 16-bit"),
    (checks.check_kv_budget, [192, 768, 6144], "for one layer"),
    (checks.check_kv_budget, [12, 48, 384], "keys \\*and\\* values"),
    (checks.check_kv_budget, [6, 24], "a list of 3 numbers"),
    (checks.check_kv_budget, [6.9, 24.9, 192.9], r"expected whole numbers, got 6\.9\. .* round down with //"),
    (checks.check_kv_budget, [float("nan")] * 3, "expected whole numbers, got nan"),
    (checks.check_block_size, 1024, "just over 64 MiB"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)


def test_a_list_with_a_placeholder_is_not_done_yet(capsys):
    checks.check_kv_budget([6, ..., ...])
    assert "not done yet" in capsys.readouterr().out
