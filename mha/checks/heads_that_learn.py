"""Checks for the chapter "Heads that learn" (``chapters/heads_that_learn.md``).

What a learner finds here: :func:`check_uniform_entropy`, the chapter's exercise on the mean entropy
of a causal head that spreads its weight evenly, and the wrong answers it recognises (bits instead of
nats, the sum instead of the mean, the last query only).
"""

from __future__ import annotations

import math

from mha.checks._core import Checker, learner_check
from mha.checks._shared import expect_value
from mha.checks.questions import Choice, Number, Option, Range, check_function


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


# ------------------------------------------------------------ questions answered before the solutions
BLINDED_INDUCTION = Choice("check_blinded_induction", (
    "You switch off only the previous-token head of layer 0. What happens to the induction share of the "
    "four layer-1 heads, which you did not touch?"), [
    Option("Nothing: the layer-1 heads were not touched.",
           hint="their weights were not touched, but their *keys* were: a layer-1 head matches its query "
                "against keys that carry each position's predecessor, and the previous-token head is what "
                "wrote the predecessor there."),
    Option("It collapses, to well under a half.",
           explains="one head's output is another's input: without the predecessor in the keys, the "
                    "match has nothing to find. Heads in different layers form a circuit."),
    Option("It rises: with one head fewer, layer 1 reads a cleaner stream.",
           hint="the head switched off is the one whose output layer 1 needs; removing it takes away the "
                "signal, not noise."),
    Option("It falls by about a quarter, one of layer 0's four heads.",
           hint="heads do not each hold an equal share of a job: the three other layer-0 heads cannot "
                "stand in for the one that writes the predecessor."),
])

check_blinded_induction = check_function(BLINDED_INDUCTION, __name__,
                                         "Grade your answer to “Blind the induction heads”: a letter.")

GREEDY_EVALUATIONS = Number("check_greedy_evaluations", (
    "A greedy pruner removes 6 of the model's 8 heads, one per round; each round tries switching off, one "
    "at a time, every head still on. How many trial masks does it evaluate with `test_loss`?"),
    Range(32.5, 33.5), unit="evaluations", wrong=[
    Range(47.5, 48.5, "the pool shrinks: a head removed in one round is not tried in the next, so the rounds "
                      "try 8, 7, 6, \u2026 heads."),
    Range(7.5, 8.5, "8 is the one-shot ranking, one measurement per head; greedy measures again after every "
                    "removal."),
    Range(5.5, 6.5, "6 is the number of rounds; each round tries every head still on."),
    Range(35.5, 36.5, "8 + 7 + \u2026 + 1 runs until no head is left; the pruner stops after 6 removals."),
], otherwise="count round by round: the first tries 8 heads, the second the 7 left, and so on for 6 rounds.",
    explanation="8 + 7 + 6 + 5 + 4 + 3 = 33 evaluations, against 8 for the one-shot ranking.")

check_greedy_evaluations = check_function(GREEDY_EVALUATIONS, __name__,
                                          "Grade your answer to “Re-measure as you prune”: a number.")

NARROW_HEADS_LONGER = Choice("check_narrow_heads_longer", (
    "Trained three times as long (900 steps instead of 300), how do the 32 heads of width 1 do on the "
    "same-colour relation?"), [
    Option("Still poorly: a head of width 1 can only prefer the largest or the smallest key.",
           hint="each head alone can only do that, but 32 of them together can combine their one-dimensional "
                "preferences to single out the matching card. What 300 steps lacked was time."),
    Option("They match colours on almost every card.",
           explains="what they lacked was time, not room: together, 32 one-dimensional heads can single out "
                    "the matching colour, and 900 steps are enough to learn it."),
    Option("Worse than after 300 steps: they overfit.",
           hint="every batch is fresh data, so there is nothing to memorise: training longer keeps lowering "
                "the held-out loss here."),
])

check_narrow_heads_longer = check_function(NARROW_HEADS_LONGER, __name__,
                                           "Grade your answer to “Width or time?”: a letter.")
