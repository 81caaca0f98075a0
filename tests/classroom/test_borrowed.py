"""Which test cells the grader runs with a student's code that uses their names (no sandbox)."""

from __future__ import annotations

import pytest

from mha_classroom import load_assignment
from mha_classroom.borrowed import borrowed_test_cells, defined_names, missing_name
from mha_classroom.probes import Answer
from mha_classroom.release import student_notebook, student_source
from tests.classroom.conftest import ASSIGNMENTS

pytestmark = pytest.mark.classroom


def test_defined_names_are_the_top_level_bindings():
    source = ("import numpy as np\nimport os.path\nfrom math import sqrt as root\n"
              "W_q, (W_k, W_v) = 1, (2, 3)\nx: int = 4\ncount += 1\n"
              "for i in range(2):\n    inner = i\nwith open('f') as handle:\n    pass\n"
              "def helper(a):\n    local = a\nclass Box:\n    field = 1\n"
              "squares = [s * s for s in range(3)]\nlambda y: y\n")
    assert defined_names(source) == {"np", "os", "root", "W_q", "W_k", "W_v", "x", "count", "i",
                                     "inner", "handle", "helper", "Box", "squares"}
    assert defined_names("def broken(:\n") == set()


@pytest.mark.parametrize(("error", "name"), [
    (("NameError", "name 'W_q' is not defined", 3), "W_q"),
    (("NameError", "name 'W_q' is not defined. Did you mean: 'W_k'?", 3), "W_q"),  # Python 3.12+
    (("NameError", "free variable 'x' referenced before assignment", 1), None),
    (("AttributeError", "name 'W_q' is not defined", 1), None),
    (None, None),
])
def test_missing_name_reads_name_errors_only(error, name):
    assert missing_name(error) == name


@pytest.fixture(scope="module")
def released_cells():
    """Assignment 2 as a student gets it, as (cell_type, source, grade_id) with cell numbers from 1."""
    assignment = load_assignment(ASSIGNMENTS[1])
    cells = [(cell["cell_type"], cell["source"], cell["metadata"].get("mha_classroom", {}).get("grade_id"))
             for cell in student_notebook(assignment)["cells"]]
    return assignment, cells


def _number(cells, grade_id):
    return next(n for n, (_, _, g) in enumerate(cells, start=1) if g == grade_id)


def test_a_cell_gets_the_last_test_cell_above_it_that_defines_the_name(released_cells):
    assignment, cells = released_cells
    output, causal = _number(cells, "layer_output"), _number(cells, "layer_causal")
    after = causal + 2  # the predict cell: below both tests, which both define x
    reports = {after: ("error", ("NameError", "name 'x' is not defined", 1)),
               causal + 1: ("error", ("NameError", "name 'layer' is not defined", 2))}
    added, notes = borrowed_test_cells(assignment, cells, reports, {}, running=set())
    test = {t.grade_id: t for t in assignment.tests}
    # x: layer_causal (the last above the predict cell); layer: only layer_output defines it
    assert added == [(output, student_source(test["layer_output"])),
                     (causal, student_source(test["layer_causal"]))]
    assert "### BEGIN HIDDEN TESTS" not in added[0][1] and "mha.MultiHeadAttention(8" not in added[1][1]
    assert notes == [f"cell {causal + 1} uses layer, which the test cell 'layer_output' (cell {output}) "
                     "defines: as in your notebook, the grader ran that test cell (as released) before it",
                     f"cell {after} uses x, which the test cell 'layer_causal' (cell {causal}) defines: "
                     "as in your notebook, the grader ran that test cell (as released) before it"]


def test_nothing_is_added_for_names_no_test_defines_above_or_cells_already_running(released_cells):
    assignment, cells = released_cells
    causal = _number(cells, "layer_causal")
    reports = {causal + 2: ("error", ("NameError", "name 'nowhere' is not defined", 1)),
               2: ("error", ("NameError", "name 'x' is not defined", 1)),  # above every test cell
               causal + 3: ("error", ("ValueError", "name 'x' is not defined", 1))}
    assert borrowed_test_cells(assignment, cells, reports, {}, running=set()) == ([], [])
    reports = {causal + 2: ("error", ("NameError", "name 'W_q' is not defined", 1))}
    assert borrowed_test_cells(assignment, cells, reports, {}, running={causal}) == ([], [])


def test_a_function_that_misses_a_name_gets_the_last_test_cell_that_defines_it(released_cells):
    assignment, cells = released_cells
    answers = {"key": Answer("raised", exc=("NameError", "name 'rng' is not defined")),
               "other": Answer("raised", exc=("ValueError", "name 'x' is not defined"))}
    added, notes = borrowed_test_cells(assignment, cells, {}, answers, running=set())
    last = max(n for n, (_, source, g) in enumerate(cells, start=1) if g and "rng = " in source)
    assert [number for number, _ in added] == [last]
    assert notes[0].startswith("a function of yours uses rng") and notes[0].endswith("at its place")


def test_a_copied_test_cell_runs_once_from_its_first_place(released_cells):
    assignment, cells = released_cells
    causal = _number(cells, "layer_causal")
    copied = cells[:causal] + [cells[causal - 1]] + cells[causal:]  # a Jupyter copy right below it
    reports = {causal + 3: ("error", ("NameError", "name 'W_o' is not defined", 1))}
    added, _ = borrowed_test_cells(assignment, copied, reports, {}, running=set())
    assert [number for number, _ in added] == [causal]


def test_a_cell_that_stops_on_one_name_gets_every_test_name_it_reads_in_one_go(released_cells):
    assignment, cells = released_cells
    output, causal = _number(cells, "layer_output"), _number(cells, "layer_causal")
    cells = list(cells)
    experiment = causal + 2
    cells[experiment - 1] = ("code", "w = layer.W_q + W_k\nprint(np.abs(out - before).max(), x.shape)", None)
    reports = {experiment: ("error", ("NameError", "name 'layer' is not defined", 1))}
    added, notes = borrowed_test_cells(assignment, cells, reports, {}, running=set())
    assert [number for number, _ in added] == [output, causal]  # one run, not one per name
    assert notes[0].startswith(f"cell {experiment} uses layer and out, which the test cell 'layer_output'")
    assert notes[1].startswith(f"cell {experiment} uses W_k, before and x, which the test cell 'layer_causal")
    # np comes from the student's own setup cell; x redefined by the student's code after the test
    cells.insert(experiment - 1, ("code", "x = np.ones((1, 6, 8))", None))
    reports = {experiment + 1: ("error", ("NameError", "name 'layer' is not defined", 1))}
    _, notes = borrowed_test_cells(assignment, cells, reports, {}, running=set())
    assert "np" not in " ".join(notes) and notes[1].startswith(f"cell {experiment + 1} uses W_k and before,")
