"""Honest work is never under-scored: unusual but correct notebooks (``honest.HONEST``) get full
marks on all four assignments, and their notes say what really happened, nothing more."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

from mha_classroom import Limits, load_assignment
from mha_classroom import grade as grade_module
from mha_classroom.batch import grade_batch
from mha_classroom.intake import find_submissions
from tests.classroom.conftest import ASSIGNMENTS
from tests.classroom.honest import HONEST, Honest, append_cells, build

pytestmark = pytest.mark.classroom
# Honest code hits no limit: generous ones keep a busy machine from failing a correct notebook
# (importing matplotlib.pyplot alone took 2.6 s here with 15 jobs on 2 cores).
HONEST_LIMITS = Limits(cell_timeout=20.0, probe_timeout=20.0, timeout=60.0, memory_mb=1024)


@pytest.fixture(scope="session")
def honest_results(sandbox):
    """Every honest case graded as the command line grades, one folder per assignment."""
    import matplotlib.font_manager  # noqa: F401 - makes the grader's font list, as a first plot does

    root = Path(tempfile.mkdtemp(prefix="mha-honest-"))
    results = {}
    try:
        for number, source in enumerate(ASSIGNMENTS, start=1):
            assignment = load_assignment(source)
            folder = root / assignment.name
            folder.mkdir()
            cases = [case for case in HONEST if case.assignment == number]
            for case in cases:
                build(case, assignment, folder)
            batch = grade_batch(assignment, folder, root / f"{assignment.name}-out", HONEST_LIMITS,
                                sandbox, jobs=2)
            graded, skipped = batch.results, batch.skipped
            assert skipped == []
            ids = {found.original: found.student for found in find_submissions(folder, assignment.name)}
            by_id = {result.student: result for result in graded}
            for case in cases:
                results[case.name] = by_id[ids[case.name]]
        yield results
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_there_are_at_least_thirty_across_the_four_assignments():
    assert len(HONEST) >= 30 and {case.assignment for case in HONEST} == {1, 2, 3, 4}
    assert len({case.name for case in HONEST}) == len(HONEST)


def _check(case: Honest, result) -> None:
    lost = [(q.grade_id, q.feedback) for q in result.questions if q.points < q.max_points]
    assert lost == [], (case.name, lost, result.notes)
    for pattern in case.notes:
        assert any(re.search(pattern, note) for note in result.notes), (pattern, result.notes)
    if not case.other_notes:
        assert len(result.notes) == len(case.notes), result.notes
    assert len(result.cell_errors) == len(case.errors), result.cell_errors
    for pattern, error in zip(case.errors, result.cell_errors, strict=True):
        assert re.search(pattern, error), (pattern, error)
    assert "stub" not in " ".join(result.notes + result.cell_errors)


@pytest.mark.parametrize("case", HONEST, ids=lambda case: case.name)
def test_an_unusual_correct_notebook_gets_full_marks_and_true_notes(case, honest_results):
    _check(case, honest_results[case.name])


STAND_INS = [
    Honest("display_without_ipython", 1, append_cells(
        "from IPython.display import display, HTML\ndisplay(HTML('<b>weights</b>'))\n"
        "from IPython import get_ipython\nget_ipython().run_line_magic('matplotlib', 'inline')"),
           notes=("your notebook imports IPython, which is not installed where the grader runs",)),
    Honest("plots_without_matplotlib", 1, append_cells(
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "fig, axes = plt.subplots(1, 2)\nfor ax in axes:\n    ax.imshow(softmax(np.ones((2, 2))))\n"
        "axes[0].set_title('weights')\nplt.colorbar(axes[1].images)\nplt.show()"),
           notes=("your notebook imports matplotlib, which is not installed where the grader runs",)),
]


@pytest.mark.parametrize("case", STAND_INS, ids=lambda case: case.name)
def test_without_ipython_or_matplotlib_their_imports_do_nothing_and_say_so(case, sandbox,
                                                                           monkeypatch, tmp_path):
    """A grader installed with ``pip install ./classroom`` may have neither."""
    monkeypatch.setattr(grade_module, "absent_kernel_packages", lambda: ("IPython", "matplotlib"))
    assignment = load_assignment(ASSIGNMENTS[0])
    build(case, assignment, tmp_path)
    result = grade_module.grade_submission(assignment, case.name, tmp_path / f"{case.name}.ipynb",
                                           HONEST_LIMITS, sandbox=sandbox)
    _check(case, result)
