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

VENDORED = ("vendored/katex/katex.min.css",)


def test_no_page_names_a_cdn(site):
    offenders = {}
    for page in site.rglob("*.html"):
        hosts = sorted({host for host in CDN_HOSTS if host in page.read_text(encoding="utf8")})
        if hosts:
            offenders[str(page.relative_to(site))] = hosts
    assert offenders == {}


def test_vendored_files_are_served_by_the_site(site):
    for path in VENDORED:
        assert (site / "_static" / path).stat().st_size > 10_000, path
    css = (site / "_static/vendored/katex/katex.min.css").read_text(encoding="utf8")
    fonts = re.findall(r"url\((fonts/[\w-]+\.\w+)\)", css)
    assert len(fonts) > 10 and all(font.endswith(".woff2") for font in fonts)
    missing = [font for font in fonts if not (site / "_static/vendored/katex" / font).is_file()]
    assert missing == []


def stylesheet_text(page: Path) -> str:
    """All the CSS of the page: inside it since ``book.first_paint``, and any file it links."""
    head = page.read_text(encoding="utf8").split("</head>", 1)[0]
    hrefs = re.findall(r'<link [^>]*rel="stylesheet"[^>]*href="([^"?]+)', head)
    inline = re.findall(r"<style[^>]*>(.*?)</style>", head, re.S)
    return "".join(inline + [(page.parent / href).read_text(encoding="utf8") for href in hrefs])


def _script_tags(html: str) -> list[str]:
    return re.findall(r"<script[^>]*\ssrc=\"[^\"]+\"[^>]*>", html)


def _source(tag: str) -> str:
    return re.search(r'src="([^"?]+)', tag)[1].rsplit("_static/", 1)[-1]


def test_explorer_pages_load_only_the_small_deferred_frame_script(site_pages):
    """Explorers are HTML already (book/static_widgets.py): no widget state, view or manager in any page,
    the theme's icon script nowhere, and the frame switcher only where an explorer is."""
    for docname, page in site_pages.items():
        html = page.read_text(encoding="utf8")
        sources = [_source(tag) for tag in _script_tags(html)]
        assert not any("fontawesome.js" in src or "html-manager" in src for src in sources), docname
        assert "application/vnd.jupyter.widget" not in html, f"{docname} still holds widget state or views"
        loaders = [tag for tag in _script_tags(html) if _source(tag) == "static-widgets.js"]
        if 'class="mha-stack"' not in html:
            assert loaders == [], f"{docname} has no explorer but loads the frame script"
            continue
        assert len(loaders) == 1 and "defer" in loaders[0], (docname, loaders)


def test_no_page_but_search_loads_the_search_scripts(site, site_pages):
    for docname, page in site_pages.items():
        sources = [_source(tag) for tag in _script_tags(page.read_text(encoding="utf8"))]
        assert not {"searchtools.js", "language_data.js", "searchindex.js"} & set(sources), docname
    search = [_source(tag) for tag in _script_tags((site / "search.html").read_text(encoding="utf8"))]
    assert {"searchtools.js", "searchindex.js", "search-snippets.js"} <= set(search), search


def test_every_formula_is_typeset_at_build_time(site_pages):
    """KaTeX's markup is in the page, with MathML for screen readers; no math script, no TeX left,
    no formula KaTeX could not read (it would show in red)."""
    for docname, page in site_pages.items():
        html = page.read_text(encoding="utf8")
        assert "katex-error" not in html, f"{docname}: KaTeX could not typeset a formula"
        assert "tex-chtml" not in html and "window.MathJax" not in html, f"{docname} loads MathJax"
        formulas = re.findall(r'<(?:span|div) class="math[^"]*"[^>]*>(.*?)</(?:span|div)>', html, re.S)
        untypeset = [f[:60] for f in formulas if 'class="katex' not in f]
        assert untypeset == [], (docname, untypeset)
        if formulas:
            assert "KaTeX_Main-Regular.woff2" in stylesheet_text(page) and "<math" in html, docname


def test_katex_stylesheet_matches_the_katex_that_typesets(site):
    """The build typesets with sphinxcontrib-katex's KaTeX; the stylesheet comes from npm's: same version."""
    import sphinxcontrib.katex

    from tests.chapters.harness import ROOT

    npm = json.loads((ROOT / "node_modules/katex/package.json").read_text(encoding="utf8"))["version"]
    assert npm == sphinxcontrib.katex.katex_version


def test_explorer_frames_are_image_files_loaded_when_shown(site_pages):
    """Each frame an <img> of a file under _images/frames/, sized, 1x/2x, lazy, with alt text naming
    the values it shows; every stack follows a control of its page; one frame of each stack shown."""
    from bs4 import BeautifulSoup

    frames = 0
    for docname, page in site_pages.items():
        soup = BeautifulSoup(page.read_text(encoding="utf8"), "html.parser")
        for stack in soup.select(".mha-stack"):
            assert soup.find(id=stack["data-control"]), (docname, stack["data-control"])
            shown = [frame for frame in stack.find_all(class_="mha-frame", recursive=False)
                     if not frame.has_attr("hidden")]  # fmt: skip
            assert len(shown) == 1, docname
        for img in soup.select(".mha-frame img"):
            frames += 1
            assert img["loading"] == "lazy" and "(" in img["alt"], (docname, img.attrs)
            assert int(img["width"]) > 0 and int(img["height"]) > 0
            # a frame drawn at its shown size has no sharper copy, hence no srcset (figures.one_x_copy)
            urls = [img["src"], *[c.split()[0] for c in img.get("srcset", "").split(",") if c.strip()]]
            for url in urls:
                assert (page.parent / unquote(url)).is_file(), (docname, url)
    assert frames > 100


def test_no_progress_bar_in_any_output(site_pages):
    """Progress bars showed the build machine's speed ("161.38it/s") and overflowed a phone."""
    for docname, page in site_pages.items():
        html = page.read_text(encoding="utf8")
        assert not re.search(r"\d it/s|\d+\.\d+it/s", html), docname


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
            link = [t for t in targets if t.endswith(wanted) and not urlparse(t).scheme]
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
    opted_out = {"chapters/real_heads", "chapters/modern_attention"}  # they load the pretrained model
    assert not opted_out & set(live)
    assert len(live) == len(toc_notebooks()) - len(opted_out)
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


# --- ways in: launch, edit, issues ------------------------------------------------------------------


def _links(page: Path) -> list[str]:
    return _parse(page).targets


def test_notebook_pages_launch_on_binder_and_colab_and_say_why_not_in_the_browser(site_pages):
    """Binder opens the page's source in JupyterLab; Colab the notebook book.launch publishes; every
    notebook page has the menu, and a page that JupyterLite cannot run says why in it."""
    from book.launch import COLAB_BRANCH, REPOSITORY
    from book.toc import live_pages, not_live_reason, notebook_pages
    from tests.chapters.harness import ROOT

    owner_repo = REPOSITORY.removeprefix("https://github.com/")
    for docname, source in notebook_pages(ROOT).items():
        links = _links(site_pages[docname])
        binder = [t for t in links if t.startswith("https://mybinder.org/")]
        colab = [t for t in links if t.startswith("https://colab.research.google.com/")]
        assert binder == [f"https://mybinder.org/v2/gh/{owner_repo}/main?urlpath=lab/tree/"
                          f"{docname}{source.suffix}"], (docname, binder)
        assert colab == [f"https://colab.research.google.com/github/{owner_repo}/blob/{COLAB_BRANCH}/"
                         f"{docname}.ipynb"], (docname, colab)
        lite = [t for t in links if "lite/notebooks/index.html?path=" in t]
        text = site_pages[docname].read_text(encoding="utf8")
        if docname in live_pages(ROOT):
            assert len(lite) == 1 and lite[0].endswith(f"?path={docname}.ipynb"), (docname, lite)
        else:
            assert lite == [] and f"No JupyterLite: {not_live_reason(source)}" in text, docname


def test_colab_links_resolve_in_the_branch_the_publish_step_writes(site, site_pages, tmp_path):
    """``python -m book.launch`` run on this build, into a clone: every Colab link names a notebook of
    the branch (as GitHub serves it to Colab), whose first code cell installs the package."""
    import subprocess

    import nbformat

    from book.launch import colab_files, publish
    from tests.chapters.harness import ROOT

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    commit = head.stdout.strip()
    published = publish(colab_files(site.parent, ROOT, commit), clone, "colab", "test")
    linked = {t for page in site_pages.values() for t in _links(page) if "colab.research.google.com" in t}
    assert len(linked) >= 15
    for link in sorted(linked):
        branch, path = link.split("/blob/", 1)[1].split("/", 1)
        shown = subprocess.run(["git", "-C", str(clone), "show", f"{published}:{path}"], capture_output=True,
                               text=True)  # fmt: skip
        assert branch == "colab" and shown.returncode == 0, (link, shown.stderr)
        nb = nbformat.reads(shown.stdout, as_version=4)
        nbformat.validate(nb)
        first_code = next(cell for cell in nb.cells if cell.cell_type == "code")
        assert first_code.source.startswith('%pip install -q "mha-course[') and commit in first_code.source
        assert any(cell.get("outputs") for cell in nb.cells), f"{path}: not the executed notebook"


def test_every_page_offers_an_edit_and_an_issue_link(site_pages):
    from book.lite_site import REPOSITORY
    from tests.chapters.harness import ROOT

    for docname, page in site_pages.items():
        links = _links(page)
        edits = [t for t in links if t.startswith(f"{REPOSITORY}/edit/main/")]
        assert len(edits) == 1, (docname, edits)
        assert (ROOT / edits[0].removeprefix(f"{REPOSITORY}/edit/main/")).is_file(), edits[0]
        issues = [t for t in links if t.startswith(f"{REPOSITORY}/issues/new")]
        assert len(issues) == 1 and f"{docname}.html" in unquote(issues[0]), (docname, issues)


def test_the_live_notebook_app_explains_a_failed_start_however_it_is_opened(site):
    pages = list((site / "lite").rglob("index.html"))
    assert pages
    for page in pages:
        html = page.read_text(encoding="utf8")
        src = re.search(r'<script src="([^"]*lite-guard\.js)"></script>', html)
        assert src, page.relative_to(site)
        assert (page.parent / src[1]).resolve() == (site / "_static" / "lite-guard.js").resolve()


# --- citations ----------------------------------------------------------------------------------


def test_citations_read_author_year_in_round_brackets_in_text_and_list(site_pages):
    """"Vaswani et al. (2017)" and "(Vaswani et al., 2017)" in the text; the list labels its entries
    the same way ("Vaswani et al. 2017", not "[VSP+17]") and uses no list role without list items."""
    author = r"[A-Z][\w-]+(?: et al\.| and [A-Z][\w-]+)?"
    textual = parenthetical = 0
    for docname, page in site_pages.items():
        text = re.sub(r"<[^>]+>", "", page.read_text(encoding="utf8"))
        square = re.findall(rf"{author} \[\d{{4}}\]|\[{author}, \d{{4}}\]", text)
        assert square == [], (docname, square[:3])
        textual += len(re.findall(rf"{author} \(\d{{4}}\)", text))
        parenthetical += len(re.findall(rf"\({author}, \d{{4}}", text))
    assert textual > 5 and parenthetical > 3, (textual, parenthetical)
    references = site_pages["references"].read_text(encoding="utf8")
    labels = re.findall(r'<span class="label"><span class="fn-bracket">\[</span>(.*?)<span', references)
    assert len(labels) > 20, labels
    # a team ("Gemma Team", "Team OLMo") or a handle ("bloc97") is an author too
    named = rf"(?:{author}|[A-Z][\w-]+ [A-Z][\w-]+|[a-z][\w-]*)"
    assert all(re.fullmatch(rf"{named} \d{{4}}[a-z]?", label) for label in labels), labels
    assert 'role="list"' not in references and "doc-biblioentry" not in references


def test_every_icon_the_pages_name_is_in_the_cut_icon_fonts(site, site_pages):
    """book/icon_fonts.py keeps only the icons the site uses: none missing, the fonts small."""
    from fontTools.ttLib import TTFont

    from book.icon_fonts import FONTS, ICON_CLASS, THEME_CSS, icon_code_points

    points = icon_code_points((site / THEME_CSS).read_text(encoding="utf8"))
    glyphs = set()
    for font in (site / FONTS).glob("*.woff2"):
        assert font.stat().st_size < 10_000, f"{font.name} was not cut ({font.stat().st_size} bytes)"
        glyphs |= set(TTFont(font).getBestCmap())
    for docname, page in site_pages.items():
        markup = re.sub(r"<style[^>]*>.*?</style>", "", page.read_text(encoding="utf8"), flags=re.S)
        names = {name for name in ICON_CLASS.findall(markup) if name in points}
        assert names and all(points[name] in glyphs for name in names), (docname, sorted(names))
