"""Checks for the chapter "A tiny GPT that writes" (``chapters/tiny_gpt.md``).

What a learner finds here: :func:`check_temperature`, the chapter's exercise that turns logits into
next-token probabilities at a temperature, and the mistakes it recognises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import attention
from mha.checks._core import Checker, Mistake, learner_check


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
