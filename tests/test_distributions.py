"""The distributions a user installs: the wheel and the sdist that ``python -m build`` makes.

- The wheel holds the package and its type marker, nothing else, and ``check-wheel-contents`` finds
  nothing to say about it.
- The sdist holds the core's tests and every helper they import (``MANIFEST.in``). In a fresh virtual
  environment on the Python floor (``requires-python``) with the oldest NumPy the package allows,
  ``pip install`` of the sdist, then ``pytest tests`` in its unpacked folder, pass. That run is also where
  CI tests the core on the floor's oldest supported NumPy; the rest of the suite runs on the pinned one.

The build runs on a copy of the repository's files, so that it never races another test's build.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import mha

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))
pytestmark = pytest.mark.distribution


def _run(command: list[str], cwd: Path, what: str, timeout: int = 900) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        pytest.fail(f"{what} failed ({done.returncode}): {' '.join(map(str, command))}\n"
                    f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done.stdout


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """``{"sdist": ..., "wheel": ...}`` built by ``python -m build`` from a copy of the tracked files."""
    source = tmp_path_factory.mktemp("source")
    listed = _run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], ROOT,
                  "git ls-files")
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(source)], source,
         "python -m build")
    (sdist,), (wheel,) = out.glob("*.tar.gz"), out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def test_both_distributions_carry_this_version(dists):
    assert dists["sdist"].name == f"mha_course-{mha.__version__}.tar.gz"
    assert dists["wheel"].name == f"mha_course-{mha.__version__}-py3-none-any.whl"


def test_the_wheel_holds_the_package_and_its_type_marker_only(dists):
    names = zipfile.ZipFile(dists["wheel"]).namelist()
    info = f"mha_course-{mha.__version__}.dist-info/"
    assert "mha/py.typed" in names and "mha/typing.py" in names
    assert [n for n in names if not (n.startswith("mha/") or n.startswith(info))] == []
    metadata = zipfile.ZipFile(dists["wheel"]).read(info + "METADATA").decode()
    assert f"Requires-Python: {PYPROJECT['project']['requires-python']}" in metadata
    assert "Classifier: Typing :: Typed" in metadata
    report = _run([sys.executable, "-m", "check_wheel_contents", str(dists["wheel"])], ROOT,
                  "check-wheel-contents")
    assert report.strip().endswith("OK"), report


def _sdist_files(sdist: Path) -> dict[str, str]:
    """Path inside the sdist (without its top folder) -> text, for its Python files."""
    files = {}
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name.endswith(".py"):
                inner = member.name.split("/", 1)[1]
                files[inner] = archive.extractfile(member).read().decode("utf8")
    return files


def test_the_sdist_holds_every_helper_its_tests_import(dists):
    files = _sdist_files(dists["sdist"])
    tests = [name for name in files if name.startswith("tests/")]
    assert "tests/test_attention.py" in tests and "tests/grad/test_attention.py" in tests
    needed = set()
    for name in tests:
        for node in ast.walk(ast.parse(files[name])):
            if isinstance(node, ast.ImportFrom) and node.module == "tests":  # from tests import reference
                needed |= {f"tests/{a.name}.py" for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests."):
                needed.add(node.module.replace(".", "/") + ".py")
            elif isinstance(node, ast.Import):
                needed |= {a.name.replace(".", "/") + ".py" for a in node.names
                           if a.name.startswith("tests.")}
    modules = set(files) | {name.replace("/__init__.py", ".py") for name in files}
    missing = sorted(n for n in needed if n not in modules and n.replace(".py", "/__init__.py") not in files)
    assert missing == [], "the sdist's tests import files it does not hold"


def _floor_python() -> str:
    """An interpreter of the Python floor: this one if it is, else ``python3.X`` on the PATH."""
    floor = PYPROJECT["project"]["requires-python"].removeprefix(">=")
    if f"{sys.version_info.major}.{sys.version_info.minor}" == floor:
        return sys.executable
    found = shutil.which(f"python{floor}")
    if found is None:
        pytest.fail(f"no Python {floor} (the floor in pyproject.toml) to test it on: install python{floor}")
    return found


def _oldest_numpy() -> str:
    """``numpy==2.0.*`` for a dependency ``numpy>=2.0``: the oldest release line the package allows."""
    (spec,) = [d for d in PYPROJECT["project"]["dependencies"] if d.startswith("numpy")]
    found = re.fullmatch(r"numpy>=(\d+\.\d+)(\.\d+)?", spec.replace(" ", ""))
    assert found, f"cannot read NumPy's lower bound from {spec!r}"
    return f"numpy=={found.group(1)}.*"


def _pinned(name: str) -> str:
    """``name==version`` as requirements-test.txt pins it (the same test tools as the main suite)."""
    for line in (ROOT / "requirements-test.txt").read_text(encoding="utf8").splitlines():
        if line.split("==")[0].strip().lower() == name:
            return line.strip()
    raise AssertionError(f"requirements-test.txt pins no {name}")


def test_the_sdist_s_tests_pass_on_the_floor_with_the_oldest_numpy(dists, tmp_path):
    venv = tmp_path / "venv"
    _run([_floor_python(), "-m", "venv", str(venv)], tmp_path, "python -m venv")
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, _oldest_numpy(), _pinned("pytest"), _pinned("hypothesis")], tmp_path,
         "installing the test tools")
    _run([*pip, str(dists["sdist"])], tmp_path, "pip install of the sdist")
    with tarfile.open(dists["sdist"]) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    # The tests run beside the sdist's pyproject.toml (its pytest settings), not beside its source: the
    # package they import is the installed one.
    run = tmp_path / "run"
    shutil.copytree(unpacked / "tests", run / "tests")
    shutil.copy2(unpacked / "pyproject.toml", run / "pyproject.toml")
    probe = ("import sys, numpy, mha; print(sys.version_info[:2], numpy.__version__, mha.__version__, "
             "mha.__file__)")
    seen = _run([python, "-c", probe], run, "importing the installed package")
    floor = PYPROJECT["project"]["requires-python"].removeprefix(">=")
    assert seen.startswith(str(tuple(map(int, floor.split("."))))), seen
    assert f" {_oldest_numpy().removeprefix('numpy==').removesuffix('*')}" in seen, seen
    assert f" {mha.__version__} " in seen and str(venv) in seen, seen
    env = {**os.environ, "MHA_NUM_THREADS": "1"}  # the main suite already keeps both cores busy
    done = subprocess.run([python, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider"], cwd=run,
                          capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert re.search(r"^\d+ passed", done.stdout.splitlines()[-1]), done.stdout[-2000:]
    # A packager's habit: a bare `pytest` in the unpacked sdist (its tests, and the core's doctests; the
    # course layers' doctests are left out by its conftest.py where their extras are missing).
    bare = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=unpacked,
                          capture_output=True, text=True, timeout=900, env=env)
    assert bare.returncode == 0, bare.stdout[-6000:] + bare.stderr[-2000:]
    assert re.search(r"^\d+ passed", bare.stdout.splitlines()[-1]), bare.stdout[-2000:]
