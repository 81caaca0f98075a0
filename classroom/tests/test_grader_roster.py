"""The class list is the truth: exact ids after NFC, no two ids one file, and every other submission
refused with a line that says why."""

from __future__ import annotations

import unicodedata

import pytest

from mha_classroom.intake import scan_submissions
from mha_classroom.roster import check_student, file_stem, match, read_roster

NFD = unicodedata.normalize("NFD", "José")


def _roster(tmp_path, text: str):
    (tmp_path / "class.txt").write_text(text, encoding="utf-8")
    return read_roster(tmp_path / "class.txt")


def test_ids_in_any_script_are_read_in_nfc_form(tmp_path):
    roster = _roster(tmp_path, f"# class\n\n{NFD}\n李雷\nमनोज\nمحمد\nann.b@uni-x.org\n")
    assert roster.ids == ("José", "李雷", "मनोज", "محمد", "ann.b@uni-x.org")
    assert all(file_stem(student) == student for student in roster.ids)  # each names its own files


@pytest.mark.parametrize("text, error", [
    ("ann\nAnn\n", "differ only in case: ann and Ann"),
    ("ann\nann\n", "listed twice: ann"),
    ("ann\n../bob\n", "line 2: student id '../bob'"),
    ("ann\nbob\u202e\n", "line 2: .*U\\+202E"),
    ("ann\n-bob\n", "line 2: .*starts with a letter or a digit"),
    ("\n# nobody yet\n", "no student ids"),
    ("x" * 101 + "\n", "1 to 100 characters"),
])
def test_a_class_list_that_cannot_be_the_truth_is_refused_with_its_line(tmp_path, text, error):
    with pytest.raises(ValueError, match=error):
        _roster(tmp_path, text)


def test_a_missing_class_list_names_the_file_and_what_it_should_hold(tmp_path):
    with pytest.raises(ValueError, match=r"class\.txt: no such file; --students expects the class list"):
        read_roster(tmp_path / "class.txt")


def test_only_exact_ids_are_graded_and_every_other_name_gets_a_reason(tmp_path):
    roster = _roster(tmp_path, "ann\nbob\nJosé\ncarol\n")
    graded, refused = match(["ann", "Bob", "José", "eve", "carol", "carol"], roster)
    assert graded == {0: "ann", 2: "José"}
    assert "differs from the class list's 'bob' only in case" in refused[1]
    assert "the class list (class.txt) has no id 'eve'" in refused[3]
    assert "one of 2 submissions for 'carol'" in refused[4] == refused[5]


def test_the_folder_is_read_against_the_class_list(tmp_path):
    roster = _roster(tmp_path, "ann\nbob\nJosé\nli\n")
    folder = tmp_path / "submitted"
    folder.mkdir()
    for name in ("ann.ipynb", "ANN.ipynb", f"{NFD}.ipynb", "eve.ipynb", "li.ipynb", "li.IPYNB.txt"):
        (folder / name).write_text("{}")
    (folder / "bob").mkdir()
    (folder / "bob" / "a1.ipynb").write_text("{}")
    found, skipped = scan_submissions(folder, "a1", roster)
    assert [(f.student, f.original) for f in found] == [("José", "José"), ("ann", "ann"), ("bob", "bob")]
    reasons = {entry.name: entry.reason for entry in skipped}
    assert set(reasons) == {"ANN.ipynb", "eve.ipynb", "li.ipynb", "li.IPYNB.txt"}
    assert "only in case" in reasons["ANN.ipynb"] and "one of 2 submissions" in reasons["li.ipynb"]
    assert check_student(NFD) == "José"
