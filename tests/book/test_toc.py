"""book.toc: the book's pages read from _toc.yml without Sphinx."""

import subprocess
import sys

import pytest

from book.toc import front_matter, is_notebook, live_pages, notebook_pages, toc_docnames
from tests.chapters.harness import ROOT

TOC = """\
format: jb-book
root: intro
parts:
  - caption: One
    chapters:
      - file: chapters/a
        sections:
          - file: chapters/a_more.md
  - caption: Two
    chapters:
      - file: chapters/b
"""
OPT_OUT = "jupyterlite: false, jupyterlite_why: reads a 90 MB model"
NOTEBOOK = "---\nkernelspec:\n  name: python3\n{extra}---\n# A page\n"


def _book(tmp_path, toc=TOC):
    (tmp_path / "_toc.yml").write_text(toc, encoding="utf8")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "intro.md").write_text("# Intro\n", encoding="utf8")
    (tmp_path / "chapters" / "a.md").write_text(NOTEBOOK.format(extra=""), encoding="utf8")
    (tmp_path / "chapters" / "a_more.md").write_text("# Prose only\n", encoding="utf8")
    (tmp_path / "chapters" / "b.md").write_text(NOTEBOOK.format(extra=f"mha: {{{OPT_OUT}}}\n"),
                                                encoding="utf8")
    return tmp_path


def test_docnames_follow_parts_chapters_and_sections_in_order(tmp_path):
    assert toc_docnames(_book(tmp_path)) == ["intro", "chapters/a", "chapters/a_more", "chapters/b"]


def test_notebook_and_live_pages(tmp_path):
    root = _book(tmp_path)
    assert list(notebook_pages(root)) == ["chapters/a", "chapters/b"]
    assert list(live_pages(root)) == ["chapters/a"]
    assert is_notebook(root / "chapters" / "a.md") and not is_notebook(root / "intro.md")
    assert front_matter(root / "chapters" / "b.md")["mha"]["jupyterlite"] is False


def test_a_listed_page_without_a_file_is_an_error(tmp_path):
    root = _book(tmp_path)
    (root / "chapters" / "b.md").unlink()
    with pytest.raises(FileNotFoundError, match="chapters/b"):
        notebook_pages(root)


def test_a_toc_without_a_root_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="'root'"):
        toc_docnames(_book(tmp_path, toc="chapters: []\n"))


def test_the_real_toc_lists_every_chapter_file_and_needs_no_sphinx():
    names = toc_docnames(ROOT)
    assert names[0] == "intro" and len(names) == len(set(names))
    chapters = {p.stem for p in (ROOT / "chapters").glob("*.md")}
    assert chapters == {name.split("/")[-1] for name in names if name.startswith("chapters/")}


def test_reading_the_toc_imports_no_sphinx():
    code = ("import sys; from book.toc import notebook_pages; from pathlib import Path; "
            f"notebook_pages(Path({str(ROOT)!r})); "
            "print(any(m.split('.')[0].startswith('sphinx') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"


def test_the_real_toc_is_in_parts_with_the_teachers_page_outside_the_learner_path():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf8"))
    parts = {part["caption"]: [entry["file"] for entry in part["chapters"]] for part in toc["parts"]}
    learner = ["Foundations", "Inside the layer", "Beyond the layer", "Real models"]
    assert list(parts)[:4] == learner
    path = [file for caption in learner for file in parts[caption]]
    assert path[0] == "chapters/self_attention" and "chapters/teachers" not in path
    assert "chapters/run_locally" not in path
    assert {"glossary", "references"} <= set(toc_docnames(ROOT))


def test_every_learner_chapter_states_its_prerequisites_and_time():
    for docname in toc_docnames(ROOT):
        not_learner = ("chapters/run_locally", "chapters/teaching_guide", "chapters/teachers")
        if docname.startswith("chapters/") and docname not in not_learner:
            text = (ROOT / f"{docname}.md").read_text(encoding="utf8")
            head = text[: text.find("By the end")]
            assert "**Prerequisites:**" in head and "**Time:**" in head, docname
            assert "## Further reading" in text, docname
