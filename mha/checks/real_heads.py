"""Checks for the chapter "Real heads" (``chapters/real_heads.md``).

What a learner finds here: :func:`check_previous_token_share`, the chapter's exercise that measures
how much of each head's weight goes to the previous token, and the mistakes it recognises (the next
token, query 0 included, the heads averaged together, the diagonal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention
from mha.checks._core import Checker, Mistake, learner_check
from mha.checks._shared import input_rng


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
