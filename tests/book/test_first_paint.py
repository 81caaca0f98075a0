"""No stylesheet file and no script before the first paint (book/first_paint.py), on small built sites."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from book.first_paint import (
    flat_css,
    inline_stylesheets,
    names_in_use,
    plain_code,
    plain_token_classes,
    prune_css,
    scripts_after_text,
)


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")

HEAD = """<!DOCTYPE html><html><head>
<script data-cfasync="false">document.documentElement.dataset.mode = "auto";</script>
<link href="{up}_static/styles/theme.css?digest=1" rel="stylesheet" />
<link rel="stylesheet" type="text/css" href="{up}_static/katex.css?v=2" />
<script src="{up}_static/documentation_options.js?v=3"></script>
<script>let hint = 'Click to show';</script>
<script src="{up}_static/toggle.js"></script>
<script defer="defer" src="{up}_static/site.js"></script>
<script>DOCUMENTATION_OPTIONS.pagename = '{name}';</script>
</head><body><p class="lead">Text</p>
<script type="application/vnd.jupyter.widget-state+json">{{"state": {{}}}}</script>
</body></html>"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    static = tmp_path / "_static"
    (static / "styles").mkdir(parents=True)
    (static / "fonts").mkdir()
    (static / "fonts" / "Main.woff2").write_bytes(b"font")
    (static / "basic.css").write_text("div.body { min-width: 360px; }\n.unused-widget { color: red; }\n")
    (static / "styles" / "theme.css").write_text('@import "../basic.css";\n')
    (static / "katex.css").write_text(
        '@charset "utf-8";@font-face{font-family:KaTeX_Main;src:url(fonts/Main.woff2) format("woff2")}'
        ".katex{font:normal 1.21em KaTeX_Main}\n/*# sourceMappingURL=katex.css.map */")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "intro.html").write_text(HEAD.format(up="", name="intro"))
    (tmp_path / "chapters" / "one.html").write_text(HEAD.format(up="../", name="chapters/one"))
    return tmp_path


def test_imports_are_inlined_and_urls_point_from_the_bundle_to_the_same_files(site):
    bundle_dir = site / "_static" / "styles"
    css = flat_css(site / "_static" / "styles" / "theme.css", bundle_dir) + flat_css(
        site / "_static" / "katex.css", bundle_dir)
    assert "@import" not in css and "min-width: 360px" in css
    assert "@charset" not in css and "sourceMappingURL" not in css
    (url,) = re.findall(r"url\(([^)]+)\)", css)
    assert (bundle_dir / url).resolve() == (site / "_static" / "fonts" / "Main.woff2").resolve()


def test_an_import_loop_is_an_error_not_a_hang(tmp_path):
    (tmp_path / "a.css").write_text('@import "b.css";')
    (tmp_path / "b.css").write_text('@import "a.css";')
    with pytest.raises(ValueError, match="loops"):
        flat_css(tmp_path / "a.css", tmp_path)


def test_every_page_holds_all_its_rules_inline_with_urls_from_its_own_folder(site):
    joined: dict = {}
    for page in [site / "intro.html", site / "chapters" / "one.html"]:
        parsed = soup(page.read_text())
        inline_stylesheets(parsed, page, site, joined)
        head = str(parsed).split("</head>")[0]
        assert 'rel="stylesheet"' not in head
        (css,) = re.findall(r'<style data-mha="first-paint">(.*?)</style>', head, re.S)
        assert css.index("min-width") < css.index("KaTeX_Main")  # in the pages' order
        assert head.index("<style") < head.index("documentation_options")  # where the links were
        (url,) = re.findall(r"url\(([^)]+)\)", css)
        assert (page.parent / url).resolve() == (site / "_static" / "fonts" / "Main.woff2").resolve()
    assert len([key for key in joined if isinstance(key[0], Path)]) == 1  # joined and pruned once


def test_a_missing_stylesheet_is_named(site):
    (site / "_static" / "katex.css").unlink()
    page = site / "intro.html"
    with pytest.raises(FileNotFoundError, match="katex.css"):
        inline_stylesheets(soup(page.read_text()), page, site, {})


def test_a_stylesheet_that_would_end_the_style_element_is_refused(site):
    (site / "_static" / "katex.css").write_text('.katex::after { content: "</style>"; }')
    page = site / "intro.html"
    with pytest.raises(ValueError, match="</style"):
        inline_stylesheets(soup(page.read_text()), page, site, {})


def test_a_page_without_stylesheets_stops_the_build(tmp_path):
    with pytest.raises(ValueError, match="no stylesheet"):
        inline_stylesheets(soup("<html><head></head><body></body></html>"), tmp_path / "a.html", tmp_path, {})


def test_blocking_scripts_move_after_the_text_in_their_order():
    parsed = soup(HEAD.format(up="", name="intro"))
    scripts_after_text(parsed)
    moved = str(parsed)
    head, body = moved.split("</head>")
    assert 'data-cfasync="false"' in head  # light or dark, chosen before the first paint
    assert 'defer="defer" src="_static/site.js"' in head
    assert "documentation_options" not in head and "let hint" not in head
    order = [body.index(part) for part in ("widget-state", "documentation_options.js", "let hint",
                                           "toggle.js", "pagename = 'intro'", "</body>")]
    assert order == sorted(order)
    scripts_after_text(parsed)
    assert str(parsed) == moved  # nothing left to move


def test_a_page_without_blocking_scripts_is_unchanged():
    html = ('<html><head><script defer="" src="a.js"></script><script type="module">x</script></head>'
            "<body></body></html>")
    parsed = soup(html)
    scripts_after_text(parsed)
    assert str(parsed) == html


WORDS = {"lead", "body", "katex", "mord", "bd-sidebar", "searchbox", "show"}


def test_rules_no_page_can_match_are_dropped_and_the_others_kept():
    css = """.lead{color:red}.unused{color:blue}.lead,.unused-too{margin:0}
    #searchbox input{width:1px}#nowhere{width:2px}
    @media (max-width: 500px){.bd-sidebar{display:none}.gone{display:none}}
    @media print{.gone{display:none}}
    @font-face{font-family:X;src:url(x.woff2)}@keyframes spin{from{opacity:0}to{opacity:1}}
    div:not(.unused) p{line-height:2}.bs-popover-top{top:0}[data-x=".unused"]{color:green}
    .katex .mord{font-style:italic}a:hover{color:teal}"""
    out = prune_css(css, WORDS, ("bs-",))
    for kept in (".lead{color:red}", ".lead{margin:0}", "#searchbox input", ".bd-sidebar{display:none}",
                 "@font-face", "@keyframes spin", "div:not(.unused) p", ".bs-popover-top",
                 '[data-x=".unused"]', ".katex .mord", "a:hover"):
        assert kept.replace(" ", "") in out.replace(" ", ""), kept
    for dropped in (".unused{", ".unused-too", "#nowhere", ".gone", "@media print"):
        assert dropped not in out, dropped


def test_names_in_use_come_from_pages_and_scripts(site):
    script = site / "_static" / "toggle.js"
    script.write_text('el.classList.add("toggle-hidden"); tip.className = "bs-tip-" + where; x = "fa-" + i')
    words, prefixes = names_in_use(site, [site / "intro.html"])
    assert {"lead", "toggle-hidden", "dataset"} <= words
    assert "bs-tip-" in prefixes
    assert "fa-" not in prefixes  # icon fonts keep only icons named in full (book/icon_fonts.py)


def test_the_icon_script_no_page_loads_keeps_no_icon_rule(site):
    (site / "_static" / "scripts").mkdir()
    (site / "_static" / "scripts" / "fontawesome.js").write_text('icons = {"fa-500px": 1, "fa-bars": 2}')
    words, _ = names_in_use(site, [site / "intro.html"])
    assert "fa-500px" not in words
    assert prune_css(".fa-500px:before{content:'x'}.lead{color:red}", words, ()) == ".lead{color:red}"


CODE_CSS = """html[data-theme="light"] .highlight{background:#fefefe;color:#080808}
html[data-theme="dark"] .highlight{background:#2b2b2b;color:#F8F8F2}
.highlight{position:relative}
html[data-theme="light"] .highlight .n{color:#080808}html[data-theme="dark"] .highlight .n{color:#f8f8f2}
html[data-theme="light"] .highlight .p{color:#080808}html[data-theme="dark"] .highlight .p{color:#F8F8F2}
html[data-theme="light"] .highlight .k{color:#0000aa}html[data-theme="dark"] .highlight .k{color:#ff79c6}
html[data-theme="light"] .highlight .o{color:#080808}html[data-theme="dark"] .highlight .o{color:#ff0000}
html[data-theme="light"] .highlight .nb{color:#080808;font-weight:bold}
html[data-theme="light"] .highlight .x{color:#080808}.bd-article .x{margin:0}
.sig-param.n{font-style:italic}
@media print{html[data-theme="light"] .highlight .w{color:#080808}}"""


def test_plain_token_classes_are_those_that_draw_nothing_in_any_scheme():
    # n and p: the block's own colour in both schemes (case aside); w: the same, inside @media;
    # .sig-param.n needs a second class, which a token's span never has.
    # k: its own colours; o: plain in light only; nb: bold; x: another rule can reach it.
    assert plain_token_classes(CODE_CSS) == {"n", "p", "w"}


def test_plain_code_joins_each_run_of_plain_tokens_in_code_blocks_only():
    html = ('<p><span class="n">prose</span> <span class="p">.</span></p>'
            '<div class="highlight"><pre><span></span><span class="n">x</span>'
            '<span class="w"> </span><span class="o">=</span> '
            '<span class="n">f</span><span class="p">(</span><span class="s2">&quot;a&lt;b&quot;</span>'
            '<span class="p">)</span>\n    <span class="p">.</span><span class="n">y</span>\n</pre></div>')
    parsed = soup(html)
    plain_code(parsed, {"n", "p", "w"})
    out = str(parsed)
    # Blanks join a run (they show no colour); a blank before any plain token stays outside.
    assert out == ('<p><span class="n">prose</span> <span class="p">.</span></p><div class="highlight"><pre>'
                   '<span></span><span class="n">x </span><span class="o">=</span> <span class="n">f(</span>'
                   '<span class="s2">"a&lt;b"</span><span class="p">)\n    .y\n</span></pre></div>')
    assert parsed.get_text() == soup(html).get_text()  # the same text, for copy too
    untouched = soup(html)
    plain_code(untouched, set())
    assert str(untouched) == str(soup(html))
