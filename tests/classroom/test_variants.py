"""A copy per student: different inputs for each, full marks for the instructor's solution on every
copy, each student graded on the copy released to their id, and what matches another's copy is
evidence for the teacher alone (tests/classroom/test_copies.py for the evidence itself)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from mha_classroom import load_assignment
from mha_classroom.__main__ import main
from mha_classroom.probes import record
from mha_classroom.release import nbgrader_notebook, write_notebook
from mha_classroom.roster import read_roster
from mha_classroom.source import AssignmentError
from mha_classroom.variants import (
    draws,
    for_student,
    instructor_values,
    same_value,
    values_for,
    variant_cell,
)
from tests.classroom.conftest import ASSIGNMENTS, ROOT, TEST_LIMITS

pytestmark = pytest.mark.classroom

SOURCE = ROOT / "assignments" / "01-self-attention.md"
SEED = "5b1e0c9a7d3f28e64c1a9b07f3d2e8c16a4f0b9d2e7c3a18f5b6d0e9c2a7f4b1"  # as token_hex(32) writes
CLASS = [f"student{number:02d}" for number in range(30)]


def _variant_cell(notebook: dict) -> str:
    cells = [c["source"] for c in notebook["cells"] if c["source"].startswith("# variant")]
    assert len(cells) == 1, "each copy has exactly one variant cell"
    return cells[0]


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("variants")
    (folder / "class.txt").write_text("# the class\n" + "\n".join(CLASS) + "\n", encoding="utf8")
    (folder / "seed.txt").write_text(SEED + "\n", encoding="utf8")
    assert main(["release", str(SOURCE), "--students", str(folder / "class.txt"),
                 "--seed-file", str(folder / "seed.txt"), "--out", str(folder / "release")]) == 0
    return folder


def test_thirty_students_get_pairwise_different_inputs_and_sizes(released):
    cells = {s: _variant_cell(json.loads((released / "release" / s / f"{SOURCE.stem}.ipynb")
                                         .read_text(encoding="utf8"))) for s in CLASS}
    assert len(set(cells.values())) == 30
    values = {s: values_for(load_assignment(SOURCE), SEED, s) for s in CLASS}
    for name in ("SEED",):  # the seed of every test's inputs: no two students share one
        assert len({v[name] for v in values.values()}) == 30, name
    for name in ("D_K", "SEQ_Q", "SEQ_K", "BATCH"):  # sizes vary across the class too
        assert len({v[name] for v in values.values()}) >= 3, name
    for student, cell in cells.items():  # the released cell holds the student's own numbers
        for name, value in values[student].items():
            assert f"{name} = {value!r}" in cell.splitlines()
        assert "draw:" not in cell


def test_a_copy_depends_on_the_seed_and_the_student_only():
    assignment = load_assignment(SOURCE)
    assert values_for(assignment, SEED, "ann") == values_for(load_assignment(SOURCE), SEED, "ann")
    assert values_for(assignment, SEED, "ann") != values_for(assignment, SEED + "x", "ann")
    plain = {draw.name: draw.default for draw in draws(assignment)}  # the release without a seed
    cell = assignment.cells[variant_cell(assignment)].source
    assert all(f"{name} = {value!r}" in cell for name, value in plain.items())


#: A predicted value answer of each assignment that must differ between copies.
PREDICTED = {"01-self-attention": "spread", "02-multi-head-and-shapes": "leak_token",
             "03-cross-attention-and-cost": "self_memory_factor",
             "04-positions-heads-efficient": "last_query_entropy",
             "05-blocks-decoding-and-real-models": "size_order"}


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_every_assignment_has_copies_with_pairwise_different_inputs(source):
    assignment = load_assignment(source)
    seeds = {values_for(assignment, SEED, student)["SEED"] for student in CLASS}
    assert len(seeds) == len(CLASS), "every student's tests get inputs of their own"
    assert len(draws(assignment)) >= 2, "more than the seed varies: sizes or predicted numbers too"


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_the_instructor_solution_passes_every_test_of_every_copy(source):
    assignment = load_assignment(source)
    answers = set()
    for student in CLASS:
        copy = for_student(assignment, SEED, student)
        record(copy)  # raises AssignmentError if any test, hidden ones included, fails
        answers.add(repr(instructor_values(copy)[PREDICTED[source.stem]]))
    assert len(answers) >= 3, "the predicted answers must differ between copies"


def test_bad_lists_and_variant_lines_are_refused(tmp_path):
    (tmp_path / "class.txt").write_text("ann\nbob\nann\n", encoding="utf8")
    with pytest.raises(ValueError, match="listed twice: ann"):
        read_roster(tmp_path / "class.txt")
    (tmp_path / "class.txt").write_text("ann\n../bob\n", encoding="utf8")
    with pytest.raises(ValueError, match="line 2: student id '../bob'"):
        read_roster(tmp_path / "class.txt")
    text = SOURCE.read_text(encoding="utf8").replace("# draw: integers(1, 4)", "# draw: integers(4, 1)")
    (tmp_path / "bad.md").write_text(text, encoding="utf8")
    with pytest.raises(AssignmentError, match="lo <= hi"):
        draws(load_assignment(tmp_path / "bad.md"))


def test_answers_compare_as_numbers_within_a_tolerance():
    assert same_value(0.1767766952966369, 0.17677669529)
    assert not same_value(0.17677, 0.125)
    assert not same_value(True, 1) and same_value([1.0, 2.0], [1.0, 2.0 + 1e-12])
    assert not same_value([1.0, 2.0], [1.0, 2.0, 3.0])


def _instructor(student: str) -> dict:
    return nbgrader_notebook(for_student(load_assignment(SOURCE), SEED, student))


def test_each_student_is_graded_on_their_own_copy_and_no_student_is_told_of_a_match(released, sandbox):
    """student02 hands in student00's whole notebook (its variant cell with it): graded on the copy
    released to student02, and listed for the teacher (the variant cell is student00's). student03
    types student01's numbers for the two predicted values, one piece of evidence (both come from
    D_K): those questions fail on student03's own copy, and nobody is listed for it."""
    submissions, out = released / "submitted", released / "grades"
    sizes = [values_for(load_assignment(SOURCE), SEED, s)["D_K"] for s in CLASS[:4]]
    assert len(set(sizes)) == 4, "the four students below need four different D_K"
    write_notebook(_instructor("student00"), submissions / "student00.ipynb")
    write_notebook(_instructor("student01"), submissions / "student01.ipynb")
    write_notebook(_instructor("student00"), submissions / "student02.ipynb")
    own = _instructor("student03")
    theirs = instructor_values(for_student(load_assignment(SOURCE), SEED, "student01"))
    for cell in own["cells"]:
        if "spread = math.sqrt(D_K) / D_K" in cell["source"]:
            cell["source"] = cell["source"].replace(
                "shrink = math.sqrt(D_K)", f"shrink = {theirs['shrink']!r}").replace(
                "spread = math.sqrt(D_K) / D_K", f"spread = {theirs['spread']!r}")
    write_notebook(own, submissions / "student03.ipynb")
    limits = [f"--cell-timeout={TEST_LIMITS.cell_timeout}", f"--timeout={TEST_LIMITS.timeout * 2}",
              f"--memory-mb={TEST_LIMITS.memory_mb}", f"--record-key={released / 'key'}"]
    assert main(["grade", str(SOURCE), str(submissions), "--out", str(out), "--seed-file",
                 str(released / "seed.txt"), "--students", str(released / "class.txt"),
                 *limits]) == 0

    totals = {row["student"]: float(row["points"])
              for row in csv.DictReader((out / "totals.csv").open(encoding="utf8"))}
    full = load_assignment(SOURCE).max_points
    assert totals["student00"] == totals["student01"] == totals["student02"] == full
    rows = {(r["student"], r["question"]): r
            for r in csv.DictReader((out / "grades.csv").open(encoding="utf8"))}
    assert float(rows["student03", "diagnose"]["points"]) == 0  # wrong for student03's own D_K
    assert totals["student03"] == full - 2
    copies = list(csv.DictReader((out / "copies.csv").open(encoding="utf8")))
    assert [(c["student"], c["matches_the_copy_of"]) for c in copies] == [("student02", "student00")]
    assert "the variant cell released to them" in copies[0]["what_matches"]
    assert int(copies[0]["independent_values"]) >= 2
    summary = (out / "summary.md").read_text(encoding="utf8")
    assert "copy evidence for 1 submissions: student02" in summary
    assert "variant cell is not the one released to their id" in summary
    for student in ("student02", "student03"):  # the feedback says nothing of copies or teachers
        feedback = (out / "feedback" / f"{student}.md").read_text(encoding="utf8").lower()
        assert not any(word in feedback for word in ("copy of another", "copied", "teacher has"))
        assert "another copy" not in feedback and "another student" not in feedback
