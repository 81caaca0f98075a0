"""Tests of mha/checks/_core.py, the machinery every check runs on: an untouched starter gets
"not done yet" (and no exception), except under strict(), where it fails; a check refuses arguments
that are not a function or a Generator."""

import pytest

from mha import checks
from mha.checks import CheckFailed, check_attention, check_softmax, check_split_heads
from tests.checks import (
    test_cost,
    test_cross_attention,
    test_efficient_attention,
    test_encoder_decoder,
    test_frameworks,
    test_heads_that_learn,
    test_multi_head,
    test_positions,
    test_real_heads,
    test_self_attention,
    test_shapes,
    test_tiny_gpt,
    test_transformer_block,
)
from tests.checks.test_self_attention import softmax


def not_started(*args, **kwargs):
    # YOUR CODE HERE
    raise NotImplementedError


# The right answers of every chapter's exercise checks, as each chapter's tests hold them, in the
# book's order.
CHAPTERS = (
    test_self_attention, test_multi_head, test_shapes, test_cross_attention, test_cost,
    test_positions, test_heads_that_learn, test_efficient_attention, test_transformer_block,
    test_tiny_gpt, test_encoder_decoder, test_frameworks, test_real_heads,
)
RIGHT = {check: answer for chapter in CHAPTERS for check, answer in chapter.RIGHT.items()}
FUNCTION_CHECKS = [check for check, answer in RIGHT.items() if callable(answer)]
VALUE_CHECKS = [check for check, answer in RIGHT.items() if not callable(answer)]


@pytest.mark.parametrize("check", FUNCTION_CHECKS + [
    checks.check_softmax, checks.check_attention, checks.check_causal_mask,
    checks.check_split_heads, checks.check_merge_heads, checks.check_multi_head,
], ids=lambda c: c.__name__)
def test_a_starter_function_is_not_done_yet(check, capsys):
    assert check(not_started) is None
    out = capsys.readouterr().out
    assert out.startswith(f"… {check.__name__}: not done yet")
    assert "# YOUR CODE HERE" in out


@pytest.mark.parametrize("check", VALUE_CHECKS, ids=lambda c: c.__name__)
def test_a_placeholder_value_is_not_done_yet(check, capsys):
    check(...)
    assert "not done yet" in capsys.readouterr().out


@pytest.mark.parametrize("check", [checks.check_rms_norm, checks.check_softmax],
                         ids=lambda c: c.__name__)
def test_under_strict_an_unfinished_answer_fails(check, monkeypatch):
    with checks.strict(), pytest.raises(CheckFailed, match="not done yet"):
        check(not_started)
    monkeypatch.setenv("MHA_CHECKS_STRICT", "1")
    with pytest.raises(CheckFailed, match="not done yet"):
        check(not_started)


def test_strict_is_undone_after_the_block(capsys):
    with checks.strict():
        pass
    checks.check_crossover(...)
    assert "not done yet" in capsys.readouterr().out


@pytest.mark.parametrize("check", [check_softmax, check_attention, check_split_heads])
def test_checks_refuse_bad_arguments(check):
    with pytest.raises(TypeError, match="expects your function"):
        check("softmax")
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        check(softmax, rng=0)
