"""Checks for the chapter "Real heads" (``chapters/real_heads.md``).

What a learner finds here: :func:`check_previous_token_share`, the chapter's exercise that measures
how much of each head's weight goes to the previous token, and the mistakes it recognises (the next
token, query 0 included, the heads averaged together, the diagonal). Its questions, answered before the
solutions: the trophy head, the order of ablations, and the grammar head read from modifiers and backwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention
from mha.checks.machinery import Checker, Mistake, learner_check
from mha.checks.questions import Before, Choice, Option, Order, check_function
from mha.checks.shared import input_rng


@learner_check
def check_previous_token_share(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                               quiet: bool = False) -> None:
    """Check ``previous_token_share(weights)``: for weights (n_heads, seq, seq), each head's
    mean weight from query i on key i - 1, over the queries that have a previous token."""
    rng = input_rng(rng)
    check = Checker("check_previous_token_share", fn, "previous_token_share")
    weights = attention.softmax(2 * rng.normal(size=(3, 6, 6)))  # (n_heads, seq_q, seq_k)
    case = "weights (3, 6, 6) = (n_heads, seq_q, seq_k)"
    expected = np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean(axis=-1)  # (n_heads,)
    check.compare(check.call(weights, case=case), expected, case=case, mistakes=[
        Mistake("you measured the weight on the *next* token (key i + 1); the previous token is "
                "key i - 1: np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).",
                lambda: np.diagonal(weights, offset=1, axis1=-2, axis2=-1).mean(axis=-1)),
        Mistake("you included query 0, which has no previous token: average over queries "
                "1 .. seq - 1 only.", lambda: np.diagonal(weights, offset=-1, axis1=-2,
                                                          axis2=-1).sum(axis=-1) / 6),
        Mistake("you averaged over the heads too: return one share per head, shape (n_heads,).",
                lambda: np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean()),
        Mistake("you measured the diagonal (each token on itself).",
                lambda: np.diagonal(weights, axis1=-2, axis2=-1).mean(axis=-1)),
    ])
    check.passed("one share per head, averaged over the queries that have a previous token.",
                 quiet)


# ------------------------------------------------------------ questions answered before the solutions
TROPHY_HEAD = Choice("check_trophy_head", (
    "In \u201cThe trophy doesn't fit in the suitcase because it is too *small*\u201d, \u201cit\u201d is the "
    "suitcase. Where does layer 3 head 1 put its weight from \u201cit\u201d?"), [
    Option("Mostly on \u201csuitcase\u201d: it resolves the pronoun.",
           hint="a head that resolved pronouns would switch between the two sentences; this one hardly "
                "moves. Measure both before you credit a head with understanding."),
    Option("Mostly on \u201ctrophy\u201d, about as in the \u201ctoo big\u201d sentence.",
           explains="it puts more than half its weight on “trophy” in both sentences: from “it”, this "
                    "head finds the sentence's subject. Pronouns usually do refer to the subject, which "
                    "is why it looked clever."),
    Option("Evenly on both nouns: the sentence is ambiguous to it.",
           hint="the weights are far from even: one noun gets most of it, in both sentences."),
])

check_trophy_head = check_function(TROPHY_HEAD, __name__,
                                   "Grade your answer to “The trophy and the suitcase”: a letter.")

ABLATION_ORDER = Order("check_ablation_order", (
    "Order by how much of the paraphrase gap is lost, most first."), [
    "switching off the one head whose removal costs the most",
    "switching off all the [CLS] (\u201cparking\u201d) heads together",
    "switching off all the mixed heads together (fewer than the parking heads)",
], "cba", mistakes=[
    Before("b", "c", "more heads are not more work: the parking heads put most of their weight on a token "
                     "that carries no meaning, so even all of them together cost little; the mixed heads do "
                     "the work."),
    Before("a", "c", "no single head matters much here (a few per cent of the gap at most): many heads share "
                     "each job, so a group costs more than any one head."),
    Before("a", "b", "one head costs at most a few per cent of the gap; the parking heads together, idle "
                     "as each one is, cost a little more than that."),
], otherwise="compare the groups by what their heads do, not by how many heads they hold.",
    explanation="the mixed heads cost several times as much as the more numerous parking heads, which "
                "together cost a little more than the most useful single head. A head's pattern tells "
                "you where it reads; only an ablation tells you what it is worth.")

check_ablation_order = check_function(ABLATION_ORDER, __name__,
                                      "Grade your answer to “Switch off the parking heads”: letters.")

MODIFIER_NOUNS = Order("check_modifier_nouns", (
    "Layer 3 head 1 finds the noun of nearly every determiner. Order these scores on the same sentences, "
    "highest first (each a share of pairs whose most-attended word is the labelled one)."), [
    "a random head, from each modifier to its noun",
    "layer 3 head 1, from each noun back to its determiner",
    "layer 3 head 1, from each modifier (an adjective between a determiner and its noun) to its noun",
    "the best fixed offset, from each modifier to its noun",
], "cdba", mistakes=[
    Before("d", "c", "\u201cthe next word\u201d is a strong rule for modifiers, since the last one stands "
                     "just before its noun, but it misses the first of two or three. The head finds the "
                     "noun past them, as it did from the determiner: it follows the noun, not a distance."),
    Before("b", "c", "attention has a direction: a head that sends the determiner to its noun need not send "
                     "the noun back. Read from the noun, the same head has other work to do."),
    Before("b", "d", "attention has a direction: a head that sends the determiner to its noun need not send "
                     "the noun back, and the reversed pairs are not what it does best."),
    Before("a", "c", "a random head picks one of about ten other words: about one pair in ten."),
    Before("a", "d", "a random head picks one of about ten other words; a rule of position that is right "
                     "for every last modifier does far better."),
    Before("a", "b", "a random head picks one of about ten other words. Even read the wrong way, the head "
                     "lands on the determiner more often than that: a noun's determiner is often the word "
                     "just before it."),
], otherwise="ask of each score whether it follows the relation, a position, or nothing.",
    explanation="from a modifier the head finds the noun nearly as well as from a determiner, well above "
                "\u201cthe next word\u201d; read the other way, from the noun, it falls below that rule "
                "(though above chance). Its job looks like \u201cfind my noun\u201d, in one direction.")

check_modifier_nouns = check_function(MODIFIER_NOUNS, __name__,
                                      "Grade your answer to \u201cModifiers and their noun\u201d: letters.")
