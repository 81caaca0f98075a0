"""A copy per student: different inputs for each, full marks for the instructor's solution on every
copy, and value answers copied from another copy lose their points and reach the teacher."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from mha_classroom import load_assignment
from mha_classroom.__main__ import main
from mha_classroom.probes import record
from mha_classroom.release import nbgrader_notebook, write_notebook
from mha_classroom.source import AssignmentError
from mha_classroom.variants import (
    check_seed,
    draws,
    for_student,
    instructor_values,
    read_students,
    same_value,
    values_for,
    variant_cell,
)
from tests.classroom.conftest import ASSIGNMENTS, ROOT, TEST_LIMITS

pytestmark = pytest.mark.classroom

SOURCE = ROOT / "assignments" / "01-self-attention.md"
SEED = "a teacher's secret 7f3a"
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


def test_bad_seeds_lists_and_variant_lines_are_refused(tmp_path):
    with pytest.raises(ValueError, match="at least 8 characters"):
        check_seed("1234")
    (tmp_path / "class.txt").write_text("ann\nbob\nann\n", encoding="utf8")
    with pytest.raises(ValueError, match="listed twice: ann"):
        read_students(tmp_path / "class.txt")
    (tmp_path / "class.txt").write_text("ann\n../bob\n", encoding="utf8")
    with pytest.raises(ValueError, match="'../bob'"):
        read_students(tmp_path / "class.txt")
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


def test_value_answers_of_another_copy_lose_their_points_and_are_reported(released, sandbox):
    submissions, out = released / "submitted", released / "grades"
    sizes = [values_for(load_assignment(SOURCE), SEED, s)["D_K"] for s in CLASS[:4]]
    assert len(set(sizes)) == 4, "the four students below need four different D_K"
    write_notebook(_instructor("student00"), submissions / "student00.ipynb")
    write_notebook(_instructor("student01"), submissions / "student01.ipynb")
    # student02 hands in student00's whole notebook (its variant cell and its numbers with it)
    write_notebook(_instructor("student00"), submissions / "student02.ipynb")
    # student03 types in student01's numbers for the two predicted values
    own = _instructor("student03")
    theirs = instructor_values(for_student(load_assignment(SOURCE), SEED, "student01"))
    for cell in own["cells"]:
        if "spread = math.sqrt(D_K) / D_K" in cell["source"]:
            cell["source"] = cell["source"].replace(
                "shrink = math.sqrt(D_K)", f"shrink = {theirs['shrink']!r}").replace(
                "spread = math.sqrt(D_K) / D_K", f"spread = {theirs['spread']!r}")
    write_notebook(own, submissions / "student03.ipynb")
    limits = [f"--cell-timeout={TEST_LIMITS.cell_timeout}", f"--timeout={TEST_LIMITS.timeout * 2}",
              f"--memory-mb={TEST_LIMITS.memory_mb}"]
    assert main(["grade", str(SOURCE), str(submissions), "--out", str(out), "--seed-file",
                 str(released / "seed.txt"), "--students", str(released / "class.txt"),
                 *limits]) == 0

    totals = {row["student"]: float(row["points"])
              for row in csv.DictReader((out / "totals.csv").open(encoding="utf8"))}
    full = load_assignment(SOURCE).max_points
    assert totals["student00"] == totals["student01"] == full  # each graded on their own copy
    rows = {(r["student"], r["question"]): r
            for r in csv.DictReader((out / "grades.csv").open(encoding="utf8"))}
    for cheat in ("student02", "student03"):
        assert float(rows[cheat, "diagnose"]["points"]) == 0
        assert "another copy" in rows[cheat, "diagnose"]["feedback"]
        assert totals[cheat] == full - 2  # the functions are the same for every copy
    copies = list(csv.DictReader((out / "copies.csv").open(encoding="utf8")))
    assert {(c["student"], c["answer"], c["matches_variant_of"]) for c in copies} == {
        ("student02", "shrink", "student00"), ("student02", "spread", "student00"),
        ("student03", "shrink", "student01"), ("student03", "spread", "student01")}
    summary = (out / "summary.md").read_text(encoding="utf8")
    assert "2 submissions with a value answer of another student's variant" in summary
    assert "student02, student03" in summary
    feedback = (out / "feedback" / "student03.md").read_text(encoding="utf8")
    assert "not the answer for your numbers" in feedback
