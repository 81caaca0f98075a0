"""Real nbgrader agrees with this grader on every per-question score of the five assignments.

Opt-in (nbgrader is not a requirement of the course): ``pip install nbgrader==0.9.6`` and
``MHA_NBGRADER=1 python -m pytest tests/classroom/test_nbgrader_agreement.py``. For each
assignment, nbgrader generates the student version from ``mha-classroom nbgrader``'s export; five
students fill it in (the instructor's answers, the untouched release, one answer wrong, one answer
that calls ``mha``, every answer junk that runs), ``nbgrader autograde`` grades them in a Jupyter
kernel, and this grader grades the same files in its sandbox: every score must be the same. Two more
students work in their own copies that ``mha-classroom release --students`` writes (nbgrader's
metadata in them, the variant cell left unlocked), one with the instructor's answers and one with
one answer wrong: nbgrader grades each on its own numbers, as this grader does with the seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mha_classroom import grade_submission, load_assignment
from mha_classroom.release import export_nbgrader, student_notebook
from mha_classroom.variants import for_student
from tests.classroom.conftest import ASSIGNMENTS, TEST_LIMITS

pytestmark = [pytest.mark.classroom,
              pytest.mark.skipif(os.environ.get("MHA_NBGRADER") != "1",
                                 reason="opt-in: MHA_NBGRADER=1 (and nbgrader installed)")]

#: One wrong answer per assignment: (function, its whole new cell).
WRONG = {
    "01-self-attention": ("softmax", "def softmax(x, axis=-1):\n"
                                     "    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)\n"),
    "02-multi-head-and-shapes": ("split_heads", "def split_heads(x, n_heads):\n"
                                                "    b, s, d = x.shape\n"
                                                "    return x.reshape(b, n_heads, s, d // n_heads)\n"),
    "03-cross-attention-and-cost": ("parameter_count", "def parameter_count(d_model, n_heads, "
                                                       "d_memory=None, bias=True):\n"
                                                       "    return 4 * d_model * d_model\n"),
    "04-positions-heads-efficient": ("mean_entropy", "def mean_entropy(weights):\n"
                                                     "    return -np.sum(weights * np.log(weights + 1e-300), "
                                                     "axis=(-1, -2))\n"),
    "05-blocks-decoding-and-real-models": ("layer_norm", "def layer_norm(x, gamma, beta, eps=1e-5):\n"
                                                         "    centred = x - x.mean(axis=0, keepdims=True)\n"
                                                         "    return gamma * centred / np.sqrt(\n"
                                                         "        centred.var(axis=0, keepdims=True)"
                                                         " + eps) + beta\n"),
}
USES_MHA = {
    "01-self-attention": ("causal_mask", "import mha\n\ndef causal_mask(seq_q, seq_k=None):\n"
                                         "    return mha.causal_mask(seq_q, seq_k)\n"),
    "02-multi-head-and-shapes": ("merge_heads", "import mha\n\ndef merge_heads(x):\n"
                                                "    return mha.merge_heads(x)\n"),
    "03-cross-attention-and-cost": ("padding_mask", "import mha\n\ndef padding_mask(lengths, seq_k):\n"
                                                    "    return mha.padding_mask(lengths, seq_k)\n"),
    "04-positions-heads-efficient": ("sinusoidal_encoding", "import mha\n\n"
                                                            "def sinusoidal_encoding(seq_len, d_model):\n"
                                                            "    return mha.sinusoidal_encoding(\n"
                                                            "        seq_len, d_model)\n"),
    "05-blocks-decoding-and-real-models": ("layer_norm", "import mha\n\n"
                                                         "def layer_norm(x, gamma, beta, eps=1e-5):\n"
                                                         "    mha.softmax(x)  # the package, called\n"
                                                         "    centred = x - x.mean(axis=-1, keepdims=True)\n"
                                                         "    variance = (centred**2).mean(axis=-1, "
                                                         "keepdims=True)\n"
                                                         "    return gamma * centred / np.sqrt(variance"
                                                         " + eps) + beta\n"),
}


SEED = "d1f3a5c7e9b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3"
COPIES = ("copy_right", "copy_wrong")


def _nbgrader(course: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force",
                           f"--CourseDirectory.root={course}"], capture_output=True, text=True,
                          cwd=course, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def _answers(notebook: dict) -> list[dict]:
    return [c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution")]


def _students(source: dict, released: dict, name: str) -> dict[str, dict]:
    """The five students' notebooks, each a copy of nbgrader's release filled in, and two who work
    in their own copies."""
    def filled(change=None, junk=False, base=released):
        notebook = json.loads(json.dumps(base))
        for cell, answer in zip(_answers(notebook), _answers(source), strict=True):
            text = answer["source"] if isinstance(answer["source"], str) else "".join(answer["source"])
            text = "\n".join(line for line in text.splitlines()
                             if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
            if change and f"def {change[0]}(" in text:
                text = change[1]
            if junk and "def " in text:  # every function runs, and returns nothing of use
                defs = [line for line in text.splitlines() if line.startswith("def ")]
                text = "".join(f"{line}\n    return 0\n\n" for line in defs)
            cell["source"] = text
        return notebook

    students = {"right": filled(), "release": json.loads(json.dumps(released)),
                "one_wrong": filled(WRONG[name]), "uses_mha": filled(USES_MHA[name]),
                "junk": filled(junk=True)}
    assignment = load_assignment(next(p for p in ASSIGNMENTS if p.stem == name))
    for student, change in zip(COPIES, (None, WRONG[name]), strict=True):
        own = student_notebook(for_student(assignment, SEED, student))  # this student's copy
        students[student] = filled(change, base=own)
    return students


@pytest.mark.parametrize("source", ASSIGNMENTS, ids=lambda path: path.stem)
def test_nbgrader_gives_every_question_the_same_score(source, sandbox, tmp_path):
    pytest.importorskip("nbgrader")
    from nbgrader.api import Gradebook

    assignment = load_assignment(source)
    name = assignment.name
    course = tmp_path / "course"
    export_nbgrader(assignment, course / "source")
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    _nbgrader(course, "generate_assignment", name)
    released = json.loads((course / "release" / name / f"{name}.ipynb").read_text())
    instructor = json.loads((course / "source" / name / f"{name}.ipynb").read_text())
    students = _students(instructor, released, name)
    ours = {}
    for student, notebook in students.items():
        path = course / "submitted" / student / name / f"{name}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(notebook))
        own = for_student(assignment, SEED, student) if student in COPIES else assignment
        result = grade_submission(own, student, path, TEST_LIMITS, sandbox=sandbox)
        ours[student] = {q.grade_id: q.points for q in result.questions}
    _nbgrader(course, "autograde", name)
    theirs = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in students:
            notebook = gradebook.find_submission_notebook(name, name, student)
            theirs[student] = {grade.name: grade.score for grade in notebook.grades
                               if grade.name in ours[student]}
    assert theirs == ours
    assert ours["right"] == {t.grade_id: t.points for t in assignment.tests}
    assert not any(ours["release"].values()) and ours["uses_mha"]["numpy_only"] == 0
    assert ours["junk"]["numpy_only"] == 0  # junk that runs does not earn the NumPy-only point
    assert ours["copy_right"] == ours["right"] and ours["copy_wrong"] == ours["one_wrong"]
    scores = sum(len(scores) for scores in ours.values())
    print(f"{name}: {scores} per-question scores agree")
