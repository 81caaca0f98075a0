"""Static checks of the built site: no CDN, vendored assets, links, alt text, downloads, lite.

These read ``_build/html`` without a browser (they skip when the site is not built).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

pytestmark = pytest.mark.browser

#: Hosts the built pages must not load from (the site works offline and behind strict networks).
CDN_HOSTS = ("cdn.jsdelivr.net", "cdnjs.cloudflare.com", "unpkg.com", "fonts.googleapis.com",
             "fonts.gstatic.com", "mathjax.org")

VENDORED = ("vendored/html-manager/embed.js", "vendored/mathjax/tex-chtml.js")


def test_no_page_names_a_cdn(site):
    offenders = {}
    for page in site.rglob("*.html"):
        hosts = sorted({host for host in CDN_HOSTS if host in page.read_text(encoding="utf8")})
        if hosts:
            offenders[str(page.relative_to(site))] = hosts
    assert offenders == {}


def test_vendored_scripts_are_served_by_the_site(site):
    for path in VENDORED:
        assert (site / "_static" / path).stat().st_size > 10_000, path
    fonts = list((site / "_static/vendored/mathjax/output/chtml/fonts/woff-v2").glob("*.woff"))
    assert len(fonts) > 10


def _script_sources(html: str) -> list[str]:
    return re.findall(r'<script[^>]*\ssrc="([^"]+)"', html)


def test_widget_pages_load_the_vendored_manager_in_order_without_blocking(site_pages):
    """The MathJax shim, then html-manager (order matters), both deferred; only where needed."""
    wanted = ["widgets-shim.js", "vendored/html-manager/embed.js"]
    for docname, page in site_pages.items():
        html = page.read_text(encoding="utf8")
        tags = re.findall(r"<script[^>]*\ssrc=\"[^\"]+\"[^>]*>", html)
        sources = [re.search(r'src="([^"?]+)', tag)[1].rsplit("_static/", 1)[-1] for tag in tags]
        assert not any("fontawesome.js" in src for src in sources), f"{docname} loads the icon script"
        if "application/vnd.jupyter.widget-state+json" not in html:
            assert not set(wanted) & set(sources), f"{docname} has no widget but loads the manager"
            continue
        positions = [sources.index(name) for name in wanted if name in sources]
        assert len(positions) == 2 and positions == sorted(positions), (docname, sources)
        for position in positions:
            assert "defer" in tags[position], f"{docname}: {tags[position]} blocks the first paint"


def test_math_pages_load_the_vendored_mathjax(site_pages):
    for docname, page in site_pages.items():
        html = page.read_text(encoding="utf8")
        if 'class="math' not in html:
            continue
        sources = _script_sources(html)
        assert any(src.split("?")[0].endswith("vendored/mathjax/tex-chtml.js")
                   for src in sources), (docname, sources)


# --- internal links and images ---------------------------------------------------------------------


class _Refs(HTMLParser):
    """Collects link targets, element ids and <img> tags of one HTML page."""

    def __init__(self):
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()
        self.images: list[dict[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if tag == "a" and attributes.get("name"):
            self.ids.add(attributes["name"])
        for name in ("href", "src"):
            if attributes.get(name) and tag in {"a", "link", "script", "img"}:
                self.targets.append(attributes[name])
        if tag == "img":
            self.images.append(attributes)


@functools.cache
def _parse(path: Path) -> _Refs:
    refs = _Refs()
    refs.feed(path.read_text(encoding="utf8"))
    return refs


def _book_pages(site: Path) -> list[Path]:
    """Every HTML page of the book (not the JupyterLite app in lite/, nor theme templates)."""
    return [p for p in site.rglob("*.html") if p.relative_to(site).parts[0] not in {"lite", "_static"}]


def test_every_internal_link_resolves(site):
    broken = []
    for page in _book_pages(site):
        for target in _parse(page).targets:
            url = urlparse(target)
            if url.scheme or target.startswith(("//", "mailto:", "javascript:", "data:")):
                continue
            path = (page.parent / unquote(url.path)).resolve() if url.path else page
            if path.is_dir():
                path = path / "index.html"
            if not path.is_file():
                broken.append(f"{page.relative_to(site)} -> {target}")
            elif url.fragment and path.suffix == ".html" and url.fragment not in _parse(path).ids:
                broken.append(f"{page.relative_to(site)} -> {target} (no such anchor)")
    assert broken == []


def test_every_image_has_alt_text(site):
    """Alt text must describe: missing, empty or the file's own path (Sphinx's default) fail.

    Images from notebook outputs get their alt text from the cell, e.g.
    ``mystnb: {image: {alt: "Eight attention maps ..."}}`` in the code cell's options.
    """
    lacking = []
    for page in _book_pages(site):
        for image in _parse(page).images:
            alt, src = (image.get("alt") or "").strip(), image.get("src") or ""
            if not alt or alt == src or alt == Path(urlparse(src).path).name:
                lacking.append(f"{page.relative_to(site)}: <img src={src!r} alt={alt!r}>")
    assert lacking == []


# --- downloads -------------------------------------------------------------------------------------


def test_notebook_pages_offer_ipynb_and_md_downloads(site, site_pages):
    import nbformat

    from tests.chapters.harness import toc_notebooks

    for page in toc_notebooks():
        targets = _parse(site_pages[page.docname]).targets
        for suffix in (".ipynb", page.path.suffix):
            wanted = f"_sources/{page.docname}{suffix}"
            link = [t for t in targets if t.endswith(wanted)]
            assert link, f"{page.docname} offers no {suffix} download"
            assert (site_pages[page.docname].parent / link[0]).resolve().is_file(), link[0]
        notebook = nbformat.read(site / "_sources" / f"{page.docname}.ipynb", as_version=4)
        nbformat.validate(notebook)
        code = [c for c in notebook.cells if c.cell_type == "code"]
        assert code and all(c.execution_count for c in code), "download the executed notebook"
        first = notebook.cells[0]
        assert first.cell_type == "markdown" and "pip install" in first.source, (
            f"{page.docname}.ipynb does not open by saying how to install mha"
        )


def test_every_page_links_to_the_repository_and_the_install_page(site_pages):
    from book.lite_site import REPOSITORY

    for docname, page in site_pages.items():
        targets = _parse(page).targets
        assert any(t.startswith(REPOSITORY) for t in targets), f"{docname}: no link to the repository"
        here = docname == "chapters/run_locally"
        assert here or any(t.split("#")[0].endswith("run_locally.html") for t in targets), (
            f"{docname}: no link to 'Run it on your computer'"
        )


# --- JupyterLite -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lite(site) -> Path:
    lite = site / "lite"
    assert (lite / "jupyter-lite.json").is_file(), "no JupyterLite site in _build/html/lite"
    return lite


def _live_docnames() -> list[str]:
    from book.toc import live_pages
    from tests.chapters.harness import ROOT

    return list(live_pages(ROOT))


def test_lite_has_every_live_chapter_notebook_with_the_pyodide_kernel(lite):
    import nbformat

    from tests.chapters.harness import toc_notebooks

    live = _live_docnames()
    assert "chapters/real_heads" not in live  # opts out: its model cannot load in the browser
    assert len(live) == len(toc_notebooks()) - 1
    for docname in live:
        notebook = nbformat.read(lite / "files" / f"{docname}.ipynb", as_version=4)
        assert notebook.metadata.kernelspec.name == "python", docname  # no kernel dialog
        installs = [c.source for c in notebook.cells if c.cell_type == "code"][0]
        assert "%pip install" in installs and "mha-course" in installs, docname
    assert not (lite / "files" / "chapters" / "real_heads.ipynb").exists()


def test_lite_serves_the_mha_wheel(lite):
    import mha

    index = json.loads((lite / "pypi" / "all.json").read_text(encoding="utf8"))
    assert "mha-course" in index
    releases = index["mha-course"]["releases"]
    assert list(releases) == [mha.__version__]
    (wheel,) = releases[mha.__version__]
    wheel_path = lite / "pypi" / wheel["filename"]
    with zipfile.ZipFile(wheel_path) as archive:
        names = set(archive.namelist())
    assert "mha/__init__.py" in names and "mha/explorers/frames.py" in names
    assert "mha/explorers/static/attention_view.js" in names  # the head view's script, for live notebooks
    assert hashlib.sha256(wheel_path.read_bytes()).hexdigest() == wheel["digests"]["sha256"]


def test_lite_config_preselects_the_kernel_and_indexes_the_wheel(lite):
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert config["defaultKernelName"] == "python"
    tracker = config["settingsOverrides"]["@jupyterlab/notebook-extension:tracker"]
    assert tracker["autoStartDefaultKernel"] is True
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert any(url.startswith("./pypi/all.json") for url in kernel["pipliteUrls"])
    extensions = {extension["name"] for extension in config["federated_extensions"]}
    assert {"@jupyter-widgets/jupyterlab-manager",
            "@jupyterlite/pyodide-kernel-extension"} <= extensions  # widgets work in lite


def test_every_live_page_links_to_its_live_notebook(site, site_pages, lite):
    from tests.chapters.harness import toc_notebooks

    live = _live_docnames()
    for page in toc_notebooks():
        html = site_pages[page.docname]
        links = [t for t in _parse(html).targets if "lite/notebooks/index.html?path=" in t]
        if page.docname not in live:
            assert links == [], page.docname  # no button that would open a notebook that cannot run
            continue
        assert len(links) == 1, page.docname
        app, _, query = links[0].partition("?")
        assert (html.parent / app).resolve() == (lite / "notebooks" / "index.html").resolve()
        assert query == f"path={page.docname}.ipynb"


def test_every_displayed_figure_has_an_image(site):
    """A Figure shown before matplotlib's inline backend is active appears as bare text.

    ``mha.plotting`` returns ``matplotlib.figure.Figure`` objects; IPython draws them only once the
    inline backend is set up (``%matplotlib inline``, or importing ``matplotlib.pyplot``). Without
    it the page shows ``<Figure size 640x480 with 1 Axes>`` instead of the picture.
    """
    import nbformat

    executed = site.parent / "jupyter_execute"
    textual = []
    for path in sorted(executed.rglob("*.ipynb")):
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                if str(data.get("text/plain", "")).startswith("<Figure size") and not any(
                    key.startswith("image/") for key in data
                ):
                    textual.append(f"{path.relative_to(executed)} cell {index}")
    assert textual == [], "add `%matplotlib inline` (or import matplotlib.pyplot) first"


def test_teachers_page_offers_every_assignment_for_download(site, site_pages):
    from tests.chapters.harness import ROOT

    targets = _parse(site_pages["chapters/teachers"]).targets
    for assignment in sorted((ROOT / "assignments").glob("*.md")):
        links = [t for t in targets if t.endswith(f"/{assignment.name}") and "_downloads" in t]
        assert links, f"the teachers' page offers no download of {assignment.name}"
        served = (site_pages["chapters/teachers"].parent / unquote(links[0])).resolve()
        assert served.read_bytes() == assignment.read_bytes()
