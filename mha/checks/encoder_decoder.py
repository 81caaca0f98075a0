"""Checks for the chapter "An encoder–decoder that learns its alignment" (``chapters/encoder_decoder.md``).

What a learner finds here: :func:`check_uniform_match`, the chapter's exercise on the match score of
a head that spreads its weight evenly over the source, and the wrong counts of source tokens it
recognises.
"""

from __future__ import annotations

from mha.checks.machinery import Checker, learner_check
from mha.checks.questions import Choice, Option, check_function
from mha.checks.shared import expect_value


@learner_check
def check_uniform_match(score: object, *, quiet: bool = False) -> None:
    """Check the match score of a head spreading evenly over a 5-digit source and ``</s>``."""
    check = Checker("check_uniform_match", lambda: None, "answer")
    expect_value(check, score, 1 / 6, "the uniform head's match score", {
        1 / 5: "the source has 6 real tokens: the 5 digits and </s>.",
        1 / 7: "only the 5 digits and </s> are real source tokens (padding is masked)."})
    check.passed("1/6: one right token out of 6 equally weighted ones.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
REVERSE_BLOCKS = Choice("check_reverse_blocks", (
    "In the model trained to reverse, which decoder block's cross-attention matches the alignment (target "
    "position t reads source position n \u2212 1 \u2212 t)?"), [
    Option("The first block: it reads the source first.",
           hint="the decoder knows its own position but not the source's length, so \u201csource position "
                "n \u2212 1 \u2212 t\u201d is not a lookup a first block can make; a block that prepares the "
                "lookup need not match the alignment itself."),
    Option("The second (last) block matches it well; the first poorly.",
           explains="one route takes two steps: find where the token just written sits in the source (a "
                    "match by content), then read the token before it. Only the block that reads the "
                    "answer must follow the alignment."),
    Option("Both equally: every cross-attention block reads the same source.",
           hint="the blocks read the same source but do different jobs: the first prepares, the second reads "
                "the answer, and only the reading block must follow the alignment."),
    Option("Neither: cross-attention maps never show the alignment.",
           hint="with no encoder self-attention to move tokens around, the block that reads the answer "
                "has to look at the aligned source token, and its map shows it."),
])

check_reverse_blocks = check_function(REVERSE_BLOCKS, __name__,
                                      "Grade your answer to “Which layer aligns?”: a letter.")

ENCODER_ALIGNMENT = Choice("check_encoder_alignment", (
    "You train `reverse` again with one encoder block (self-attention over the source). What happens to "
    "the exact-match rate and to the best head's alignment match?"), [
    Option("Both stay as they were.",
           hint="the encoder can move tokens around, so the decoder no longer has to read each token at its "
                "own position: its map need not follow the alignment any more."),
    Option("Exact matches stay near 100 %; the alignment match is no longer held to the alignment: it "
           "can fall far below what it was.",
           explains="the task is solved as well, but the encoder moves information between positions, "
                    "so the cross-attention map no longer has to look like the alignment: where it "
                    "lands depends on the training run, and a map that “explains” the output is not "
                    "guaranteed."),
    Option("Exact matches fall: the encoder scrambles the source.",
           hint="self-attention moves information, it does not lose it: the model still reverses the "
                "sequence on (almost) every test case."),
])

check_encoder_alignment = check_function(ENCODER_ALIGNMENT, __name__,
                                         "Grade your answer to “Put the encoder back”: a letter.")
