"""Checks for the chapter "Heads that learn" (``chapters/heads_that_learn.md``).

What a learner finds here: :func:`check_uniform_entropy`, the chapter's exercise on the mean entropy
of a causal head that spreads its weight evenly, and the wrong answers it recognises (bits instead of
nats, the sum instead of the mean, the last query only).
"""

from __future__ import annotations

import math

from mha.checks._core import Checker, learner_check
from mha.checks._shared import expect_value


@learner_check
def check_uniform_entropy(mean_entropy: object, *, quiet: bool = False) -> None:
    """Check the mean entropy (nats) of a causal head spreading evenly over 4 tokens."""
    check = Checker("check_uniform_entropy", lambda: None, "answer")
    expected = math.log(24) / 4
    expect_value(check, mean_entropy, expected, "the mean entropy in nats", {
        math.log2(24) / 4: "that is in bits (log base 2); nats use the natural log.",
        math.log(24): "that is the sum over the 4 queries; the question asks for the mean.",
        math.log(4): "log 4 is the entropy of the *last* query only; query i sees i + 1 keys."})
    check.passed(f"(log 1 + log 2 + log 3 + log 4) / 4 = {expected:.3f} nats.", quiet)
