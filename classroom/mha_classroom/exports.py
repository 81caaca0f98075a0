"""What a teacher opens, written as data: CSV a spreadsheet cannot run, Markdown and HTML a browser
shows as text.

Everything a student typed (an answer, an error message, a file name) reaches the grader's files
through these functions only, the way a database driver binds a parameter instead of pasting it
into SQL:

* **CSV** (:func:`csv_text`): every field quoted; a field that starts, after any blank, with ``=``,
  ``+``, ``-``, ``@``, a tab or a carriage return (OWASP's rule for CSV injection), or with their
  full-width forms, gets a leading ``'``, so a spreadsheet shows it as text and runs no formula or
  DDE link; each field is capped below the 32,767 characters a spreadsheet cell holds.
* **Markdown**: text on one line has every ASCII punctuation character backslash-escaped
  (:func:`md_inline`: no tag, link, emphasis, table cell or heading can start); longer text sits in
  a code fence longer than any run of backticks inside it (:func:`fenced`), so nothing inside can
  close it, and a line such as ``## bob: 4 / 4`` stays a line of the student's text.
* **HTML** (:func:`html_text`): escaped, quotes included.

In all three, control, bidirectional and zero-width characters are written as visible escapes
(:func:`mha_classroom.text.visible`), and text over its cap ends with ``(cut: N characters)``.
"""

from __future__ import annotations

import csv
import html
import io
import re
import string

from mha_classroom.text import visible

__all__ = ["CSV_CELL_CHARS", "csv_field", "csv_text", "cut", "fenced", "html_text", "md_inline",
           "md_name", "neutral", "one_line"]

#: A spreadsheet cell holds at most 32,767 characters (Excel and LibreOffice); the cut note and the
#: neutralising quote fit in the rest.
CSV_CELL_CHARS = 32_000
#: First characters a spreadsheet reads as the start of a formula (OWASP), and their full-width forms.
FORMULA_START = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")
_PUNCTUATION = frozenset(string.punctuation)
#: Characters that open markup in the middle of a line of CommonMark or GitHub's Markdown.
_MARKUP = frozenset("\\`*_[]<>!|~&:@$")
_WWW = re.compile(r"(?i)\b(www)\.")
#: A name Markdown shows as it is: words of letters and digits (any script) joined by ``_ . -``.
_PLAIN_NAME = re.compile(r"[^\W_]+(?:[_.-][^\W_]+)*")


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out.

    Examples
    --------
    >>> cut("abcdefgh", 3)
    'abc … (cut: 5 characters)'
    >>> cut("abc", 3)
    'abc'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … (cut: {len(text) - limit:,} characters)"


def neutral(value: str) -> str:
    """A CSV field no spreadsheet runs as a formula: a leading ``'`` where one could start.

    Examples
    --------
    >>> neutral('=HYPERLINK("http://x")'), neutral("  @SUM(A1)"), neutral("ok"), neutral("-")
    ('\\'=HYPERLINK("http://x")', "'  @SUM(A1)", 'ok', "'-")
    """
    if value[:1] in FORMULA_START or value.lstrip()[:1] in FORMULA_START:
        return "'" + value
    return value


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, its invisible characters escaped, cut to ``limit`` characters."""
    return cut(" ".join(visible(text).split()), limit)


def csv_field(value: object, limit: int = CSV_CELL_CHARS, lines: bool = False) -> str:
    """One CSV field from any value: escapes visible, one line unless ``lines``, capped, inert.

    Numbers are written with ``:g`` (``2.0`` as ``2``).
    """
    if isinstance(value, float | int) and not isinstance(value, bool):
        return f"{value:g}"
    text = visible(str(value)) if lines else " ".join(visible(str(value)).split())
    return neutral(cut(text, limit))


def csv_text(header: tuple[str, ...] | list[str], rows, limit: int = CSV_CELL_CHARS,
             lines: tuple[str, ...] = ()) -> str:
    """A whole CSV file: ``header``, then each row; every field quoted and inert.

    ``lines`` names the columns whose text keeps its line breaks (a written answer); every other
    field is one line.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow([csv_field(name) for name in header])
    keep = [name in lines for name in header]
    for row in rows:
        writer.writerow([csv_field(value, limit, multi) for value, multi in zip(row, keep, strict=True)])
    return buffer.getvalue()


def md_inline(text: str, limit: int = 300) -> str:
    """``text`` for a line of Markdown (after a heading's ``#``, a list item's ``-``, in a table
    cell): one line, capped, and renders as the same text and nothing else.

    Every character that can open markup in the middle of a line is backslash-escaped (CommonMark
    lets any ASCII punctuation be): tags and entities (``< > &``), emphasis and code (``* _ `` `),
    links and images (``[ ] !``), table cells (``|``), strikethrough (``~``), math (``$``), and the
    autolinks of GitHub's dialect (``:`` of a scheme, ``@`` of an address, the dot after ``www``);
    a first character that is punctuation is escaped too, so no line can start a list or a heading.

    Examples
    --------
    >>> print(md_inline("<img src=x onerror=alert(1)> | **4/4**"))
    \\<img src=x onerror=alert(1)\\> \\| \\*\\*4/4\\*\\*
    >>> print(md_inline("- see www.x.org, mail a@b.org: it's fine."))
    \\- see www\\.x.org, mail a\\@b.org\\: it's fine.
    """
    text = one_line(text, limit)
    escaped = "".join("\\" + char if char in _MARKUP else char for char in text)
    escaped = _WWW.sub(r"\1\\.", escaped)
    if escaped[:1] in _PUNCTUATION and escaped[:1] != "\\":
        escaped = "\\" + escaped
    return escaped


def md_name(name: str) -> str:
    """A name (a student id, a question id) for Markdown: as it is when it is plain words, else
    escaped as :func:`md_inline` does.

    Examples
    --------
    >>> print(md_name("bob-2"), md_name("李雷"), md_name("a@b.org"))
    bob-2 李雷 a\\@b.org
    """
    return name if _PLAIN_NAME.fullmatch(name) else md_inline(name, 120)


def fenced(text: str, limit: int = 2_000) -> list[str]:
    """``text`` as the lines of a code fence that nothing inside can close: escapes visible,
    capped, the fence one backtick longer than any run of backticks in it."""
    text = cut(visible(text), limit)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", text, fence]


def html_text(text: str, limit: int = 2_000) -> str:
    """``text`` for an HTML page: escapes visible, capped, then HTML-escaped (quotes too)."""
    return html.escape(cut(visible(text), limit), quote=True)
