"""Copy detection reports evidence, not verdicts: no honest student is listed, slips included; a match
counts only when several independent values agree, with the chance computed from the variant space.

These run on the five real assignments without a sandbox (the evidence reads value answers only);
``test_variants.py`` and ``test_round_three.py`` grade whole notebooks with the command line.
"""

from __future__ import annotations

import csv
import io
import itertools
import math

import pytest

from mha_classroom import load_assignment
from mha_classroom.copies import CLASS_CHANCE, ChanceModel, copies_csv, find_evidence
from mha_classroom.variants import (
    draws,
    for_student,
    instructor_values,
    values_for,
    variant_source,
    with_values,
)
from tests.classroom.conftest import ASSIGNMENTS, ROOT

pytestmark = pytest.mark.classroom
SEED = "3c8f1e7a9b2d4c6e0f1a3b5c7d9e2f4a6b8c0d1e3f5a7b9c2d4e6f8a0b1c3d5e"
CLASS = tuple(f"s{number:02d}" for number in range(40))
A1 = ROOT / "assignments" / "01-self-attention.md"
A5 = ROOT / "assignments" / "05-blocks-decoding-and-real-models.md"

#: Natural slips on each assignment's value answers: (name, the wrong formula from the student's own
#: numbers). Each is a mistake a student makes, not a copy.
SLIPS = {
    "01-self-attention": {"spread": lambda v: 1 / v["D_K"], "shrink": lambda v: v["D_K"]},
    "02-multi-head-and-shapes": {"leak_token": lambda v: ((v["N_HEADS"] - 1) * v["SEQ"] + v["LEAK_ROW"])
                                 // v["N_HEADS"] + 1},
    "03-cross-attention-and-cost": {"self_memory_factor": lambda v: v["GROW"],
                                    "cross_memory_factor": lambda v: v["GROW"] ** 2},
    "04-positions-heads-efficient": {"last_query_entropy": lambda v: math.log(v["N_TOKENS"] - 1)},
    "05-blocks-decoding-and-real-models": {
        "block_parameters": lambda v: 4 * v["D_MODEL"] ** 2 + 2 * v["D_MODEL"] * v["D_FF"],
        "cache_bytes": lambda v: v["LAYERS"] * v["CACHE_BATCH"] * v["TOKENS"] * v["CACHE_D"] * 4,
        "size_order": lambda v: "ABCDE",
        "train_values": lambda v: [0.0, 1.0],
    },
}


def _released(assignment) -> dict[str, str]:
    return {s: variant_source(for_student(assignment, SEED, s)) for s in CLASS}


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_no_honest_student_is_listed_whatever_slips_they_make(source):
    """Forty students, each giving their own right values, then every combination of the natural
    slips above: some slips land exactly on a classmate's right answer, and nobody is listed."""
    assignment = load_assignment(source)
    model, released = ChanceModel(assignment), _released(assignment)
    slips = SLIPS[assignment.name]
    drawn = {s: values_for(assignment, SEED, s) for s in CLASS}
    right = {s: model.evaluate(drawn[s]) for s in CLASS}
    landed = 0
    for chosen in range(len(slips) + 1):
        for names in itertools.combinations(sorted(slips), chosen):
            answers = {s: {**right[s], **{name: slips[name](drawn[s]) for name in names}}
                       for s in CLASS}
            landed += sum(answers[s][n] == right[o][n] for s in CLASS for o in CLASS if o != s
                          for n in names)
            cells = {s: None for s in CLASS}
            assert find_evidence(assignment, SEED, CLASS, answers, cells, released, model) == []
    if assignment.name.startswith(("01", "05")):
        assert landed > 0, "the slips must land on classmates' answers for this test to mean anything"


def test_the_chance_of_a_value_is_its_share_of_the_variant_space():
    """Counted against the instructor's whole notebook run for each combination of the draws."""
    assignment = load_assignment(A5)
    model = ChanceModel(assignment)
    piece = next(p for p in model.pieces if p.names == ("block_parameters",))
    assert piece.draws == ("D_FF", "D_MODEL")
    by_name = {d.name: d for d in draws(assignment)}
    defaults = {d.name: d.default for d in by_name.values()}
    counted: dict[int, int] = {}
    for d_ff, d_model in itertools.product(by_name["D_FF"].args, by_name["D_MODEL"].args):
        # the instructor's whole notebook, with the draws set as a student's copy sets them
        copy = with_values(assignment, {**defaults, "D_FF": d_ff, "D_MODEL": d_model})
        value = instructor_values(copy)["block_parameters"]
        counted[value] = counted.get(value, 0) + 1
    total = len(by_name["D_FF"].args) * len(by_name["D_MODEL"].args)
    for value, count in counted.items():
        assert model.chance(piece, {"block_parameters": value}) == count / total
    one = load_assignment(A1)
    (d_k,) = ChanceModel(one).pieces  # shrink and spread both come from D_K: one piece
    assert d_k.names == ("shrink", "spread") and d_k.draws == ("D_K",)


def test_several_independent_values_of_one_classmate_are_listed_with_their_chance():
    assignment = load_assignment(A5)
    model, released = ChanceModel(assignment), _released(assignment)
    right = {s: model.evaluate(values_for(assignment, SEED, s)) for s in CLASS}
    answers = {s: dict(right[s]) for s in CLASS}
    differ = [n for n in ("block_parameters", "cache_bytes") if right["s01"][n] != right["s00"][n]]
    assert len(differ) == 2
    answers["s00"].update({n: right["s01"][n] for n in differ})  # s01's numbers, typed in
    answers["s02"]["cache_bytes"] = right["s03"]["cache_bytes"]  # one value alone: not evidence
    matches = find_evidence(assignment, SEED, CLASS, answers, {s: None for s in CLASS}, released, model)
    assert [(m.student, m.other, m.independent) for m in matches] == [("s00", "s01", 2)]
    match = matches[0]
    assert match.chance == math.prod(p for _, p in match.pieces) and match.class_chance <= CLASS_CHANCE
    assert match.class_chance == pytest.approx(1 - (1 - match.chance) ** (len(CLASS) - 1))
    rows = list(csv.DictReader(io.StringIO(copies_csv(matches))))
    assert rows[0]["student"] == "s00" and "block_parameters" in rows[0]["what_matches"]
    assert rows[0]["chance_in_this_class"].startswith("1 in ")


def test_a_variant_cell_of_another_copy_is_evidence_of_its_own():
    assignment = load_assignment(A1)
    model, released = ChanceModel(assignment), _released(assignment)
    right = {s: model.evaluate(values_for(assignment, SEED, s)) for s in CLASS}
    cells = {s: None for s in CLASS}
    cells["s05"] = released["s06"]
    matches = find_evidence(assignment, SEED, CLASS, right, cells, released, model)
    assert [(m.student, m.other) for m in matches] == [("s05", "s06")]
    assert matches[0].independent >= 2 and matches[0].class_chance < 1e-9
    cells["s05"] = released["s05"].replace("SEED =", "SEED = 1 +")  # changed by hand: matches nobody
    assert find_evidence(assignment, SEED, CLASS, right, cells, released, model) == []
