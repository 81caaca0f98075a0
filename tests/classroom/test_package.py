"""The grader is a distribution of its own: nothing of it reaches ``mha`` or the learner's wheel."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import mha
import mha_classroom
from mha_classroom import load_assignment, student_notebook
from tests.classroom.conftest import ASSIGNMENTS, ROOT

pytestmark = pytest.mark.classroom
GRADER = Path(mha_classroom.__file__).parent


def _python(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)


def test_the_grader_is_where_the_repository_keeps_it():
    # The tests must exercise classroom/'s code, not some other installed copy.
    assert GRADER == ROOT / "classroom" / "mha_classroom"
    assert importlib.metadata.version("mha-classroom") == mha_classroom.__version__


def test_mha_and_its_subpackages_do_not_import_the_grader():
    done = _python("-c", "import sys, mha\n"
                         "for name in mha._SUBPACKAGES:\n    getattr(mha, name)\n"
                         "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mha_classroom'\n"
                         "             or 'classroom' in m.split('.')))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]"]
    assert not hasattr(mha, "classroom")


def test_the_wheel_of_the_repository_holds_no_grader(tmp_path):
    """The wheel JupyterLite serves to every reader, built as the book builds it."""
    from book.lite_site import build_wheel

    with zipfile.ZipFile(build_wheel(ROOT, tmp_path)) as wheel:
        names = wheel.namelist()
        entry_points = next((wheel.read(n).decode() for n in names if n.endswith("entry_points.txt")), "")
    assert any(name == "mha/attention.py" for name in names)
    assert not [name for name in names if name.startswith("mha_classroom/")]
    assert not [name for name in names if "classroom" in Path(name).with_suffix("").parts]
    assert not [name for name in names if Path(name).name in ("sandbox.py", "seccomp.py", "runner.py")]
    assert "mha-classroom" not in entry_points


def test_the_released_notebooks_need_no_grader():
    """Students run the released notebooks, visible tests included (the "NumPy only" one imports
    ``package_forbidden``), where only the course package is installed."""
    cells = [cell["source"] for source in ASSIGNMENTS
             for cell in student_notebook(load_assignment(source))["cells"] if cell["cell_type"] == "code"]
    assert len(cells) > 4 * len(ASSIGNMENTS)
    assert [cell for cell in cells if "mha_classroom" in cell] == []
    assert sum("from mha.checks import package_forbidden" in cell for cell in cells) == len(ASSIGNMENTS)


@pytest.mark.parametrize("command", [["-m", "mha_classroom"], ["mha-classroom"]])
def test_both_ways_in_name_the_program_mha_classroom(command):
    if command == ["mha-classroom"]:  # the console script, installed beside this interpreter
        script = Path(sys.executable).with_name("mha-classroom")
        assert script.is_file(), "pip install -e ./classroom (make install does)"
        done = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=False)
    else:
        done = _python(*command, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: mha-classroom ")


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` names in an import statement or as a dotted ``mha...`` string (for
    ``importlib.import_module`` and ``__import__``)."""
    tree = ast.parse(path.read_text(encoding="utf8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and re.fullmatch(r"mha(\.\w+)+", node.value):
            names.add(node.value)
    return names


def test_the_grader_imports_nothing_private_from_mha():
    sources = sorted(GRADER.rglob("*.py"))
    assert len(sources) >= 15
    private = {(path.name, name) for path in sources for name in _imported_modules(path)
               if name.split(".")[0] == "mha" and any(part.startswith("_") for part in name.split("."))}
    assert private == set()
    # and it does use the public package, so the check above has something to look at
    assert ("probes.py", "mha.checks") in {(p.name, n) for p in sources for n in _imported_modules(p)}


@pytest.fixture(scope="module")
def grader_dists(tmp_path_factory) -> dict[str, Path]:
    """The grader's sdist and wheel, built by ``python -m build`` from a copy of ``classroom/``."""
    import shutil

    source = tmp_path_factory.mktemp("classroom-source") / "classroom"
    shutil.copytree(ROOT / "classroom", source,
                    ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build", "dist"))
    out = tmp_path_factory.mktemp("classroom-dist")
    done = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out),
                           str(source)], capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    (sdist,), (wheel,) = out.glob("*.tar.gz"), out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def test_the_grader_requires_the_course_package_it_works_with(grader_dists):
    import email

    with zipfile.ZipFile(grader_dists["wheel"]) as wheel:
        metadata_name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(wheel.read(metadata_name))
        names = wheel.namelist()
    floor = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", mha_classroom.MHA_FLOOR)
    assert floor and tuple(map(int, floor.groups())) <= tuple(map(int, mha.__version__.split(".")[:3]))
    requires = metadata.get_all("Requires-Dist")
    assert f"mha-course>={mha_classroom.MHA_FLOOR}" in requires
    assert f'mha-course[pretrained]>={mha_classroom.MHA_FLOOR}; extra == "pretrained"' in requires
    assert metadata["Version"] == mha_classroom.__version__ and metadata["License-File"] == "LICENSE"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not [n for n in names if n.startswith("tests/")]


def test_the_grader_sdist_ships_its_license_changelog_and_tests_and_they_pass(grader_dists, tmp_path):
    import tarfile

    with tarfile.open(grader_dists["sdist"]) as archive:
        archive.extractall(tmp_path, filter="data")
    (unpacked,) = tmp_path.iterdir()
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml"} <= {p.name for p in unpacked.iterdir()}
    shipped = sorted(p.name for p in (unpacked / "tests").glob("test_*.py"))
    assert len(shipped) >= 4
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          cwd=unpacked, capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_an_older_course_package_stops_the_grader_with_the_fix(tmp_path):
    fake = tmp_path / "mha"
    fake.mkdir()
    (fake / "__init__.py").write_text('__version__ = "0.1.0"\n')
    done = subprocess.run([sys.executable, "-c", "import mha_classroom"], capture_output=True, text=True,
                          check=False, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: mha-classroom {mha_classroom.__version__} needs mha-course >= "
                           f"{mha_classroom.MHA_FLOOR}, but mha-course 0.1.0 is installed")
    assert "pip install --upgrade . ./classroom" in last
