"""The chance of a copy's values, computed from the variant space: what counts as one piece of
evidence, what a piece's chance is, and which values are never evidence."""

from __future__ import annotations

import itertools
import math

from conftest import CELLS, write_source
from mha_classroom import load_assignment
from mha_classroom.copies import ChanceModel


def test_values_read_from_shared_draws_are_one_piece_and_their_chance_is_their_share(small):
    model = ChanceModel(small)
    (piece,) = model.pieces  # spread reads D_K, cells reads ROWS and D_K: one piece, not two
    assert (piece.names, piece.draws) == (("cells", "spread"), ("D_K", "ROWS"))
    combos = list(itertools.product((16, 32, 64, 128), range(2, 10)))
    for rows in (2, 4, 8):
        cells = rows * 32
        share = sum(r * d == cells for d, r in combos) / len(combos)
        assert model.chance(piece, {"cells": cells}) == share
        assert model.chance(piece, {"cells": cells, "spread": math.sqrt(32) / 32}) == 1 / len(combos)
    assert model.chance(piece, {"cells": 7}) == 0


def test_values_that_are_not_a_formula_of_the_draws_are_never_evidence(tmp_path):
    cells = [*CELLS[:2],
             ("code", "def helper(n):\n    return n + 1"),
             ("code", "### BEGIN SOLUTION\nfrom_helper = helper(D_K)\n### END SOLUTION"),
             ("code", "### BEGIN SOLUTION\nfixed = 3\n### END SOLUTION"),
             ("code", "### BEGIN SOLUTION\nbroken = 1 / (D_K - 64)\n### END SOLUTION"),
             ("code", "### BEGIN SOLUTION\nkept = D_K * 2\n### END SOLUTION"),
             ("code", "# grade_id: t  points: 1\nassert fixed == 3")]
    model = ChanceModel(load_assignment(write_source(tmp_path / "other.ipynb", cells)))
    # a helper's result, a constant, a formula that fails on the defaults: only `kept` is evidence
    assert [piece.names for piece in model.pieces] == [("kept",)]
