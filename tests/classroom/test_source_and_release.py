"""Markers are validated strictly; released notebooks hold no solution and no hidden test."""

from __future__ import annotations

import json

import pytest

from mha_classroom import AssignmentError, load_assignment, student_notebook
from mha_classroom.__main__ import main
from mha_classroom.release import nbgrader_notebook, student_source, write_atomically
from mha_classroom.source import classify_cell, parse_header, split_regions
from mha_classroom.validate import leaked_lines, secret_lines
from tests.classroom.conftest import ASSIGNMENTS

HEADER = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n"


def _md(*cells: str) -> str:
    return HEADER + "".join(f"\n```{{code-cell}} ipython3\n{cell}\n```\n" for cell in cells)


TEST_CELL = "# grade_id: t1  points: 1\nassert f() == 1"


@pytest.mark.parametrize(("source", "message"), [
    ("### BEGIN SOLUTION\nx = 1", r"line 1: region opened here never closed \('### END SOLUTION'\)"),
    ("x = 1\n### END SOLUTION", r"line 2: '### END SOLUTION' without its BEGIN \(nothing is open\)"),
    ("### BEGIN SOLUTION\n### END HIDDEN TESTS", r"'### END SOLUTION' expected"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION", r"line 2: .* inside the solution region .* cannot nest"),
    ("### BEGIN SOLUTIONS\nx = 1\n### END SOLUTIONS", r"line 1: unknown marker '### BEGIN SOLUTIONS'"),
    ("  ## end hidden test", r"unknown marker '## end hidden test'"),
    ("#### BEGIN ANSWER", r"unknown marker"),
])
def test_unbalanced_nested_and_unknown_markers_are_errors(source, message):
    with pytest.raises(AssignmentError, match=message):
        split_regions(source)


@pytest.mark.parametrize(("cell_type", "source", "message"), [
    ("code", "### BEGIN HIDDEN TESTS\nassert 1\n### END HIDDEN TESTS", r"hidden tests outside a test"),
    ("code", "# grade_id: t  points: 1\n### BEGIN SOLUTION\nx\n### END SOLUTION", r"holds a solution"),
    ("markdown", "### BEGIN SOLUTION\ntext\n### END SOLUTION", r"only allowed in code cells"),
    ("code", "# grade_id: t  points: 0\nassert 1", r"points must be a positive number, got '0'"),
    ("code", "# grade_id: t  points: many\nassert 1", r"points must be a positive number"),
    ("code", "# points: 3\nassert 1", r"malformed test header"),
])
def test_cells_with_misplaced_markers_or_bad_headers_are_errors(cell_type, source, message):
    with pytest.raises(AssignmentError, match=message):
        classify_cell(cell_type, source)


def test_header_and_roles():
    assert parse_header("#   grade_id: a.b-c_1   points: 2.5") == ("a.b-c_1", 2.5)
    assert classify_cell("code", "import numpy").role == "given"
    assert classify_cell("code", "### BEGIN SOLUTION\nx\n### END SOLUTION").role == "solution"
    assert classify_cell("code", TEST_CELL).role == "test"


def test_load_assignment_names_the_cell_and_rejects_duplicates(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_text(_md("x = 1", "def f():\n    ### BEGIN SOLUTION\n    return 1"))
    with pytest.raises(AssignmentError, match=r"bad.md, cell 2: line 2: region opened"):
        load_assignment(bad)
    twice = tmp_path / "twice.md"
    twice.write_text(_md(TEST_CELL, TEST_CELL))
    with pytest.raises(AssignmentError, match=r"grade_id 't1' used twice"):
        load_assignment(twice)
    none = tmp_path / "none.md"
    none.write_text(_md("x = 1"))
    with pytest.raises(AssignmentError, match=r"no test cell"):
        load_assignment(none)
    (tmp_path / "x.py").write_text("")
    with pytest.raises(AssignmentError, match=r"expected a MyST .md or .ipynb"):
        load_assignment(tmp_path / "x.py")


def test_solutions_become_stubs_at_their_indentation_and_hidden_tests_vanish():
    solution = classify_cell("code", "def f(x):\n    y = 2\n    ### BEGIN SOLUTION\n    return x * y\n"
                                     "    ### END SOLUTION")
    assert student_source(solution) == ("def f(x):\n    y = 2\n    # YOUR CODE HERE\n"
                                        "    raise NotImplementedError()")
    test = classify_cell("code", TEST_CELL + "\n### BEGIN HIDDEN TESTS\nassert f() != 2\n"
                                             "### END HIDDEN TESTS\nprint('done')")
    assert student_source(test) == TEST_CELL + "\nprint('done')"


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_released_assignments_hold_no_marker_no_solution_no_hidden_test(source):
    assignment = load_assignment(source)
    released = student_notebook(assignment)
    text = "\n".join(cell["source"] for cell in released["cells"])
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
    code = "\n".join(cell["source"] for cell in released["cells"] if cell["cell_type"] == "code")
    assert code.count("raise NotImplementedError()") == sum(
        segment.kind == "solution" for cell in assignment.cells for segment in cell.segments)
    assert len(secret_lines(assignment)) > 20  # the leak check has something to look for
    assert leaked_lines(assignment, released) == []
    roles = [cell["metadata"]["mha_classroom"]["role"] for cell in released["cells"]]
    assert roles.count("test") == len(assignment.tests)
    assert all(cell.get("outputs", []) == [] for cell in released["cells"])


def test_the_leak_check_finds_a_solution_line_left_in_a_release():
    assignment = load_assignment(ASSIGNMENTS[0])
    released = student_notebook(assignment)
    released["cells"][-1]["source"] += "\n    shifted = x - np.max(x, axis=axis, keepdims=True)"
    assert leaked_lines(assignment, released) == ["shifted = x - np.max(x, axis=axis, keepdims=True)"]


def test_nbgrader_export_marks_solution_and_graded_cells():
    assignment = load_assignment(ASSIGNMENTS[0])
    cells = nbgrader_notebook(assignment)["cells"]
    graded = [c["metadata"]["nbgrader"] for c in cells if c["cell_type"] == "code"
              and c["metadata"].get("nbgrader", {}).get("grade")]
    assert [(g["grade_id"], g["points"]) for g in graded] == [(t.grade_id, t.points)
                                                              for t in assignment.tests]
    solutions = [c for c in cells if c["cell_type"] == "code"
                 and c["metadata"].get("nbgrader", {}).get("solution")]
    assert solutions and all("### BEGIN SOLUTION" in c["source"] for c in solutions)
    ids = [c["metadata"]["nbgrader"]["grade_id"] for c in cells if "nbgrader" in c["metadata"]]
    assert len(ids) == len(set(ids))


def test_cli_release_writes_notebooks_and_refuses_bad_sources(tmp_path, capsys):
    assert main(["release", *map(str, ASSIGNMENTS), "--out", str(tmp_path / "release")]) == 0
    written = sorted(p.name for p in (tmp_path / "release").iterdir())
    assert written == [f"{p.stem}.ipynb" for p in ASSIGNMENTS]
    notebook = json.loads((tmp_path / "release" / written[0]).read_text())
    assert notebook["nbformat"] == 4 and notebook["metadata"]["kernelspec"]["name"] == "python3"
    bad = tmp_path / "bad.md"
    bad.write_text(_md("### BEGIN SOLUTION\nx = 1\n### END SOLUTIONS", TEST_CELL))
    assert main(["release", str(bad), "--out", str(tmp_path / "bad-release")]) == 2
    assert "unknown marker '### END SOLUTIONS'" in capsys.readouterr().err
    assert not (tmp_path / "bad-release").exists()


@pytest.mark.parametrize("command", ["release", "grade", "validate", "nbgrader"])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: mha-classroom " + command in capsys.readouterr().out


def test_atomic_write_leaves_the_old_file_when_interrupted(tmp_path, monkeypatch):
    target = tmp_path / "grades.csv"
    target.write_text("old\n")

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]
