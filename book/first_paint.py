"""Sphinx extension: a page paints its text from its own bytes, waiting for no other file.

Loaded through ``sphinx.local_extensions`` in ``_config.yml``. Jupyter Book's pages ask, in
``<head>``, for twelve stylesheets (one of them ``@import``-ing a thirteenth) and seven synchronous
scripts. A browser paints nothing before it has all of them, and a phone on Slow 4G (562.5 ms a
request, six at a time over HTTP/1.1) spent four round trips on them: the text showed 3.3-3.5 s
after the click, whatever the page weighed (``benchmarks/bench_site.py``).

When the HTML build is done, this rewrites every page Sphinx wrote:

- its stylesheets, in their order, are joined (``@import`` inlined, ``url(...)`` rebased on the
  page's folder), without the rules no page can match: a selector naming a class or id that no page
  and no script of the site contains is dropped (most of Bootstrap's utilities, Font Awesome's two
  thousand icons): 89 kB gzip became 29 kB. The result goes **inside** the page, in one ``<style>``
  in its ``<head>``: the browser paints as soon as the start of the page has arrived, one round trip
  after the click instead of two (first text on Slow 4G with a 4x slower CPU: 1.9-2.5 s as one
  linked file, 0.86-0.98 s inline). Each page carries the 29 kB again (0.16 s on Slow 4G when the
  reader turns the page), where a linked file would come from the cache; a first visit is what most
  readers make.
- its synchronous scripts in ``<head>`` (the files and the inline snippets between them, which set
  variables the files read) move, in their order, to the end of ``<body>``: they still run before
  the deferred scripts and before ``DOMContentLoaded``, as they did, but after the text has painted.
  The theme's snippet that picks light or dark stays: it must run before the first paint.
- in its code blocks, each run of Pygments tokens drawn alike (names and punctuation: one colour in
  each scheme, the block's, read from the page's own stylesheet) is one span instead of one per
  token: a sixth of a chapter's elements, each styled and laid out at every layout of a phone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)

STYLESHEET = re.compile(r'[ \t]*<link\b(?=[^>]*\brel="stylesheet")[^>]*>\n?')
HREF = re.compile(r'\bhref="([^"]+)"')
SCRIPT = re.compile(r"[ \t]*<script\b([^>]*)>(.*?)</script>\n?", re.S)
#: pydata-sphinx-theme's light/dark snippet: runs before the first paint, or the page flashes.
PAINT_SCRIPT = 'data-cfasync="false"'
IMPORT = re.compile(r'@import\s+(?:url\()?\s*["\']?([^"\')\s;]+)["\']?\s*\)?\s*;')
URL = re.compile(r'url\(\s*(["\']?)([^"\')]+)\1\s*\)')
SOURCE_MAP = re.compile(r"/\*#\s*sourceMappingURL=[^*]*\*/")
CHARSET = re.compile(r'@charset\s+"[^"]*";')
#: Selectors a page may match: classes and ids outside ``:not(...)``-like parentheses and ``[...]``.
NAME = re.compile(r"[.#](-?[A-Za-z_][\w-]*)")
NESTED = re.compile(r"\([^()]*\)|\[[^\]]*\]")
#: Scripts whose words keep no rule: the theme's icon script, which no page loads (``book.lean_site``),
#: and html-manager's bundle, loaded only for a widget the site's script does not draw, which brings
#: its own styles (both name all of Font Awesome's 1,600 icons).
UNLOADED_SCRIPTS = {"_static/scripts/fontawesome.js", "_static/vendored/html-manager/embed.js"}
#: Rules that hold rules (pruned inside), and the others (kept whole: fonts, keyframes, ...).
GROUPING = {"media", "supports", "layer", "container", "document"}


def _is_blocking(attributes: str) -> bool:
    """A classic script without ``defer``/``async`` (inline or not): it stops the parser where it is."""
    kind = re.search(r'\btype="([^"]*)"', attributes)
    if kind and kind.group(1) not in ("text/javascript", "application/javascript"):
        return False  # data (widget state, JSON) or a module, which is deferred already
    return not re.search(r"\b(defer|async)\b", attributes) and PAINT_SCRIPT not in attributes


def relative_urls(css: str, from_dir: Path, to_dir: Path) -> str:
    """``css`` whose relative ``url()``s name files from ``from_dir``, made to name them from ``to_dir``."""

    def rebase(match: re.Match) -> str:
        quote, url = match.groups()
        if re.match(r"(?:[a-z]+:|/|#)", url):  # data:, https:, absolute, or a fragment: as it is
            return match.group(0)
        target = (from_dir / url).resolve()
        return f"url({quote}{Path(os.path.relpath(target, to_dir)).as_posix()}{quote})"

    return URL.sub(rebase, css)


def flat_css(path: Path, base_dir: Path, seen: frozenset[Path] = frozenset()) -> str:
    """The stylesheet at ``path``, ``@import``s inlined, ``url()``s made relative to ``base_dir``."""
    if path in seen:
        raise ValueError(f"{path}: @import loops back to itself")
    css = SOURCE_MAP.sub("", CHARSET.sub("", path.read_text(encoding="utf8")))
    # Imports first (their own urls are rebased from their own folder), then this file's urls.
    parts = IMPORT.split(css)
    out = []
    for index, part in enumerate(parts):
        if index % 2:
            target = (path.parent / unquote(part.split("?")[0])).resolve()
            out.append(flat_css(target, base_dir, seen | {path}))
        else:
            out.append(relative_urls(part, path.parent, base_dir))
    return "".join(out)


def names_in_use(outdir: Path, pages: list[Path]) -> tuple[set[str], tuple[str, ...]]:
    """Every word of the built pages and scripts, and the class prefixes scripts complete at run time.

    A class a script puts together (``"bs-popover-" + placement``) is not a word of any file: a
    selector naming a class that starts with such a quoted prefix (``"bs-"``) is kept. Icons are
    the exception: the icon fonts hold only the icons named in full (``book.icon_fonts``), so an
    icon rule is kept only for those too. Scripts that name every icon and load no rule of the
    page's stylesheet are not read (``UNLOADED_SCRIPTS``): 1,600 icon rules were kept for them.
    """
    words: set[str] = set()
    prefixes: set[str] = set()
    word = re.compile(r"[A-Za-z_][\w-]*")
    for page in pages:
        words |= set(word.findall(page.read_text(encoding="utf8")))
    for script in [*outdir.glob("_static/**/*.js"), *outdir.glob("_images/**/*.js")]:
        if script.relative_to(outdir).as_posix() in UNLOADED_SCRIPTS:
            continue
        text = script.read_text(encoding="utf8", errors="replace")
        words |= set(word.findall(text))
        prefixes |= set(re.findall(r"[\"'`]([A-Za-z_][\w-]*-)[\"'`$]", text))
    return words, tuple(sorted(prefixes - {"fa-"}))


def _selectors(prelude: str) -> list[str]:
    """A selector list split at its top-level commas."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(prelude):
        depth += char in "(["
        depth -= char in ")]"
        if char == "," and depth == 0:
            parts.append(prelude[start:index].strip())
            start = index + 1
    parts.append(prelude[start:].strip())
    return parts


def prune_css(css: str, words: set[str], prefixes: tuple[str, ...]) -> str:
    """``css`` without the selectors that name a class or id no page or script has (see names_in_use)."""
    import tinycss2

    def can_match(selector: str) -> bool:
        outer = selector
        while NESTED.search(outer):  # the names inside :not(...), :is(...) and [...] decide nothing
            outer = NESTED.sub("", outer)
        return "\\" in selector or all(name in words or name.startswith(prefixes)
                                         for name in NAME.findall(outer))

    def prune(rules) -> list[str]:
        out = []
        for rule in rules:
            if rule.type == "qualified-rule":
                kept = [sel for sel in _selectors(tinycss2.serialize(rule.prelude)) if can_match(sel)]
                if kept:
                    out.append(f"{','.join(kept)}{{{tinycss2.serialize(rule.content).strip()}}}")
            elif rule.type == "at-rule" and rule.lower_at_keyword in GROUPING and rule.content is not None:
                children = tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True)
                inner = prune(children)
                if inner:
                    out.append(f"@{rule.at_keyword}{tinycss2.serialize(rule.prelude)}{{{''.join(inner)}}}")
            elif rule.type == "at-rule":
                out.append(tinycss2.serialize([rule]))
        return out

    return "\n".join(prune(tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)))


def _href(link: str) -> str:
    found = HREF.search(link)
    if found is None:
        raise ValueError(f"a stylesheet link without href: {link}")
    return found.group(1)


def linked_stylesheets(html: str, page: Path) -> tuple[Path, ...]:
    """The stylesheet files ``html``'s head links to, in order (the key of ``inline_stylesheets``)."""
    head = html.partition("</head>")[0]
    return tuple((page.parent / unquote(_href(link).split("?")[0])).resolve()
                 for link in STYLESHEET.findall(head))  # fmt: skip


def inline_stylesheets(html: str, page: Path, outdir: Path, joined: dict[tuple[Path, ...], str],
                       prune=lambda css: css) -> str:
    """``html`` with its head's stylesheet links replaced by one ``<style>`` holding them all.

    ``joined`` maps the lists of stylesheets already joined (and ``prune``-d) to their text, its
    urls relative to ``outdir``; each page gets them relative to its own folder.
    """
    files = linked_stylesheets(html, page)
    if not files:
        return html
    head, sep, rest = html.partition("</head>")
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"{page}: stylesheets not in the build: {missing}")
    if files not in joined:
        css = prune("\n".join(flat_css(f, outdir.resolve()) for f in files))
        if "</style" in css.lower():
            raise ValueError(f"{page}: a stylesheet holds '</style', which would end the page's <style>")
        joined[files] = css
    css = relative_urls(joined[files], outdir.resolve(), page.parent.resolve())
    first = True

    def replace(match: re.Match) -> str:
        nonlocal first
        if first:
            first = False
            return f"<style>\n{css}\n</style>\n"
        return ""

    return STYLESHEET.sub(replace, head) + sep + rest


def scripts_after_text(html: str) -> str:
    """``html`` with the head's parser-blocking scripts moved, in order, to the end of the body."""
    head, sep, rest = html.partition("</head>")
    if not sep or "</body>" not in rest:
        return html
    moved = []

    def take(match: re.Match) -> str:
        if _is_blocking(match.group(1)):
            moved.append(match.group(0).strip())
            return ""
        return match.group(0)

    head = SCRIPT.sub(take, head)
    if not moved:
        return html
    body, end, tail = rest.rpartition("</body>")
    return head + sep + body + "\n".join(moved) + "\n" + end + tail


#: ``.highlight`` and ``.highlight .n``, alone or under a colour scheme (``html[data-theme="dark"] ...``).
CODE_BASE = re.compile(r'^((?:html\[data-theme=(?:"\w+"|\w+)\]\s+)?)\.highlight$')
CODE_TOKEN = re.compile(r'^((?:html\[data-theme=(?:"\w+"|\w+)\]\s+)?)\.highlight\s+\.([\w-]+)$')
HIGHLIGHTED = re.compile(r'(<div class="highlight"><pre>)(.*?)(</pre>)', re.S)
#: In a code block: a token's span and its text, text between tags, or any other tag.
CODE_ITEM = re.compile(r'<span class="([\w-]+)">([^<]*)</span>|([^<]+)|<[^>]*>')


def plain_token_classes(css: str) -> set[str]:
    """Pygments' token classes drawn alike: in every colour scheme their only rule gives the code
    block's own colour (``.highlight .n{color:#080808}`` beside ``.highlight{color:#080808}``), and no
    other selector could match them (``.sig-param.n`` needs a second class, which a token's span
    never has). Text outside any span is not drawn so: the theme colours ``pre`` itself."""
    import tinycss2

    base: dict[str, str] = {}
    tokens: dict[str, dict[str, list[tuple[str, str]]]] = {}
    named_elsewhere: set[str] = set()

    def visit(rules) -> None:
        for rule in rules:
            if rule.type == "at-rule" and rule.content is not None and rule.lower_at_keyword in GROUPING:
                visit(tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True))
                continue
            if rule.type != "qualified-rule":
                continue
            declarations = [(d.lower_name, tinycss2.serialize(d.value).strip())
                            for d in tinycss2.parse_declaration_list(rule.content, skip_comments=True,
                                                                     skip_whitespace=True)
                            if d.type == "declaration"]  # fmt: skip
            for selector in _selectors(tinycss2.serialize(rule.prelude)):
                if (found := CODE_BASE.match(selector)) is not None:
                    colour = dict(declarations).get("color")
                    if colour:
                        base[found.group(1)] = colour.lower()
                elif (found := CODE_TOKEN.match(selector)) is not None:
                    tokens.setdefault(found.group(2), {}).setdefault(found.group(1), []).extend(declarations)
                else:  # a token span has one class: only a compound naming one class alone can match it
                    for compound in re.split(r"\s*[\s>+~]\s*", NESTED.sub("", selector)):
                        names = NAME.findall(compound)
                        if len(names) == 1:
                            named_elsewhere.add(names[0])

    visit(tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True))
    return {name for name, schemes in tokens.items()
            if name not in named_elsewhere
            and all(scheme in base and [(k, v.lower()) for k, v in rules] == [("color", base[scheme])]
                    for scheme, rules in schemes.items())}  # fmt: skip


def plain_code(html: str, plain: set[str]) -> str:
    """``html`` whose code blocks hold each run of ``plain`` tokens in one span instead of one each.

    Code cells are most of a chapter's elements (3,455 of multi-head's 7,300 are token spans, nearly
    two thirds of them names and punctuation drawn alike), each styled and laid out by a phone at
    every layout. The plain tokens of a run, and the blanks between them, share one span of the
    first token's class: the same colour as before (a blank has none to show)."""
    if not plain:
        return html

    def merge(code: str) -> str:
        out: list[str] = []
        run: list[str] = []  # the texts of the current run: plain tokens and the blanks between them
        first = ""  # the class of its first token
        for found in CODE_ITEM.finditer(code):
            name, text, raw = found.group(1), found.group(2), found.group(3)
            if name in plain or (raw is not None and not raw.strip() and run):
                first = first or name
                run.append(text if name else raw)
                continue
            if run:
                out.append(f'<span class="{first}">{"".join(run)}</span>')
                run, first = [], ""
            out.append(found.group(0))
        if run:
            out.append(f'<span class="{first}">{"".join(run)}</span>')
        return "".join(out)

    return HIGHLIGHTED.sub(lambda m: m.group(1) + merge(m.group(2)) + m.group(3), html)


def sphinx_pages(app) -> list[Path]:
    """The HTML files Sphinx wrote: every document, the index and the search page."""
    outdir = Path(app.outdir)
    names = sorted(app.env.found_docs | {"genindex", "search", "py-modindex"})
    pages = [outdir / f"{name}{app.builder.out_suffix}" for name in names]
    return [page for page in pages if page.is_file()]


def rewrite_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    joined: dict[tuple[Path, ...], str] = {}
    pages = sphinx_pages(app)
    words, prefixes = names_in_use(outdir, pages)
    plain: dict[tuple[Path, ...], set[str]] = {}  # a page's stylesheets -> their plain token classes
    for page in pages:
        html = page.read_text(encoding="utf8")
        styled = inline_stylesheets(html, page, outdir, joined, lambda css: prune_css(css, words, prefixes))
        files = linked_stylesheets(html, page)
        if files not in plain:  # once per set of stylesheets, not per folder its urls are written from
            plain[files] = plain_token_classes(joined[files]) if files else set()
        new = scripts_after_text(plain_code(styled, plain[files]))
        if new != html:
            page.write_text(new, encoding="utf8")
    sizes = ", ".join(f"{len(css.encode('utf8')) // 1000} kB" for css in joined.values())
    LOGGER.info(f"first paint: {len(pages)} pages, stylesheets inline ({len(joined)} set(s): {sizes})")


def setup(app):
    # After the other build-finished steps that rewrite the theme's files (icon_fonts: 650).
    app.connect("build-finished", rewrite_pages, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
