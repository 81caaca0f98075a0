"""Tests of mha/checks/transformer_block.py: each right answer gets the ✔ line, and each wrong answer
fails with a message naming what was expected (and the slip, when a known one produces it)."""

import numpy as np
import pytest

import mha
from mha import checks
from mha.checks import CheckFailed
from tests.checks.answers import right_answers_pass, wrong_answers_fail


def rms_norm(x, gamma, eps=1e-5):
    return gamma * x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + x.dtype.type(eps))


RIGHT = {
    checks.check_ffn_share: 2 / 3,
    checks.check_rms_norm: rms_norm,
}

WRONG = [
    (checks.check_rms_norm, lambda x, g: mha.layer_norm(x, g), "that is layer norm"),
    (checks.check_rms_norm, lambda x, g: x / np.sqrt(np.mean(x * x, -1, keepdims=True) + 1e-5),
     "gamma is missing"),
    (checks.check_rms_norm, lambda x, g: (g * x / np.sqrt(np.mean(x * x, -1, keepdims=True)
                                                          + 1e-5)).astype(np.float64),
     "returned float64 for float32"),
    (checks.check_ffn_share, 0.5, "8d²"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)


def test_a_function_returning_the_placeholder_is_not_done_yet(capsys):
    checks.check_rms_norm(lambda x, gamma: ...)
    assert "not done yet" in capsys.readouterr().out


def test_a_function_returning_none_is_a_failure_not_a_placeholder():
    with pytest.raises(CheckFailed, match="returned NoneType, expected a NumPy array"):
        checks.check_rms_norm(lambda x, gamma: None)
