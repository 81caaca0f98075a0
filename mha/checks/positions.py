"""Checks for the chapter "Positions: telling attention where words are" (``chapters/positions.md``).

What a learner finds here: :func:`check_rotate_new_keys`, the chapter's exercise that applies RoPE to
keys appended after a cache, and the two wrong position counts it recognises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import positions
from mha.checks.machinery import Checker, Mistake, learner_check
from mha.checks.questions import Choice, Number, Option, Range, check_function
from mha.checks.shared import input_rng


@learner_check
def check_rotate_new_keys(fn: Callable[..., Any], *, rng: np.random.Generator | None = None,
                          quiet: bool = False) -> None:
    """Check ``rotate_new_keys(k_new, n_cached)``: RoPE for keys appended after ``n_cached``
    cached ones; ``k_new`` is (n_new, d_head)."""
    rng = input_rng(rng)
    check = Checker("check_rotate_new_keys", fn, "rotate_new_keys")
    for n_new, n_cached in ((1, 10), (3, 5)):
        k_new = rng.normal(size=(n_new, 8))
        case = f"{n_new} new key(s) after {n_cached} cached, d_head 8"
        got = check.call(k_new, n_cached, case=case)
        expected = positions.apply_rotary(k_new, positions=np.arange(n_cached, n_cached + n_new))
        check.compare(got, expected, case=case, mistakes=[
            Mistake("the new keys were rotated as if they stood at positions 0, 1, ...: "
                    "apply_rotary numbers the array you pass from 0; pass "
                    "positions=np.arange(n_cached, n_cached + n_new).",
                    lambda k=k_new: positions.apply_rotary(k)),
            Mistake("off by one: the first new key stands at position n_cached (the cached keys "
                    "hold positions 0 .. n_cached - 1).", lambda k=k_new, n=n_cached:
                    positions.apply_rotary(k, positions=np.arange(n + 1, n + 1 + len(k)))),
        ])
    check.passed("each new key rotated for its own position, as if all were rotated at once.",
                 quiet)


# ------------------------------------------------------------ questions answered before the solutions
FIRST_TOKEN_TWO_BACK = Choice("check_first_token_two_back", (
    "Head 1's bias is \u22128 \u00b7 |offset + 2| (offset = key position \u2212 query position), and nothing "
    "is masked. Where does the first token, which has no token two back, put most of its weight?"), [
    Option("On itself, position 0.",
           explains="the bias ranks the offsets a token has by their distance to −2; for the first "
                    "token the nearest is offset 0, itself. The second token likewise picks position 0 "
                    "(offset −1)."),
    Option("On position 2, two tokens *ahead*.",
           hint="the bias depends on the signed offset: +2 is four steps from −2 and gets −32, almost "
                "the lowest it can."),
    Option("Evenly on every token: it has no key two back.",
           hint="it has no key at −2, but the bias still ranks the offsets it has: the nearer to −2, "
                "the higher. Softmax turns those differences of 8 into a clear winner."),
    Option("Nowhere: its row is all zeros (or NaN).",
           hint="a bias only adds to scores and nothing is masked, so the row is an ordinary distribution "
                "that sums to 1."),
])

check_first_token_two_back = check_function(FIRST_TOKEN_TWO_BACK, __name__,
                                            "Grade your answer to “A head that looks two back”: a letter.")

SINUSOID_DIRECTION = Choice("check_sinusoid_direction", (
    "Is the dot product p_t \u00b7 p_{t+k} of two sinusoidal encodings the same for k and \u2212k?"), [
    Option("Yes, for every k: it is a sum of cosines of \u03c9\u00b7k, and cosine is even.",
           explains="sin(ωt) sin(ω(t+k)) + cos(ωt) cos(ω(t+k)) = cos(ωk), and cos(−ωk) = cos(ωk): this "
                    "term alone cannot tell “three before me” from “three after”."),
    Option("No: the sine terms change sign with k.",
           hint="the sines cancel in each pair: sin(ωt) sin(ω(t+k)) + cos(ωt) cos(ω(t+k)) = cos(ωk), "
                "and no sine is left."),
    Option("Only for small k; far apart, the two differ.",
           hint="the identity holds at every distance: the dot product is \u03a3 cos(\u03c9_i k), even in k "
                "whatever its size."),
    Option("It depends on t.",
           hint="t cancels too: the dot product depends only on the offset k (that is what makes it useful), "
                "and it is even in k."),
])

check_sinusoid_direction = check_function(SINUSOID_DIRECTION, __name__,
                                          "Grade your answer to “Does direction matter?”: a letter.")

ALIBI_FAR_BIAS = Number("check_alibi_far_bias", (
    "With 8 heads, ALiBi gives head 0 the slope 1/2. What bias does head 0 add to the score of a key "
    "1,000 tokens back?"), Range(-500.5, -499.5), wrong=[
    Range(499.5, 500.5, "ALiBi *subtracts*: a far key is penalised, bias = \u2212slope \u00d7 distance."),
    Range(-1000.5, -999.5, "that is a slope of 1; head 0's slope here is 1/2."),
    Range(-0.5, 0.5, "ALiBi neither masks nor ignores far keys: its penalty keeps growing with distance."),
    Range(-1.6, -1.4, "that stops at 3 tokens, like a learned table with max_distance = 3; ALiBi has no "
                      "maximum distance, its penalty grows in a straight line to any length."),
], otherwise="bias = \u2212slope \u00d7 distance, with the distance in tokens.",
    explanation="−1/2 × 1000 = −500: ALiBi learns nothing and never stops growing, where a learned table "
                "gives every key beyond ±M its last entry.")

check_alibi_far_bias = check_function(ALIBI_FAR_BIAS, __name__,
                                      "Grade your answer to “ALiBi in one sentence”: a number.")
