"""The glossary sends a reader to where a term is first used, not later; every linked term has an entry."""

from __future__ import annotations

import re
from pathlib import Path

from book.toc import toc_docnames

ROOT = Path(__file__).resolve().parents[2]
TERM = re.compile(r"\{term\}`(?:[^`<]*<)?([^`<>]+?)>?`")
DOC = re.compile(r"\{doc\}`(?:[^`<]*<)?(chapters/[\w]+)>?`")


def glossary_entries() -> dict[str, str]:
    """Entry name (lower case) -> its definition text."""
    text = (ROOT / "glossary.md").read_text(encoding="utf8")
    body = text[text.index("```{glossary}"):]
    entries, name = {}, None
    for line in body.splitlines()[1:]:
        if line.startswith(":") or line.startswith("```"):
            continue
        if line and not line.startswith(" "):
            name = line.strip().lower()
            entries[name] = ""
        elif name is not None:
            entries[name] += line + "\n"
    return entries


def first_use() -> dict[str, str]:
    """Term (lower case) -> the first page, in book order, that links it."""
    found = {}
    for docname in toc_docnames(ROOT):
        path = ROOT / f"{docname}.md"
        if docname == "glossary" or not path.is_file():
            continue
        for term in TERM.findall(path.read_text(encoding="utf8")):
            found.setdefault(" ".join(term.lower().split()), docname)
    return found


def test_every_linked_term_has_an_entry():
    entries = glossary_entries()
    missing = sorted(set(first_use()) - set(entries))
    assert missing == [], f"terms linked but not in the glossary: {missing}"


def test_no_entry_sends_the_reader_to_a_chapter_after_the_term_is_first_used():
    order = {name: i for i, name in enumerate(toc_docnames(ROOT))}
    entries = glossary_entries()
    late = []
    for term, page in first_use().items():
        pointed = DOC.findall(entries.get(term, ""))
        if pointed and min(order[p] for p in pointed) > order[page]:
            late.append(f"{term!r}: first used in {page}, the glossary points to {pointed}")
    assert late == [], "\n".join(late)


def test_the_glossary_parser_finds_entries_and_their_pointers():
    entries = glossary_entries()
    assert "entropy" in entries and "chapters/self_attention" in DOC.findall(entries["entropy"])
    assert TERM.findall("{term}`queries <query>` and {term}`softmax`") == ["query", "softmax"]
