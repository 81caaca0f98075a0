"""Checks for the chapter "Attention, up close" (``chapters/attention_up_close.md``).

What a learner finds here: :func:`check_telescope_query`, the question of the telescope exercise:
where a query must point, and how long it must be, to find one word.
"""

from __future__ import annotations

from mha.checks.questions import Choice, Option, check_function

TELESCOPE_QUERY = Choice("check_telescope_query", "Which query makes \u201ctelescope\u201d attend *mostly* "
                         "to \u201cman\u201d (with the chapter's `W_q`, `W_k`)?", [
    Option("`x_man @ W_q`, the query of \u201cman\u201d.", hint="that makes \u201ctelescope\u201d look where "
           "\u201cman\u201d looks, not at \u201cman\u201d: to find a token, point at its *key*."),
    Option("A long vector along `k_man`, the key of \u201cman\u201d.", explains="q\u00b7k is largest for the "
           "key the query points along, and a long query widens the gaps until the softmax picks that key."),
    Option("A vector of length 1 along `k_man`.", hint="right direction, too short: its scores stay small, "
           "and the softmax of small scores is nearly uniform. Scale it up."),
    Option("`v_man`, the value of \u201cman\u201d.",
           hint="values never enter the scores: they are what a token hands over once the weights are set."),
])

check_telescope_query = check_function(TELESCOPE_QUERY, __name__,
                                       "Grade your answer to “The telescope”: a letter.")
