"""The API reference's pages and links, checked on the sources (no build needed).

``book/api_pages.py`` writes ``api/*.md`` from the package when the book builds; ``book/api_links.py``
resolves what inline code in a chapter names and picks the chapter that teaches each entry. The built
site's side of it (every entry present, the links followed in Chromium) is in
``tests/browser/test_api_reference.py``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
from pathlib import Path

import pytest
import yaml

import mha
from book import api_links, api_pages

ROOT = Path(__file__).resolve().parents[2]


def test_the_pages_are_not_committed_but_written_by_the_build():
    tracked = subprocess.run(["git", "ls-files", "api"], cwd=ROOT, capture_output=True, text=True)
    assert tracked.returncode == 0 and tracked.stdout == ""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    assert "book.api_pages" in config["sphinx"]["local_extensions"]
    assert "api/" in (ROOT / ".gitignore").read_text(encoding="utf8").splitlines()


def test_every_page_the_toc_lists_is_written_and_nothing_else(tmp_path):
    changed = api_pages.write(tmp_path)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf8"))
    (part,) = [p for p in toc["parts"] if p["caption"] == "API reference"]
    assert sorted(path.name for path in changed) == sorted(f"{entry['file'][4:]}.md" for entry in
                                                           part["chapters"])
    assert all(path.read_text(encoding="utf8").startswith(api_pages.MARKER) for path in changed)


def test_writing_again_touches_no_current_page_and_removes_only_its_own_stale_ones(tmp_path):
    api_pages.write(tmp_path)
    before = {path.name: path.stat().st_mtime_ns for path in tmp_path.glob("*.md")}
    (tmp_path / "gone.md").write_text(api_pages.MARKER + "# `mha.gone`\n", encoding="utf8")
    (tmp_path / "notes.md").write_text("# Written by hand\n", encoding="utf8")
    (tmp_path / "layers.md").write_text(api_pages.MARKER + "# stale\n", encoding="utf8")
    changed = api_pages.write(tmp_path)
    assert [path.name for path in changed] == ["layers.md"]
    assert not (tmp_path / "gone.md").exists() and (tmp_path / "notes.md").is_file()
    after = {path.name: path.stat().st_mtime_ns for path in tmp_path.glob("*.md") if path.name != "layers.md"}
    assert {name: t for name, t in before.items() if name != "layers.md"} == \
        {name: t for name, t in after.items() if name != "notes.md"}


def test_every_public_name_of_every_documented_module_has_its_entry():
    written = api_pages.pages()
    for name, _ in api_pages.CORE + api_pages.LAYERS:
        text = written[f"{api_pages.page_name(name)}.md"]
        module = importlib.import_module(name)
        parts = [name] + (api_pages.submodules(module) if hasattr(module, "__path__") else [])
        for part in parts:
            assert f".. automodule:: {part}\n" in text
            for own in api_pages.own_names(importlib.import_module(part)):
                entry = rf"^\.\. auto(class|function|data):: {re.escape(part)}\.{own}$"
                assert re.search(entry, text, re.M), f"{part}.{own} has no entry on {name}'s page"


def test_a_book_whose_reference_is_not_written_yet_still_lists_its_notebooks(tmp_path):
    from book.toc import notebook_pages

    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nparts:\n  - chapters:\n"
                                       "      - file: chapters/a\n      - file: api/index\n", encoding="utf8")
    (tmp_path / "intro.md").write_text("# Intro\n", encoding="utf8")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "a.md").write_text("---\nkernelspec: {name: python3}\n---\n# A\n",
                                                encoding="utf8")
    assert list(notebook_pages(tmp_path)) == ["chapters/a"]
    (tmp_path / "chapters" / "a.md").unlink()
    with pytest.raises(FileNotFoundError, match="chapters/a"):
        notebook_pages.__wrapped__(tmp_path)


def test_every_public_module_has_its_place_in_the_reference():
    public = {info.name for info in pkgutil.walk_packages(mha.__path__, "mha.")
              if not any(part.startswith("_") for part in info.name.split("."))}
    assert public - set(api_links.documented_modules()) == set()


def test_the_toc_lists_the_reference_as_its_own_part_in_teaching_order():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf8"))
    (part,) = [p for p in toc["parts"] if p["caption"] == "API reference"]
    files = [entry["file"] for entry in part["chapters"]]
    expected = ["api/index"] + [f"api/{api_pages.page_name(name)}"
                                for name, _ in api_pages.CORE + api_pages.LAYERS]
    assert files == expected


@pytest.fixture(scope="module")
def names():
    return api_links.Names()


@pytest.mark.parametrize(("text", "target"), [
    ("mha.softmax", "mha.attention.softmax"),
    ("mha.softmax(scores)", "mha.attention.softmax"),
    ("chunked_attention(q, k, v, block_size=64)", "mha.efficient.chunked_attention"),
    ("MultiHeadAttention.decode", "mha.layers.MultiHeadAttention.decode"),
    ("mha.MultiHeadAttention.from_torch_state_dict", "mha.frameworks.FrameworkWeights.from_torch_state_dict"),
    ("from mha.lab import trace_layer", "mha.lab.shapes.trace_layer"),
    ("mha.cost", "mha.cost"),
    ("mha.cost.SOFTMAX_FLOPS_PER_SCORE", "mha.cost.SOFTMAX_FLOPS_PER_SCORE"),
    ("mha.plotting.plot_heads", "mha.plotting.heads.plot_heads"),
])
def test_inline_code_resolves_to_the_object_it_names(names, text, target):
    assert names.resolve(text) == target


@pytest.mark.parametrize("text", ["np.exp", "layer", "x @ W_q", "mha.nonexistent", "softmax(x) = 1", ""])
def test_inline_code_that_names_no_public_object_stays_code(names, text):
    assert names.resolve(text) is None


def test_a_name_is_taught_by_its_own_chapter_even_when_an_earlier_one_mentions_it():
    users = ["chapters/cost", "chapters/efficient_attention"]
    chapter = api_links._teaching_chapter("mha.efficient.chunked_attention", users)
    assert chapter == "chapters/efficient_attention"
    assert api_links._teaching_chapter("mha.lab.training.train", ["chapters/heads_that_learn"]) == \
        "chapters/heads_that_learn"  # a shared module: its first user
    assert api_links._teaching_chapter("mha.lab.efficient_attention.pool_kv_heads",
                                       ["chapters/cost", "chapters/efficient_attention"]) == \
        "chapters/efficient_attention"


def test_a_chapter_s_sources_name_what_it_imports_and_calls():
    found = api_links._names_in_source(
        "Text with `mha.split_heads` inline.\n```{code-cell}\nfrom mha.lab import (trace_layer,\n"
        "    toy_embeddings)\nout = mha.chunked_attention(q, k, v)\n```\n")
    assert found[:4] == ["mha.split_heads", "mha.lab.trace_layer", "mha.lab.toy_embeddings",
                         "mha.chunked_attention"]
    assert importlib.import_module("mha.lab.shapes").trace_layer  # the test's names are real


class _App:
    """What the docstring hook reads of Sphinx's app: an environment that knows no chapters yet."""

    env = None


@pytest.mark.parametrize("value", [("config.json", "model.safetensors"), 7, "pip install x" * 10])
def test_a_constant_without_a_doc_comment_shows_its_value_not_its_type_s_docstring(value):
    from sphinx.util.docstrings import prepare_docstring

    lines = prepare_docstring(type(value).__doc__)
    api_links._on_docstring(_App(), "data", "mha.example.CONSTANT", value, None, lines)
    shown = repr(value)
    assert lines[0].startswith("Value: ``") and lines[0].endswith("``")
    assert lines[0][len("Value: ``"):-2] in (shown, shown[:57] + "...")
    assert len(lines[0]) <= 72 and type(value).__doc__.split("\n")[0] not in "\n".join(lines)


def test_a_constant_s_own_doc_comment_is_kept():
    lines = ["What ``rng=`` accepts."]
    api_links._on_docstring(_App(), "data", "mha.example.Seed", "np.random.Generator | int", None, lines)
    assert lines == ["What ``rng=`` accepts."]


def test_a_long_signature_keeps_its_lines_but_not_a_definition_list_without_terms():
    from book.api_links import _signature_lines_as_divs

    body = ('<dl class="py function"><dt class="sig sig-object py" id="f"><span>f</span>(<dl>'
            '<dd><em>x</em>,</dd><dd><em>y</em></dd></dl>)</dt><dd><p>Doc.</p><dl class="field-list">'
            '<dt>x</dt><dd>a</dd></dl></dd></dl>')
    out = _signature_lines_as_divs(body)
    signature = out[out.index("<dt class"):out.index("</dt>")]
    assert "<dl>" not in signature and "<dd>" not in signature
    assert signature.count('<div class="mha-sig-param">') == 2
    assert out.endswith('<dd><p>Doc.</p><dl class="field-list"><dt>x</dt><dd>a</dd></dl></dd></dl>')
