"""Checks for the chapter "Attention, up close" (``chapters/attention_up_close.md``).

What a learner finds here: :func:`check_running_mean`, the check of "A running mean by attention"
(attention with equal scores and a causal mask); the questions :func:`check_hard_lookup` (a hard
lookup against a soft one, and why training needs the soft one), :func:`check_same_dog` (when a word
comes out of attention with the same vector in two sentences) and :func:`check_telescope_query`
(which query is sure to find one word: the one that asks for its scores).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention, masks
from mha.checks.machinery import Checker, Mistake, learner_check
from mha.checks.questions import Choice, Option, check_function


def _running_mean_mistakes(x: np.ndarray) -> list[Mistake]:
    seq = x.shape[-2]
    sdpa = attention.scaled_dot_product_attention
    flat = np.zeros_like(x)  # equal scores: zero queries and keys
    return [
        Mistake("every row is the mean of *all* the tokens: the future is not masked. Pass "
                "mask=mha.causal_mask(seq).", lambda: sdpa(flat, flat, x)),
        Mistake("each row leaves out its own token (and the first row is zero): the causal mask "
                "keeps the diagonal, np.tril(..., k=0).",
                lambda: sdpa(flat, flat, x, np.tri(seq, k=-1, dtype=bool))),
        Mistake("each row averages the tokens *after* it: the mask is upside down. True on and "
                "below the diagonal, mha.causal_mask(seq).",
                lambda: sdpa(flat, flat, x, ~np.tri(seq, k=-1, dtype=bool))),
        Mistake("the scores are not equal: with q = k = x each token weights the earlier ones by "
                "similarity. Give every query and key the same vector (zeros, or ones).",
                lambda: sdpa(x, x, x, masks.causal_mask(seq))),
    ]


@learner_check
def check_running_mean(fn: Callable[..., Any], *, quiet: bool = False) -> None:
    """Check ``running_mean(x)``: row i of the result is the mean of ``x[..., :i + 1, :]``.

    Examples
    --------
    >>> import mha
    >>> def running_mean(x):
    ...     ones = np.ones_like(x)  # equal scores
    ...     return mha.scaled_dot_product_attention(ones, ones, x, mha.causal_mask(x.shape[-2]))
    >>> check_running_mean(running_mean)
    ✔ check_running_mean passed: the running mean of the past, one sequence and a batch.
    """
    check = Checker("check_running_mean", fn, "running mean")
    rng = np.random.default_rng(0)
    for x, case in ((rng.standard_normal((5, 4)), "x of shape (5, 4)"),
                    (rng.standard_normal((2, 6, 3)), "a batch x of shape (2, 6, 3)")):
        counts = np.arange(1, x.shape[-2] + 1)[:, None]  # (seq, 1): tokens up to i
        expected = np.cumsum(x, axis=-2) / counts
        got = check.call(x.copy(), case=case)
        check.compare(got, expected, case=case, mistakes=_running_mean_mistakes(x))
    check.passed("the running mean of the past, one sequence and a batch.", quiet)


# ------------------------------------------------------------ questions answered before the solutions
HARD_LOOKUP = Choice("check_hard_lookup", (
    "The query of \u201cit\u201d is the mild one of the soft lookup (along animal's key, long enough to give "
    "animal 70 % of the weight). A *hard* "
    "lookup gives all the weight to the best-scoring key (a one-hot row at the argmax). Which are true? "
    "Select all."), [
    Option("The hard lookup returns exactly `v[i_animal]` for \u201cit\u201d.",
           explains="animal's key scores highest, so the one-hot row picks its value, unchanged.",
           hint="(a) is true: animal's key scores highest, and a hard lookup hands over the best key's value "
                "as it is, nothing blended in."),
    Option("Nudging the query of \u201cit\u201d by 0.001 changes the hard lookup's output.",
           hint="a small nudge does not move the argmax, so the hard output stays put: its gradient with "
                "respect to the query is zero, and training gets no signal from it."),
    Option("Nudging the query of \u201cit\u201d by 0.001 changes the soft lookup's output.",
           explains="every soft weight is a smooth function of the query, so the output moves a little "
                    "with it: that change is the gradient training follows.",
           hint="(c) is true: a nudge moves every score, so every softmax weight, so the blend. That small "
                "change is exactly what a gradient measures."),
    Option("The soft lookup's output is one of the rows of `v`.",
           hint="a soft lookup returns a blend: with most of the weight on animal and the rest spread over "
                "the other tokens, the output lies between the values, on none of them."),
    Option("Made 10 times longer, the query gives animal more than 0.99 of the soft weight.",
           explains="a longer query multiplies every score, and the softmax of large scores tends to "
                    "the one-hot argmax: the hard lookup is the limit of the soft one.",
           hint="(e) is true: scaling the query scales every score, and the softmax of widely spread "
                "scores puts almost everything on the largest."),
], several=True)

check_hard_lookup = check_function(HARD_LOOKUP, __name__,
                                   "Grade your answer to \u201cHard or soft\u201d: letters.")

SAME_DOG = Choice("check_same_dog", (
    "Queries, keys and values are the toy embeddings themselves, as in `attend_to_context`. For which "
    "pairs of sentences does \u201cdog\u201d come out of attention with the *same* vector? Select all."), [
    Option("\u201cdog bites man\u201d and \u201cman bites dog\u201d.",
           explains="without positions attention sees a set of tokens: reordering them reorders the "
                    "rows, and dog's scores and the values it mixes stay the same.",
           hint="(a) is true: nothing in these queries, keys or values says where a word stands, so "
                "swapping two words changes nothing for \u201cdog\u201d."),
    Option("\u201cthe dog barks\u201d and \u201cthe dog sleeps\u201d.",
           hint="one different neighbour changes one of dog's scores and one of the values it mixes: "
                "the blend moves (that is the whole point of context)."),
    Option("\u201cdog bites man\u201d and \u201cdog bites man man\u201d.",
           hint="a repeated word is two keys with two values: it gets its weight twice, and the blend "
                "moves towards it. Attention counts words, it does not deduplicate them."),
    Option("\u201cdog\u201d and \u201cdog dog\u201d.",
           explains="every key and value is dog's own vector, so whatever the weights, the blend is "
                    "dog's vector.",
           hint="(d) is true: when every value is dog's vector, any weights that sum to 1 give back "
                "dog's vector."),
], several=True)

check_same_dog = check_function(SAME_DOG, __name__,
                                "Grade your answer to \u201cSame word, same vector?\u201d: letters.")

TELESCOPE_QUERY = Choice("check_telescope_query", "Which query is *sure* to make \u201ctelescope\u201d "
                         "attend mostly to \u201cman\u201d (with the chapter's `W_q`, `W_k`)?", [
    Option("`x_man @ W_q`, the query of \u201cman\u201d.", hint="that makes \u201ctelescope\u201d look where "
           "\u201cman\u201d looks, not at \u201cman\u201d: to find a token, aim at its *key*."),
    Option("A long vector along `k_man`, the key of \u201cman\u201d.",
           hint="often, but not surely: a score is the query's length times the key's shadow on its "
                "direction, and a key longer than man's, a little to the side, can cast the longer shadow "
                "and win (the arrows of the first chapter). Ask for the scores themselves."),
    Option("A vector of length 1 along `k_man`.", hint="too short: its scores stay small, and the softmax of "
           "small scores is nearly uniform."),
    Option("`v_man`, the value of \u201cman\u201d.",
           hint="values never enter the scores: they are what a token hands over once the weights are set."),
    Option("The shortest query that scores `k_man` 20 and every other key 0 (least squares).",
           explains="it asks for exactly the scores that make man win: 20 against 0 for every other key, a "
                    "gap the softmax turns into nearly all the weight."),
])

check_telescope_query = check_function(TELESCOPE_QUERY, __name__,
                                       "Grade your answer to “The telescope”: a letter.")
