"""Checks for the chapter "An encoder–decoder that learns its alignment" (``chapters/encoder_decoder.md``).

What a learner finds here: :func:`check_uniform_match`, the chapter's exercise on the match score of
a head that spreads its weight evenly over the source, and the wrong counts of source tokens it
recognises.
"""

from __future__ import annotations

from mha.checks._core import Checker, learner_check
from mha.checks._shared import expect_value


@learner_check
def check_uniform_match(score: object, *, quiet: bool = False) -> None:
    """Check the match score of a head spreading evenly over a 5-digit source and ``</s>``."""
    check = Checker("check_uniform_match", lambda: None, "answer")
    expect_value(check, score, 1 / 6, "the uniform head's match score", {
        1 / 5: "the source has 6 real tokens: the 5 digits and </s>.",
        1 / 7: "only the 5 digits and </s> are real source tokens (padding is masked)."})
    check.passed("1/6: one right token out of 6 equally weighted ones.", quiet)
