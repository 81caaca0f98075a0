"""Every file the grader writes for the teacher, opened as the tool that opens it would open it.

The hostile batch (``conftest.hostile_batch``, with ``hostile_round_three``'s written answers and ids)
is graded once by the real command line; then every CSV is read by Python's ``csv`` and, where it is
installed, by LibreOffice (``apt-get install libreoffice-calc-nogui``), which must find no formula;
every Markdown file is rendered by CommonMark with raw HTML allowed (markdown-it-py), every HTML page
parsed, and, where Chromium is installed, opened in it: no live element, student text only as text.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mha_classroom.exports import CSV_CELL_CHARS
from tests.classroom.hostile_round_three import EXPORT_NAMES, HUGE

pytestmark = pytest.mark.classroom
FORMULA = set("=+-@\t\r\uff1d\uff0b\uff0d\uff20")
INVISIBLE = "\x1b\u202e\u2066\u200b\x00\x07\x85\u2028"
#: Elements an export may hold: Markdown's own blocks, and the feedback page's.
MARKDOWN_TAGS = {"h1", "h2", "p", "ul", "li", "strong", "em", "table", "thead", "tbody", "tr", "th", "td",
                 "pre", "code"}
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "strong", "table", "tr",
             "th", "td", "pre"}


def _files(batch, suffix: str) -> list[Path]:
    return sorted(path for path in batch.out.rglob(f"*{suffix}") if ".progress" not in path.parts)


def _quoted(text: str) -> bool:
    """Every field of a CSV text opens with a double quote (RFC 4180's fields, read one by one)."""
    position = 0
    while position < len(text):
        if text[position] != '"':
            return False
        position += 1
        while True:
            quote = text.index('"', position)
            position = quote + 2 if text[quote + 1:quote + 2] == '"' else quote + 1
            if text[quote + 1:quote + 2] != '"':
                break
        if position < len(text) and text[position] not in ",\n":
            return False
        position += 1
    return True


def test_every_csv_field_is_quoted_and_none_is_a_formula(hostile_batch):
    files = _files(hostile_batch, ".csv")
    assert {p.name for p in files} >= {"grades.csv", "totals.csv", "answers.csv"}
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert _quoted(text), path
        assert not any(char in text for char in INVISIBLE), path
        for row in csv.reader(text.splitlines(keepends=True)):
            for field in row:
                assert field[:1] not in FORMULA and field.lstrip()[:1] not in FORMULA, (path, field[:80])
                assert len(field) <= 32_767, (path, len(field))


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.outside: list[str] = []  # text outside <pre>
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.depth += tag == "pre"

    def handle_endtag(self, tag):
        self.depth -= tag == "pre"

    def handle_data(self, data):
        if not self.depth:
            self.outside.append(data)


def _rendered(path: Path) -> _Elements:
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(
        path.read_text(encoding="utf-8"))
    parser = _Elements()
    parser.feed(html)
    return parser


def test_every_markdown_file_renders_with_no_live_element_and_student_text_only_in_fences(hostile_batch):
    files = _files(hostile_batch, ".md")
    assert len(files) > 2 * len(hostile_batch.results)  # feedback, written pages, the sheet, the summary
    for path in files:
        page = _rendered(path)
        tags = {tag for tag, _ in page.tags}
        assert tags <= MARKDOWN_TAGS, (path, tags - MARKDOWN_TAGS)
        assert all(attrs in ({}, {"class": "language-text"}) for _, attrs in page.tags), path
        outside = "".join(page.outside)
        for forged in ("Teacher's grade", "manual_score: 4", "FULL MARKS", "alert(", "=cmd|", "4/4 edarg"):
            assert forged not in outside, (path, forged)
        assert not any(char in path.read_text(encoding="utf-8") for char in INVISIBLE), path


def test_every_feedback_page_is_inert(hostile_batch):
    pages = _files(hostile_batch, ".html")
    assert len(pages) == len(hostile_batch.results)
    for path in pages:
        text = path.read_text(encoding="utf-8")
        page = _Elements()
        page.feed(text)
        assert {tag for tag, _ in page.tags} <= PAGE_TAGS, path
        assert all(set(attrs) <= {"lang", "charset", "http-equiv", "content", "name"}
                   for _, attrs in page.tags), path
        assert "default-src 'none'" in text and "FULL MARKS" not in "".join(page.outside)


def test_each_student_has_pages_of_their_own_that_no_id_can_take(hostile_batch):
    ids = sorted(r.student for r in hostile_batch.results.values())
    assert set(EXPORT_NAMES) <= set(ids)
    written = hostile_batch.out / "written"
    assert sorted(p.name for p in written.iterdir()) == ["answers.csv", "questions", "students"]
    assert sorted(p.stem for p in (written / "students").iterdir()) == ids
    assert [p.name for p in (written / "questions").iterdir()] == ["why_scale.md"]
    assert sorted(p.stem for p in (hostile_batch.out / "feedback").glob("*.md")) == ids
    sheet = (written / "questions" / "why_scale.md").read_text(encoding="utf-8")
    assert sheet.startswith("# 01-self-attention: why_scale, to grade by hand")
    assert all(f"## {name}\n" in sheet for name in EXPORT_NAMES)
    for name in EXPORT_NAMES:  # each page is its student's, with their own answer
        page = (written / "students" / f"{name}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# 01-self-attention: written answers of {name}")
        assert f"I am {name}: my answer." in page
    top = sorted(p.name for p in hostile_batch.out.iterdir())
    assert top == [".progress", "feedback", "grades.csv", "summary.md", "totals.csv", "written"]


def test_a_huge_answer_is_cut_where_it_is_shown_and_says_how_much(hostile_batch):
    rows = list(csv.DictReader((hostile_batch.out / "written" / "answers.csv").open(encoding="utf-8")))
    answer = next(r["answer"] for r in rows if r["student"] == "written_huge")
    assert answer.startswith(HUGE[:200]) and len(answer) <= 32_767
    assert answer.endswith(f"(cut: {len(HUGE.rstrip()) - CSV_CELL_CHARS:,} characters)")
    page = (hostile_batch.out / "written" / "students" / "written_huge.md").read_text(encoding="utf-8")
    assert re.search(r"\(cut: [\d,]+ characters\)", page) and len(page) < 120_000


def test_libreoffice_runs_no_formula_in_any_csv(hostile_batch, tmp_path):
    """LibreOffice's own CSV import (which does run ``"=1+1"`` as a formula: checked first)."""
    office = shutil.which("soffice")
    if office is None:
        pytest.skip("LibreOffice is not installed (apt-get install libreoffice-calc-nogui)")
    control = tmp_path / "control.csv"
    control.write_text('"a"\n"=1+1"\n', encoding="utf-8")
    copies = [control]
    for path in _files(hostile_batch, ".csv"):
        copies.append(tmp_path / f"{path.parent.name}-{path.name}")
        shutil.copyfile(path, copies[-1])
    done = subprocess.run([office, "--headless", "--norestore", f"-env:UserInstallation=file://{tmp_path}/lo",
                           "--convert-to", "fods", "--infilter=CSV:44,34,76,1", "--outdir",
                           str(tmp_path / "out"), *map(str, copies)], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    sheets = {p.stem: p.read_text(encoding="utf-8") for p in (tmp_path / "out").glob("*.fods")}
    assert len(sheets) == len(copies)
    assert "table:formula=" in sheets.pop("control")  # LibreOffice would run an unquoted formula
    for name, sheet in sheets.items():
        assert "table:formula=" not in sheet, name
    assert "=cmd|" in sheets["written-answers"].replace("&apos;", "'")  # the payload, as text


def test_chromium_opens_every_feedback_page_with_nothing_run_or_loaded(hostile_batch, browser):
    page = browser.new_page()
    requests, dialogs, messages = [], [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("console", lambda message: messages.append(message.text))
    try:
        pages = list(_files(hostile_batch, ".html"))
        assert pages, "the batch wrote no feedback page"
        for path in pages:
            requests.clear()
            page.goto(path.as_uri())
            assert requests == [path.as_uri()], requests
            assert page.evaluate("document.querySelectorAll('script,img,iframe,object,embed,a,"
                                 "link,form,svg').length") == 0
    finally:
        page.context.close()
    assert dialogs == [] and messages == []
