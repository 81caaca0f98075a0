"""Checks for the chapter "A tiny GPT that writes" (``chapters/tiny_gpt.md``).

What a learner finds here: :func:`check_temperature`, the chapter's exercise that turns logits into
next-token probabilities at a temperature, and the mistakes it recognises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention
from mha.checks.machinery import Checker, Mistake, learner_check
from mha.checks.questions import Before, Choice, Option, Order, check_function


@learner_check
def check_temperature(fn: Callable[..., Any], *, quiet: bool = False) -> None:
    """Check ``with_temperature(logits, temperature)``: next-token probabilities at a temperature."""
    check = Checker("check_temperature", fn, "with_temperature")
    logits = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, -1.0]])
    for temperature in (1.0, 0.5, 2.0):
        case = f"logits {logits[0].tolist()}, temperature {temperature}"
        expected = attention.softmax(logits / temperature)
        check.compare(check.call(logits, temperature, case=case), expected, case=case, mistakes=[
            Mistake("you multiplied the logits by the temperature; divide them: "
                    "softmax(logits / T).", lambda t=temperature: attention.softmax(logits * t)),
            Mistake("the temperature is ignored.", lambda: attention.softmax(logits)),
            Mistake("the probabilities do not sum to 1: apply the softmax after dividing.",
                    lambda t=temperature: logits / t),
        ])
    check.passed("softmax(logits / T): sharper below 1, flatter above.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
CONTEXT_LOSSES = Order("check_context_losses", (
    "Order these by held-out loss, lowest first."), [
    "the trained tiny GPT with every head switched off",
    "the trained tiny GPT, every head on",
    "the bigram baseline (counts of which character follows which)",
], "bca", mistakes=[
    Before("a", "c", "a model with its heads off is not a trained bigram model: its feed-forward "
                     "networks and readout were trained to expect the heads' contribution, and now miss "
                     "it."),
    Before("a", "b", "switching the heads off takes away every character of context the model reads; it "
                     "cannot do better without them."),
    Before("c", "b", "the bigram sees one character; the trained model reads up to 32 characters of context, "
                     "and has learned to use them."),
], otherwise="compare each pair: context read, and what the rest of the model was trained to expect.",
    explanation="context wins (the trained model), counts come next (the bigram), and a model that lost the "
                "heads it was trained with comes last, far behind the bigram.")

check_context_losses = check_function(CONTEXT_LOSSES, __name__,
                                      "Grade your answer to “A model with one character of context”: "
                                      "letters.")

UNTIED_READOUT = Choice("check_untied_readout", (
    "Trained for the same 500 steps, how does the untied model's held-out loss compare with the tied "
    "model's?"), [
    Option("Clearly lower: the freedom to read and write with different vectors is worth a lot.",
           hint="with 80 characters the output matrix is a small part of the model: train both from "
                "another seed, and the untied model comes out lower in some runs and higher in others."),
    Option("About the same: within about a tenth of a nat, lower in some runs and higher in others.",
           explains="tying is a constraint (a character's input and output vectors are one vector), but "
                    "with 80 characters the output matrix is a small part of the model: lifting the "
                    "constraint changes less than another seed does, and tying saves 5,120 numbers."),
    Option("Clearly higher: more parameters overfit.",
           hint="every step draws fresh batches from a 72,000-character text; 5,120 more numbers are "
                "far too few to memorise it."),
])

check_untied_readout = check_function(UNTIED_READOUT, __name__,
                                      "Grade your answer to “Untie the readout”: a letter.")
