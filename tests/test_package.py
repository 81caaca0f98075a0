import importlib.metadata

import mha


def test_version_matches_installed_metadata():
    assert mha.__version__ == importlib.metadata.version("mha-course")


def test_the_version_is_written_once_and_named_alike_everywhere():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    import tomllib

    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mha.__version__"}
    citation = re.search(r'^version: "([^"]+)"', (root / "CITATION.cff").read_text(encoding="utf8"), re.M)
    releases = re.findall(r"^## \[(\d[^]]*)\] - (\d{4}-\d\d-\d\d)$",
                          (root / "CHANGELOG.md").read_text(encoding="utf8"), re.M)
    assert citation and citation.group(1) == mha.__version__
    assert releases and releases[0][0] == mha.__version__, "CHANGELOG.md's newest release is not this one"
    assert re.fullmatch(r"\d+\.\d+\.\d+", mha.__version__)  # MAJOR.MINOR.PATCH, CONTRIBUTING's policy


def test_one_python_floor_is_stated_and_the_docs_name_it():
    import re
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf8"))["project"]
    floor = project["requires-python"]
    assert re.fullmatch(r">=3\.\d+", floor)
    version = floor.removeprefix(">=")
    classified = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"]
                  if re.fullmatch(r".*Python :: 3\.\d+", c)]
    tested = re.search(r"^PYTHONS_TESTED = (.*)$", (root / "Makefile").read_text(encoding="utf8"), re.M)
    assert tested and tested.group(1).split() == classified, "the classifiers name the Pythons CI tests"
    assert classified[0] == version, "the oldest Python tested is the floor"
    for doc in ("README.md", "chapters/run_locally.md"):
        text = (root / doc).read_text(encoding="utf8")
        named = re.findall(r"Python (3\.\d+)", text)
        assert named[0] == version, f"{doc} names Python {named[0]} first; pyproject.toml's floor: {version}"
        assert set(named) <= set(classified), f"{doc} names a Python that is not tested: {sorted(set(named))}"


def test_a_missing_extra_is_named_with_commands_for_an_index_and_a_clone(monkeypatch):
    import pytest

    from mha.extras import MissingExtra, require

    with pytest.raises(MissingExtra) as raised:
        require("mha.plotting", "plot", "surely_not_installed_module")
    assert str(raised.value) == ("mha.plotting needs surely_not_installed_module: "
                                 'pip install "mha-course[plot]" '
                                 '(in a clone of the course: pip install -e ".[plot]")')
    assert isinstance(raised.value, ImportError)


def test_no_merge_conflict_markers_are_committed():
    import re
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True)
    marker = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)
    text_suffixes = {".py", ".md", ".yml", ".toml", ".txt", ".cfg", ".js", ".css", ".json"}
    offenders = []
    for name in tracked.stdout.splitlines():
        path = root / name
        if path.suffix in text_suffixes and path.is_file():
            if marker.search(path.read_text(encoding="utf8", errors="replace")):
                offenders.append(name)
    assert offenders == []


def _run(code: str) -> str:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_importing_mha_loads_numpy_and_nothing_else_outside_the_standard_library():
    loaded = _run(
        "import sys; before = set(sys.modules); import mha; "
        "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "print(' '.join(sorted(n for n in new if n not in sys.stdlib_module_names and n[0] != '_')))"
    )
    assert loaded.split() == ["mha", "numpy"]


def test_subpackages_load_on_first_use():
    assert _run("import sys, mha; print('mha.lab' in sys.modules, mha.lab.toy_embeddings.__module__)") \
        == "False mha.lab.examples"
    assert "lab" in dir(mha) and "plotting" in dir(mha)


def test_an_unknown_attribute_names_itself():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        mha.nonexistent  # noqa: B018


def test_the_core_modules_do_not_import_the_subpackages():
    import ast
    from pathlib import Path

    core = [p for p in Path(mha.__file__).parent.glob("*.py") if p.name != "__init__.py"]
    assert {p.stem for p in core} >= {"attention", "masks", "layers", "efficient", "positions", "cost"}
    for path in core:
        tree = ast.parse(path.read_text(encoding="utf8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        for sub in ("lab", "plotting", "explorers", "checks", "pretrained"):
            assert not any(name and name.startswith(f"mha.{sub}") for name in imported), (path.name, sub)


def test_a_part_whose_extra_is_missing_names_the_install_command():
    code = ("import sys; sys.modules['matplotlib'] = None; import mha\n"
            "try:\n    import mha.plotting\nexcept ImportError as e:\n    print(type(e).__name__, e)")
    assert _run(code) == ('MissingExtra mha.plotting needs matplotlib: pip install "mha-course[plot]" '
                          '(in a clone of the course: pip install -e ".[plot]")')
