"""What the chapters point into the package: every literalinclude names a file and object that exist, and
every import names something the package exports. Checked without building the book."""

import ast
import importlib
import re

import pytest

from book.toc import notebook_pages, toc_docnames
from tests.chapters.harness import ROOT

INCLUDE = re.compile(r"```\{literalinclude\} (?P<path>\S+)\n(?P<options>(?::[^\n]*\n)*)")
IMPORT = re.compile(r"^from (mha[\w.]*) import (\(?[^)\n]*\)?|\([^)]*\))", re.MULTILINE)
PAGES = [ROOT / f"{name}.md" for name in toc_docnames(ROOT) if (ROOT / f"{name}.md").is_file()]


def _pyobject_exists(source: str, dotted: str) -> bool:
    scope = ast.parse(source).body
    for part in dotted.split("."):
        match = [n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part]
        if not match:
            return False
        scope = match[0].body
    return True


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_literalincludes_name_existing_files_and_objects(page):
    for found in INCLUDE.finditer(page.read_text(encoding="utf8")):
        path = (page.parent / found["path"]).resolve()
        assert path.is_file(), f"{page.name}: literalinclude of a missing file {found['path']}"
        pyobject = re.search(r":pyobject: (\S+)", found["options"])
        if pyobject:
            assert _pyobject_exists(path.read_text(encoding="utf8"), pyobject[1]), \
                f"{page.name}: {found['path']} has no {pyobject[1]}"


@pytest.mark.parametrize("page", list(notebook_pages(ROOT).values()), ids=lambda p: p.stem)
def test_chapter_imports_come_from_public_modules_and_exist(page):
    pytest.importorskip("matplotlib")
    for module_name, names in IMPORT.findall(page.read_text(encoding="utf8")):
        parts = module_name.split(".")
        assert len(parts) <= 2, f"{page.name}: imports from {module_name}, a module inside a subpackage"
        module = importlib.import_module(module_name)
        for item in names.strip("()").split(","):
            name = item.split(" as ")[0].strip()
            if name:
                assert hasattr(module, name), f"{page.name}: {module_name} has no {name}"
