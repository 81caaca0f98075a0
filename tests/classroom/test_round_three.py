"""Round three, graded as a teacher grades: per-student copies of assignment 1, a class list in five
scripts, honest but unusual notebooks at full marks and never listed, every other entry refused with
its reason, and a second and third run that resume only from records nobody forged.

One class, graded once by ``mha-classroom grade`` (in this process) for the module.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path

import pytest

from mha_classroom import load_assignment
from mha_classroom.__main__ import main
from mha_classroom.batch import PROGRESS
from mha_classroom.release import nbgrader_notebook, write_notebook
from mha_classroom.variants import for_student, values_for
from tests.classroom.conftest import ROOT, TEST_LIMITS

pytestmark = pytest.mark.classroom
SOURCE = ROOT / "assignments" / "01-self-attention.md"
SEED = "e4d2a0c8b6f4e2d0c8a6b4f2e0d8c6a4b2f0e8d6c4a2b0f8e6d4c2a0b8f6e4d2"
CLASS = ["ann", "李雷", "José", "मनोज", "محمد", "carol", "dave", "erin", "frank", "gus"]
HONEST = ["ann", "李雷", "José", "मनोज", "محمد", "carol"]
HINDI = ("ध्यान का भार बताता है कि एक शीर्ष कहाँ से पढ़ता है, यह नहीं कि वह उसके साथ क्या करता है। " * 400)
SPANISH = "Sin la división, las puntuaciones crecen como la raíz de d_k y el softmax se satura. " * 150


def _instructor(student: str) -> dict:
    return nbgrader_notebook(for_student(load_assignment(SOURCE), SEED, student))


def _written(notebook: dict, text: str) -> dict:
    for cell in notebook["cells"]:
        if cell["source"].startswith("<!-- written_answer:"):
            cell["source"] = cell["source"].replace("YOUR ANSWER HERE", text)
    return notebook


def _reordered(notebook: dict) -> dict:
    """Answer cells in reverse order, the written answer first: the notebook's end state is the same."""
    cells = notebook["cells"]
    answers = [i for i, c in enumerate(cells) if c["cell_type"] == "code"
               and c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    moved = [cells[i] for i in answers]
    for i, cell in zip(answers, reversed(moved), strict=True):
        cells[i] = cell
    written = next(i for i, c in enumerate(cells) if c["source"].startswith("<!-- written_answer:"))
    cells.insert(0, cells.pop(written))
    return notebook


def _typed_numbers(notebook: dict, student: str) -> dict:
    """The predicted values typed in as numbers, worked out for the student's own copy."""
    drawn = values_for(load_assignment(SOURCE), SEED, student)
    shrink = drawn["D_K"] ** 0.5
    for cell in notebook["cells"]:
        if "spread = math.sqrt(D_K) / D_K" in cell["source"]:
            cell["source"] = cell["source"].replace("shrink = math.sqrt(D_K)", f"shrink = {shrink!r}") \
                .replace("spread = math.sqrt(D_K) / D_K", f"spread = {shrink / drawn['D_K']!r}")
    return notebook


@pytest.fixture(scope="module")
def graded(tmp_path_factory, sandbox):
    root = tmp_path_factory.mktemp("round3")
    (root / "class.txt").write_text("\n".join(unicodedata.normalize("NFD", s) for s in CLASS) + "\n",
                                    encoding="utf-8")
    seed = root / "private" / "a1.seed"
    seed.parent.mkdir()
    seed.write_text(SEED + "\n")
    seed.chmod(0o600)
    sub = root / "submitted"
    notebooks = {
        "ann": _instructor("ann"),
        "李雷": _reordered(_instructor("李雷")),
        unicodedata.normalize("NFD", "José"): _written(_instructor("José"), SPANISH),
        "मनोज": _written(_instructor("मनोज"), HINDI),
        "محمد": _typed_numbers(_instructor("محمد"), "محمد"),
        "dave": _instructor("ann"),  # ann's whole notebook, her variant cell with it
        "erin": nbgrader_notebook(load_assignment(ROOT / "assignments" / "02-multi-head-and-shapes.md")),
        "ANN": _instructor("ann"),
        "zoe": _instructor("ann"),
        "frank": _instructor("frank"),
    }
    carol = _instructor("carol")
    variant = next(c for c in carol["cells"] if c["source"].startswith("# variant"))
    variant["source"] = variant["source"].replace("KEY = ", "KEY = 1 + ")  # edited by mistake
    notebooks["carol"] = carol
    for name, notebook in notebooks.items():
        write_notebook(notebook, sub / f"{name}.ipynb")
    write_notebook(_instructor("frank"), sub / "frank" / "01-self-attention.ipynb")  # twice
    args = ["grade", str(SOURCE), str(sub), "--out", str(root / "grades"), "--students",
            str(root / "class.txt"), "--seed-file", str(seed), "--record-key", str(root / "key"),
            f"--cell-timeout={TEST_LIMITS.cell_timeout}", f"--timeout={TEST_LIMITS.timeout * 2}",
            f"--memory-mb={TEST_LIMITS.memory_mb}"]
    assert main(args) == 0
    return root, args


def _totals(out: Path) -> dict[str, float]:
    return {row["student"]: float(row["points"])
            for row in csv.DictReader((out / "totals.csv").open(encoding="utf-8"))}


def test_honest_notebooks_in_any_script_get_full_marks_and_are_never_listed(graded):
    root, _ = graded
    out = root / "grades"
    totals = _totals(out)
    full = load_assignment(SOURCE).max_points
    assert {s: totals[s] for s in HONEST} == dict.fromkeys(HONEST, full)
    assert totals["dave"] == full  # graded on his own copy: his functions and formulas are right
    copies = list(csv.DictReader((out / "copies.csv").open(encoding="utf-8")))
    assert [(c["student"], c["matches_the_copy_of"]) for c in copies] == [("dave", "ann")]
    assert "1 in " in copies[0]["chance_in_this_class"]
    notes = (out / "feedback" / "carol.md").read_text(encoding="utf-8")
    assert "the variant cell (cell" in notes and "ran the one released to you" in notes
    for student in HONEST + ["dave"]:
        text = (out / "feedback" / f"{student}.md").read_text(encoding="utf-8").lower()
        assert "cop" not in text.replace("your copy", "").replace("copies", "")


def test_long_answers_in_other_scripts_reach_the_teacher_whole_where_they_fit(graded):
    root, _ = graded
    written = root / "grades" / "written"
    rows = {r["student"]: r for r in csv.DictReader((written / "answers.csv").open(encoding="utf-8"))}
    assert rows["José"]["answer"] == SPANISH.strip()
    assert rows["मनोज"]["answer"].startswith(HINDI[:500]) and "(cut: " in rows["मनोज"]["answer"]
    page = (written / "students" / "मनोज.md").read_text(encoding="utf-8")
    assert HINDI.strip() in page  # the Markdown page holds it whole
    assert (written / "students" / "محمد.md").is_file() and (written / "students" / "李雷.md").is_file()


def test_the_class_list_decides_who_is_graded_and_says_why_for_the_rest(graded):
    root, _ = graded
    out = root / "grades"
    totals = _totals(out)
    assert set(totals) == {"ann", "李雷", "José", "मनोज", "محمد", "carol", "dave", "erin"}
    assert totals["erin"] == 0
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "submissions of another assignment" in summary and ": erin" in summary
    lines = [line for line in summary.splitlines() if line.startswith("- not graded: ")]
    assert len(lines) == 4
    assert any("ANN.ipynb" in line and "only in case" in line for line in lines)
    assert any("zoe.ipynb" in line and "has no id" in line for line in lines)
    assert sum("one of 2 submissions for" in line for line in lines) == 2
    assert "no submission graded for 2 students of the class list: frank, gus" in summary
    feedback = (out / "feedback" / "erin.md").read_text(encoding="utf-8")
    assert "another assignment" in feedback and "hand in the notebook of 01-self-attention" in feedback


def test_a_second_run_resumes_only_from_records_nobody_forged(graded, capsys):
    root, args = graded
    progress = root / "grades" / PROGRESS
    capsys.readouterr()
    assert main(args) == 0
    assert "8 of them unchanged since an earlier run" in capsys.readouterr().out
    erin = json.loads((progress / "erin.json").read_text())
    for question in erin["result"]["questions"]:
        question["points"] = question["max_points"]  # full marks, the signature kept as it was
    (progress / "erin.json").write_text(json.dumps(erin))
    (progress / "carol.json").write_text((progress / "ann.json").read_text())  # another's record
    assert main(args) == 0
    said = capsys.readouterr().out
    assert "6 of them unchanged" in said
    assert "carol (signature" not in said and "carol (another student's record)" in said
    assert "erin (signature)" in said and "erin: 0 / 15" in said
    summary = (root / "grades" / "summary.md").read_text(encoding="utf-8")
    assert "failed their check" in summary and "carol, erin" in summary
    assert main(args) == 0  # the records written again are sound: a fourth run resumes them all
    assert "8 of them unchanged" in capsys.readouterr().out
    assert "failed their check" not in (root / "grades" / "summary.md").read_text(encoding="utf-8")
