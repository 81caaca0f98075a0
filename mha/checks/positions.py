"""Checks for the chapter "Positions: telling attention where words are" (``chapters/positions.md``).

What a learner finds here: :func:`check_rotate_new_keys`, the chapter's exercise that applies RoPE to
keys appended after a cache, and the two wrong position counts it recognises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mha import positions
from mha.checks._core import Checker, Mistake, learner_check
from mha.checks._shared import input_rng


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
