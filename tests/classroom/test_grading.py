"""Grading as a teacher uses it: full marks for the solutions and zero for the stubs of all four
assignments inside the sandbox, the command line, identical re-grades, refusal without a sandbox."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from mha_classroom import grade_folder, grade_submission, load_assignment, write_reports
from mha_classroom import sandbox as sandbox_module
from mha_classroom.__main__ import main
from mha_classroom.release import nbgrader_notebook, write_notebook
from mha_classroom.validate import validate
from tests.classroom.conftest import ASSIGNMENTS, ROOT, TEST_LIMITS
from tests.classroom.hostile import CASES, build

pytestmark = pytest.mark.classroom


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_instructor_full_marks_released_zero_and_no_leak_in_the_sandbox(source, sandbox):
    import os

    environment = dict(os.environ)
    assert validate(load_assignment(source), TEST_LIMITS, sandbox=sandbox) == []
    # The assignments set MHA_CHECKS_STRICT for nbgrader's kernels; in the grader's process it must not
    # outlive the grading (it would turn every learner check in this process strict).
    assert dict(os.environ) == environment


def test_regrading_writes_the_same_bytes(hostile_batch, assignment_1, sandbox, tmp_path):
    chosen = [c for c in CASES if c.name in
              {"honest", "partial", "uses_mha", "os_exit", "markdown_injection", "invalid_json"}]
    paths = {"SOURCE": str(assignment_1.path), "OUT": str(tmp_path / "out"),
             "CANARY": str(hostile_batch.canary), "ROOT": str(hostile_batch.root),
             "SUBMISSIONS": str(tmp_path / "submitted")}
    for case in chosen:
        build(case, assignment_1, tmp_path / "submitted", paths)
    results = grade_folder(assignment_1, tmp_path / "submitted", TEST_LIMITS, sandbox=sandbox)
    write_reports(assignment_1, results, tmp_path / "out")
    ids = {r.student for r in results}
    assert ids == {c.name for c in chosen}

    def rows(path):
        return [line for line in path.read_text(encoding="utf-8").splitlines()
                if line.split(",")[0] in ids]

    assert rows(tmp_path / "out" / "grades.csv") == rows(hostile_batch.out / "grades.csv")
    for student in ids:
        name = f"{student}.md"
        assert (tmp_path / "out" / "feedback" / name).read_bytes() == \
            (hostile_batch.out / "feedback" / name).read_bytes()


def test_release_then_grade_from_the_command_line(tmp_path, assignment_1, sandbox):
    assert main(["release", str(ASSIGNMENTS[0]), "--out", str(tmp_path / "release")]) == 0
    assert main(["nbgrader", str(ASSIGNMENTS[0]), "--out", str(tmp_path / "source")]) == 0
    # an .ipynb source keeps jupytext (slow to import) out of the fresh process below
    source = str(tmp_path / "source" / "01-self-attention" / "01-self-attention.ipynb")
    submitted = tmp_path / "submitted"
    (submitted / "bob" / "01-self-attention").mkdir(parents=True)  # nbgrader's layout
    (tmp_path / "release" / "01-self-attention.ipynb").rename(
        submitted / "bob" / "01-self-attention" / "01-self-attention.ipynb")
    write_notebook(nbgrader_notebook(assignment_1), submitted / "alice.ipynb")
    (submitted / "carol").mkdir()  # a folder with no notebook
    done = subprocess.run(  # the real command, in a fresh process with a bare environment
        [sys.executable, "-m", "mha_classroom", "grade", source, str(submitted), "--out",
         "grades", "--cell-timeout", "2"], capture_output=True, text=True, check=False,
        cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "alice: 15 / 15" in done.stdout and "bob: 0 / 15" in done.stdout
    assert "carol: 0 / 15" in done.stdout and "graded 3 submission(s)" in done.stdout
    feedback = (tmp_path / "grades" / "feedback" / "carol.md").read_text()
    assert "not graded: no notebook in the folder" in feedback
    assert (tmp_path / "grades" / "summary.md").is_file()


def test_a_missing_folder_is_an_error(tmp_path, capsys, sandbox):
    assert main(["grade", str(ASSIGNMENTS[0]), str(tmp_path / "nowhere")]) == 2
    assert "expected a folder of submissions" in capsys.readouterr().err


def test_without_a_sandbox_the_grader_refuses_in_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sandbox_module, "_CACHE", {})
    real_which = shutil.which
    monkeypatch.setattr(sandbox_module.shutil, "which",
                        lambda name, path=None: None if name == "bwrap" else real_which(name, path=path))
    (tmp_path / "submitted").mkdir()
    status = main(["grade", str(ASSIGNMENTS[0]), str(tmp_path / "submitted"),
                   "--out", str(tmp_path / "grades")])
    error = capsys.readouterr().err
    assert status == 3 and error.count("\n") == 1
    assert "apt-get install bubblewrap" in error and "--trust-submissions" in error
    assert not (tmp_path / "grades").exists()


def test_trusted_mode_grades_the_same_without_a_sandbox(assignment_1, tmp_path):
    trusted = sandbox_module.get_sandbox(trust_submissions=True)
    path = write_notebook(nbgrader_notebook(assignment_1), tmp_path / "alice.ipynb")
    result = grade_submission(assignment_1, "alice", path, TEST_LIMITS, sandbox=trusted)
    assert result.points == result.max_points == 15


def test_a_missing_extra_is_a_one_line_hint(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "jupytext", None)  # import jupytext now raises ImportError
    assert main(["release", str(ASSIGNMENTS[0]), "--out", "unused"]) == 4
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and 'pip install "jupytext>=1.16"' in error


def test_a_test_that_feeds_one_answer_into_another_gets_another_round(sandbox, tmp_path):
    assignment = load_assignment(ASSIGNMENTS[1])  # merge_heads(split_heads(x)) == x
    notebook = nbgrader_notebook(assignment)
    for cell in notebook["cells"]:  # split_heads wrong (no transpose): new inputs for merge_heads
        cell["source"] = cell["source"].replace(
            "return x.transpose(0, 2, 1, 3)  # (batch, n_heads, seq, d_head)",
            "return x.reshape(batch, n_heads, seq, d_model // n_heads)")
    path = tmp_path / "chained.ipynb"
    path.write_text(json.dumps(notebook))
    result = grade_submission(assignment, "chained", path, TEST_LIMITS, sandbox=sandbox)
    feedback = {q.grade_id: q.feedback for q in result.questions}
    assert "merge_heads(split_heads(x)) must give x back" in feedback["merge_heads"]
    assert feedback["split_heads"].startswith("AssertionError: head 1 of token 0")


def test_value_answers_are_graded_right_and_wrong(sandbox, tmp_path):
    assignment = load_assignment(ASSIGNMENTS[3])  # predict and diagnose: variables, not functions
    notebook = nbgrader_notebook(assignment)
    for cell in notebook["cells"]:  # a wrong line number, the predictions left right
        cell["source"] = cell["source"].replace("buggy_line = 5  #", "buggy_line = 4  #")
    path = tmp_path / "values.ipynb"
    path.write_text(json.dumps(notebook))
    result = grade_submission(assignment, "values", path, TEST_LIMITS, sandbox=sandbox)
    points = {q.grade_id: q.points for q in result.questions}
    feedback = {q.grade_id: q.feedback for q in result.questions}
    assert points["predict"] == 2 and points["diagnose"] == 0
    assert "hidden test" in feedback["diagnose"]
    assert result.points == result.max_points - 1


def test_an_experiment_on_a_test_cells_variables_is_graded_as_the_notebook_ran_it(sandbox, tmp_path):
    assignment = load_assignment(ASSIGNMENTS[1])  # "think first, then try it" on the test above
    notebook = nbgrader_notebook(assignment)
    trials = {"numpy": "again = multi_head_attention(x, W_q, W_k, W_v, W_o, 2, causal=True)\n"
                       "assert np.allclose(again, before)\n",  # layer_causal's names, no mha
              "mha": "w = layer.W_q  # layer_output's layer: made with mha\n"}
    results = {}
    for name, trial in trials.items():
        for cell in notebook["cells"]:
            if cell["source"].startswith(("### BEGIN SOLUTION\nleaks_split_only", "again =", "w =")):
                cell["source"] = trial + ("leaks_split_only = True\nleaks_both_wrong = False\n"
                                          "leak_token = ((N_HEADS - 1) * SEQ + LEAK_ROW) // N_HEADS\n")
        notebook["cells"].append({"cell_type": "code", "metadata": {}, "source": "print(nowhere)"})
        path = tmp_path / f"{name}.ipynb"
        path.write_text(json.dumps(notebook))
        results[name] = grade_submission(assignment, name, path, TEST_LIMITS, sandbox=sandbox)
        del notebook["cells"][-1]
    for name, result in results.items():
        assert result.points == result.max_points, (name, result.questions)
        number = len(notebook["cells"]) + 1
        # a name no test cell defines is still the student's error; the test cells' own are not
        assert result.cell_errors == (f"cell {number}, line 1: NameError: name 'nowhere' is not defined",)
    assert any(" uses W_k, W_o, W_q, W_v, before and x, which the test cell 'layer_causal'" in note
               for note in results["numpy"].notes)  # every name the cell reads, in one run
    assert any("uses layer, which the test cell 'layer_output'" in note for note in results["mha"].notes)


def test_an_answer_fed_to_another_six_times_gets_the_rounds_it_needs(sandbox, tmp_path):
    assignment = load_assignment(ASSIGNMENTS[2])  # longest_sequence's result goes to weights_bytes
    notebook = nbgrader_notebook(assignment)
    for cell in notebook["cells"]:  # the same number as a NumPy integer: six new weights_bytes calls
        if "def longest_sequence" in cell["source"]:
            lines = cell["source"].splitlines()
            last = max(i for i, line in enumerate(lines) if line.strip().startswith("return "))
            indent = lines[last][: len(lines[last]) - len(lines[last].lstrip())]
            lines[last] = f"{indent}return np.int64({lines[last].strip()[len('return '):]})"
            cell["source"] = "\n".join(lines)
    path = tmp_path / "numpy_int.ipynb"
    path.write_text(json.dumps(notebook))
    result = grade_submission(assignment, "numpy_int", path, TEST_LIMITS, sandbox=sandbox)
    assert result.points == result.max_points, result.questions


def test_a_test_cell_merged_with_an_answer_or_remarked_on_runs_as_the_students_code(sandbox, tmp_path):
    assignment = load_assignment(ASSIGNMENTS[0])
    cells = nbgrader_notebook(assignment)["cells"]
    stable = next(i for i, c in enumerate(cells) if c["source"].startswith("# grade_id: softmax_stable"))
    assert cells[stable + 1]["cell_type"] == "markdown" and "def attention" in cells[stable + 2]["source"]
    # Shift+M in Jupyter: the test cell and the answer cell below it become one, the test first
    cells[stable]["source"] += "\n" + cells[stable + 2]["source"]
    del cells[stable + 1:stable + 3]
    rows = next(c for c in cells if c["source"].startswith("# grade_id: softmax_rows"))
    rows["source"] = rows["source"].replace("points: 1\n", "points: 1   <- passes now!\n", 1)
    path = tmp_path / "merged.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    result = grade_submission(assignment, "merged", path, TEST_LIMITS, sandbox=sandbox)
    assert result.points == result.max_points, result.questions  # attention is defined in the merged cell
    assert result.cell_errors == ()
    assert result.events == ("edited_tests",)
    for grade_id in ("softmax_stable", "softmax_rows"):
        assert any(note.startswith(f"you edited the test cell '{grade_id}': your score comes from the "
                                   "original") for note in result.notes), result.notes


def test_notebook_habits_that_jupyter_runs_are_graded_as_jupyter_runs_them(sandbox, tmp_path):
    assignment = load_assignment(ASSIGNMENTS[0])
    cells = nbgrader_notebook(assignment)["cells"]

    def code(source):
        return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}

    def where(text):
        return next(i for i, cell in enumerate(cells) if text in cell["source"])

    cells[where("import math")]["source"] += (  # VS Code's snippet, and warnings as errors
        '\nfrom IPython import get_ipython\nget_ipython().run_line_magic("load_ext", "autoreload")\n'
        'import warnings\nwarnings.simplefilter("error")\n')
    softmax = where("def softmax(")
    cells[softmax]["source"] = "help(np.max)\n" + cells[softmax]["source"]
    cells.insert(softmax + 1, code("%%script false --no-raise-error\ndef softmax(x, axis=-1):  # first try\n"
                                   "    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)\n"))
    cells[where("def attention(")]["source"] = (  # a fully masked row: nan, then 0, with a warning
        "def attention(q, k, v, mask=None):\n"
        "    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])\n"
        "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)\n"
        "    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
        "    weights = np.nan_to_num(exps / exps.sum(axis=-1, keepdims=True))\n"
        "    return weights @ v, weights\n")
    cells.append(code("from multiprocessing.pool import ThreadPool\nwith ThreadPool(2) as pool:\n"
                      "    rows = pool.map(softmax, [np.ones(3), np.zeros(2)])\n"
                      "t = %timeit -o softmax(rows[0])\n"))
    path = tmp_path / "habits.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    result = grade_submission(assignment, "habits", path, TEST_LIMITS, sandbox=sandbox)
    assert result.points == result.max_points, result.questions
    assert result.cell_errors == ()
