"""Tests of mha/checks/attention_up_close.py: a running mean by attention gets the ✔ line, each wrong
one fails with the message of its mistake, and the chapter's questions grade their keys right and a
misconception wrong (every answer of every question is graded in test_questions.py)."""

import numpy as np
import pytest

import mha
from mha import checks
from tests.checks.answers import names_each_bug, right_answers_pass, wrong_answers_fail


def running_mean(x):
    ones = np.ones_like(x)  # equal scores
    return mha.scaled_dot_product_attention(ones, ones, x, mha.causal_mask(x.shape[-2]))


def _attend(q_of, mask_of):
    def mean(x):
        seq = x.shape[-2]
        return mha.scaled_dot_product_attention(q_of(x), q_of(x), x, mask_of(seq))
    return mean


RIGHT = {
    checks.check_running_mean: running_mean,
    checks.check_hard_lookup: "ace",
    checks.check_same_dog: "da",
    checks.check_telescope_query: "e",
}

WRONG = [
    (checks.check_hard_lookup, "acde", "between the values"),
    (checks.check_hard_lookup, "abce", "gradient with respect to the query is zero"),
    (checks.check_hard_lookup, "ac", "one more option is true too"),  # which: on the next try
    (checks.check_same_dog, "d", "one more option is true too"),
    (checks.check_same_dog, "acd", "does not deduplicate"),
    (checks.check_same_dog, "abd", "one different neighbour"),
    (checks.check_telescope_query, "c", "too short"),
    (checks.check_telescope_query, "b", "often, but not surely"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)

RUNNING_MEAN_BUGS = {
    "no mask": (_attend(np.zeros_like, lambda s: None), r"mean of \*all\* the tokens"),
    "diagonal masked": (_attend(np.zeros_like, lambda s: np.tri(s, k=-1, dtype=bool)),
                        "leaves out its own token"),
    "future averaged": (_attend(np.zeros_like, lambda s: ~np.tri(s, k=-1, dtype=bool)),
                        r"tokens \*after\* it"),
    "q = k = x": (_attend(lambda x: x, mha.causal_mask), "the scores are not equal"),
    "only 2-D": (lambda x: running_mean(x[0] if x.ndim == 3 else x), "batch"),
    "cumsum without the mean": (lambda x: np.cumsum(x, axis=-2), "values differ"),
}

test_check_running_mean_names_each_bug = names_each_bug(checks.check_running_mean, RUNNING_MEAN_BUGS)


def test_an_untouched_starter_is_not_done(capsys):
    def starter(x):
        raise NotImplementedError

    checks.check_running_mean(starter)
    assert "not done yet" in capsys.readouterr().out


@pytest.mark.parametrize("quiet", [True, False])
def test_the_package_passes(quiet, capsys):
    checks.check_running_mean(running_mean, quiet=quiet)
    assert (capsys.readouterr().out == "") == quiet
