"""Sphinx extension: citations read "Vaswani et al. (2017)" in the text and in the reference list.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. sphinxcontrib-bibtex's ``author_year``
style puts square brackets around years ("Vaswani et al. [2017]", "[Dosovitskiy et al., 2021]"),
and its default list style labels entries "[VSP+17]", a key that appears nowhere in the text.
This registers

- ``author_year_round``, a referencing style with round brackets: ``{cite:t}`` gives
  "Vaswani et al. (2017)", ``{cite}`` / ``{cite:p}`` gives "(Vaswani et al., 2017)"; and
- ``author_year``, a list style sorted by author, year and title whose entries are labelled as the
  text cites them ("Vaswani et al. 2017"), with the same author rule as the notebooks' plain text
  (:func:`book.plain_markdown.citation_labels`).

It also fixes the list's markup: sphinxcontrib-bibtex wraps the entries in ``<div role="list">``
whose children are not list items (axe: "aria-required-children", critical) and gives each entry
the deprecated ``doc-biblioentry`` role. The list becomes a plain container of entries.
"""

from __future__ import annotations

import dataclasses

from pybtex.plugin import register_plugin as register_pybtex_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle


def _round() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@dataclasses.dataclass
class RoundAuthorYear(AuthorYearReferenceStyle):
    """Author-year citations in round brackets."""

    bracket_parenthetical: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_textual: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_author: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_label: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_year: BracketStyle = dataclasses.field(default_factory=_round)


def author_label(entry) -> str:
    """"Vaswani et al. 2017": one author's last name, two joined by "and", three or more "et al."."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [" ".join(person.last_names) or str(person) for person in people]
    if not names:
        authors = entry.fields.get("organization", entry.key)
    elif len(names) <= 2:
        authors = " and ".join(names)
    else:
        authors = f"{names[0]} et al."
    return f"{authors} {entry.fields.get('year', 'n.d.')}".replace("{", "").replace("}", "")


class AuthorYearLabels(BaseLabelStyle):
    """List labels as the text cites the entry; two entries with one label get "a", "b"."""

    def format_labels(self, sorted_entries):
        labels = [author_label(entry) for entry in sorted_entries]
        for index, label in enumerate(labels):
            twins = [i for i, other in enumerate(labels) if other == label]
            yield label + ("abcdefghijklmnopqrstuvwxyz"[twins.index(index)] if len(twins) > 1 else "")


class AuthorYearStyle(PlainStyle):
    """pybtex's plain entries, sorted by author, year and title, labelled by author and year."""

    default_label_style = AuthorYearLabels
    default_sorting_style = "author_year_title"


register_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_round", RoundAuthorYear)
register_pybtex_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle)

def plain_list_markup(app, pagename, templatename, context, doctree) -> None:
    """The page's citation lists without their list role, their entries without doc-biblioentry."""
    from bs4 import BeautifulSoup

    body = context.get("body")
    if not body or "citation-list" not in body:
        return
    soup = BeautifulSoup(body, "html.parser")
    lists = soup.select("div.citation-list")
    if not lists:
        raise RuntimeError(f"{pagename}: citations, but no <div class=citation-list>: did docutils change?")
    for element in [*lists, *soup.select('[role="doc-biblioentry"]')]:
        del element["role"]
    context["body"] = str(soup)


def setup(app):
    app.connect("html-page-context", plain_list_markup)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
