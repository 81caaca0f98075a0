"""The tests every chapter's checks get, written once: each test_<chapter>.py builds its own from its tables.

A chapter's test module holds ``RIGHT`` ({check: a right answer}) and ``WRONG`` ([(check, a wrong
answer, the pattern its message must match)]), and tables of buggy implementations for the checks
that take functions; these helpers turn each table into a parametrised test of that module.
"""

import pytest

from mha.checks import CheckFailed


def right_answers_pass(right: dict):
    """A test that each check in ``right`` prints its ✔ line on its right answer."""

    @pytest.mark.parametrize("check", right, ids=lambda c: c.__name__)
    def test_right_answers_pass(check, capsys):
        check(right[check])
        assert capsys.readouterr().out.startswith(f"✔ {check.__name__} passed")

    return test_right_answers_pass


def wrong_answers_fail(wrong: list):
    """A test that each check in ``wrong`` fails on its wrong answer with a message matching the pattern."""

    @pytest.mark.parametrize(("check", "answer", "message"), wrong)
    def test_wrong_answers_name_what_was_expected(check, answer, message):
        with pytest.raises(CheckFailed, match=message):
            check(answer)

    return test_wrong_answers_name_what_was_expected


def names_each_bug(check, bugs: dict):
    """A test that ``check`` fails on each buggy implementation of ``bugs`` ({name: (fn, pattern)})."""

    @pytest.mark.parametrize("bug", bugs)
    def test_names_each_bug(bug):
        fn, message = bugs[bug]
        with pytest.raises(CheckFailed, match=message):
            check(fn)

    return test_names_each_bug
