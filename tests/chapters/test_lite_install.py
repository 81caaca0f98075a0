"""The browser path: every live chapter runs with exactly what its JupyterLite install cell installs.

A reader who presses the rocket button gets a Pyodide kernel whose first cell runs
``book.lite_site.INSTALL_CELL``: NumPy (pulled in by the wheel), the course's wheel, ipywidgets and
matplotlib, and nothing else (no tqdm, no threadpoolctl, no jupytext). This test builds that
environment as a fresh virtual environment, with the wheel the site serves and the packages the cell
names at the versions of ``requirements.txt`` (plus ipykernel, standing in for Pyodide's kernel), and
executes every live chapter in it from an empty folder, as JupyterLite does: the repository is not
there either.

Slow (a venv, a wheel, every live chapter once: minutes), so it is marked ``lite`` and runs once per
test session, in one test, on one worker.
"""

from __future__ import annotations

import json
import re
import subprocess
import venv
from pathlib import Path

import pytest

from tests.chapters.harness import CELL_TIMEOUT_SECONDS, ROOT

pytestmark = [pytest.mark.notebooks, pytest.mark.lite]

#: What the kernel itself brings (Pyodide's kernel has IPython and its comm machinery built in).
KERNEL = "ipykernel"


def install_names() -> list[str]:
    """The packages the JupyterLite install cell names, in its order (``mha-course`` among them)."""
    from book.lite_site import INSTALL_CELL

    words = INSTALL_CELL.split()
    assert words[:2] == ["%pip", "install"], INSTALL_CELL
    return [word for word in words[2:] if not word.startswith("-")]


def pinned(name: str) -> str:
    """``name==version`` from requirements.txt, so the venv installs what the book was built with."""
    found = re.search(rf"^{re.escape(name)}==(\S+)", (ROOT / "requirements.txt").read_text(), re.M)
    return f"{name}=={found[1]}" if found else name


@pytest.fixture(scope="module")
def lite_python(tmp_path_factory) -> Path:
    """A fresh venv with the wheel, what the install cell names, and a kernel: its python."""
    from book.lite_site import build_wheel

    folder = tmp_path_factory.mktemp("lite")
    wheel = build_wheel(ROOT, folder / "wheel")
    venv.EnvBuilder(with_pip=True).create(folder / "venv")
    python = folder / "venv" / "bin" / "python"
    packages = [str(wheel) if name == "mha-course" else pinned(name) for name in install_names()]
    assert str(wheel) in packages, f"the install cell does not install the course's wheel: {packages}"
    done = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           *packages, pinned(KERNEL)], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return python


def test_the_install_cell_installs_the_wheel_matplotlib_and_widgets_but_no_tqdm():
    names = install_names()
    assert "mha-course" in names and "matplotlib" in names and "ipywidgets" in names
    assert "tqdm" not in names  # the training loops must not need it (tests/lab test that too)


def test_the_lite_venv_has_what_the_cell_installs_and_nothing_more(lite_python):
    probe = ("import importlib.util as u; import mha, matplotlib, ipywidgets; "
             "print(u.find_spec('tqdm') is None, u.find_spec('threadpoolctl') is None)")
    done = subprocess.run([lite_python, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"], "the lite venv must not have tqdm or threadpoolctl"


def test_every_live_chapter_runs_with_only_the_jupyterlite_install(lite_python, tmp_path, monkeypatch):
    import jupytext
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    from book.toc import live_pages

    kernels = tmp_path / "jupyter" / "kernels" / "lite"
    kernels.mkdir(parents=True)
    # Pyodide runs one thread: BLAS and the package's tile pool get one here too (an unlimited BLAS,
    # which no threadpoolctl holds back in this venv, crawls on a loaded shared machine).
    one_thread = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                         "MHA_NUM_THREADS")}
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(lite_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python (JupyterLite's packages)", "language": "python", "env": one_thread}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    work = tmp_path / "contents"  # an empty folder, like JupyterLite's: no repository around it
    work.mkdir()
    failures = []
    pages = live_pages(ROOT)
    assert "chapters/self_attention" in pages and "chapters/real_heads" not in pages
    for docname, path in pages.items():
        nb = jupytext.read(path, fmt="md:myst")
        client = NotebookClient(nb, kernel_name="lite", timeout=CELL_TIMEOUT_SECONDS,
                                resources={"metadata": {"path": str(work)}})
        try:
            client.execute()
        except CellExecutionError as error:
            failures.append(f"{docname}: {str(error)[-1500:]}")
    assert failures == [], "\n\n".join(failures)

