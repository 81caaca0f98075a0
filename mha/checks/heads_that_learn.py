"""Checks for the chapter "Heads that learn" (``chapters/heads_that_learn.md``).

What a learner finds here: :func:`check_uniform_entropy`, the chapter's exercise on the mean entropy
of a causal head that spreads its weight evenly, and the wrong answers it recognises (bits instead of
nats, the sum instead of the mean, the last query only). Its questions, answered before the solutions:
the blinded induction heads, a greedy pruner's evaluations, narrow heads trained longer, and the margin one
head keeps while it does two jobs.
"""

from __future__ import annotations

import math

from mha.checks.machinery import Checker, learner_check
from mha.checks.questions import Choice, Number, Option, Range, check_function
from mha.checks.shared import expect_value


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
    "You switch off the previous-token heads of layer 0 (every head with more than half its weight one step "
    "back). What happens to the induction share of the four layer-1 heads, which you did not touch?"), [
    Option("Nothing: the layer-1 heads were not touched.",
           hint="their weights were not touched, but their *keys* were: a layer-1 head matches its query "
                "against keys that carry each position's predecessor, and the previous-token heads are what "
                "wrote the predecessor there."),
    Option("It collapses, to well under a half.",
           explains="one head's output is another's input: without the predecessor in the keys, the "
                    "match has nothing to find. Heads in different layers form a circuit."),
    Option("It rises: with one head fewer, layer 1 reads a cleaner stream.",
           hint="the heads switched off are the ones whose output layer 1 needs; removing them takes away "
                "the signal, not noise."),
    Option("It falls in proportion: by a quarter for each of layer 0's four heads switched off.",
           hint="heads do not each hold an equal share of a job: the other layer-0 heads cannot stand in "
                "for the ones that write the predecessor."),
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

TWO_JOBS_MARGIN = Number("check_two_jobs_margin", (
    "A one-head model puts 0.61 of its weight on the previous card and 0.32 on the first card. "
    "With one-hot values over the 4 numbers, what margin does that split keep, on the scale where one "
    "relation with all the weight keeps 1?"),
    Range(0.28, 0.30), wrong=[
    Range(0.315, 0.325, "0.32 is the gap when only the first card's number changes. Swapping the two "
                        "numbers moves the blend less, by the difference of the shares."),
    Range(0.30, 0.315, "about 0.31 is the best the same total weight (0.93) could keep, split 2 : 1; the "
                       "trained head's split is not exactly that."),
    Range(0.33, 0.34, "1/3 is the best split of the whole unit of weight (2/3 and 1/3), not this head's "
                      "0.61 and 0.32."),
    Range(0.60, 0.62, "0.61 is the gap when only the previous card's number changes; the margin is the "
                      "smallest gap between two different answers."),
    Range(0.92, 0.94, "0.93 is the weight on both cards together, what one card that is both the previous "
                      "and the first card gets; it says nothing about telling two answers apart."),
    Range(0.0, 0.005, "zero is the margin of equal shares, where (a, b) and (b, a) give the same blend; "
                      "these shares are unequal."),
], otherwise="compare the blends of two different answers: change only the previous card's number, only "
             "the first card's, or swap the two numbers. The margin is the smallest of those gaps.",
    explanation="swapping the two numbers is the closest call: the blend moves by 0.61 \u2212 0.32 = 0.29, "
                "a little under the best third. Both jobs get done, at under a third of the margin one "
                "relation alone would keep.")

check_two_jobs_margin = check_function(
    TWO_JOBS_MARGIN, __name__, "Grade your answer to \u201cThe price of a second job\u201d: a number.")
