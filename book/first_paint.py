"""Sphinx extension: a page paints its text from its own bytes, waiting for no other file.

Jupyter Book's pages ask, in ``<head>``, for a dozen stylesheets (one ``@import``-ing another) and
several synchronous scripts; a browser paints nothing before it has them all (on a slow phone link,
a round trip each; figures in ``benchmarks/results/site_first_paint.md``). When the HTML build is
done this rewrites every page Sphinx wrote, parsed with BeautifulSoup, its CSS with tinycss2:

- its stylesheets, in their order, become one ``<style>`` in its ``<head>`` (``@import`` inlined,
  ``url(...)`` rebased on the page's folder), without the rules no page can match: a selector naming a
  class or id that no page and no script of the site contains is dropped (most of Bootstrap, Font
  Awesome's two thousand icons);
- its synchronous scripts in ``<head>`` (files, and the inline snippets between them that set what
  the files read) move, in their order, to the end of ``<body>``: they still run before the deferred
  scripts and ``DOMContentLoaded``, but after the text has painted. The colour-scheme snippet
  (``data-cfasync``, ``templates/layout.html``) stays: it must run before the first paint;
- in its code blocks, each run of Pygments tokens drawn alike (names and punctuation: the block's own
  colour in every scheme, read from the page's stylesheet) becomes one span instead of one per token.

A page with no stylesheet, or stylesheets naming a file the build lacks, fails the build.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)

#: The theme's colour-scheme snippet: runs before the first paint, or the page flashes.
PAINT_SCRIPT = "data-cfasync"
#: Scripts whose words keep no rule: the theme's icon script, which no page loads (``book.lean_site``;
#: it names all of Font Awesome's 1,600 icons).
UNLOADED_SCRIPTS = {"_static/scripts/fontawesome.js"}
#: Rules that hold rules (pruned inside), and the others (kept whole: fonts, keyframes, ...).
GROUPING = {"media", "supports", "layer", "container", "document"}
WORD = re.compile(r"[A-Za-z_][\w-]*")  # a word of a page or script: any of them may be a class name


def _css(text: str):
    import tinycss2

    return tinycss2.parse_stylesheet(text, skip_comments=True, skip_whitespace=True)


def _rebase(tokens, from_dir: Path, to_dir: Path) -> None:
    """Make every relative ``url()`` among ``tokens`` (and their blocks) name its file from ``to_dir``."""

    from tinycss2.serializer import serialize_string_value, serialize_url

    def moved(url: str) -> str:
        if re.match(r"(?:[a-z]+:|/|#)", url):  # data:, https:, absolute, or a fragment: as it is
            return url
        return Path(os.path.relpath((from_dir / url).resolve(), to_dir)).as_posix()

    for token in tokens or []:
        if token.type == "url":
            token.value = moved(token.value)
            token.representation = f"url({serialize_url(token.value)})"
        elif token.type == "function" and token.lower_name == "url":
            for argument in token.arguments:
                if argument.type == "string":
                    argument.value = moved(argument.value)
                    argument.representation = f'"{serialize_string_value(argument.value)}"'
        elif token.type in ("function", "() block", "[] block", "{} block"):
            _rebase(getattr(token, "arguments", None) or token.content, from_dir, to_dir)


def flat_css(path: Path, base_dir: Path, seen: frozenset[Path] = frozenset()) -> str:
    """The stylesheet at ``path``, ``@import``s inlined, ``url()``s made relative to ``base_dir``."""
    import tinycss2

    if path in seen:
        raise ValueError(f"{path}: @import loops back to itself")
    out = []
    for rule in _css(path.read_text(encoding="utf8")):
        if rule.type == "at-rule" and rule.lower_at_keyword == "charset":
            continue
        if rule.type == "at-rule" and rule.lower_at_keyword == "import":
            target = next(t for t in rule.prelude if t.type in ("url", "string", "function"))
            url = target.value if target.type != "function" else target.arguments[0].value
            imported = (path.parent / unquote(url.split("?")[0])).resolve()
            out.append(flat_css(imported, base_dir, seen | {path}))
            continue
        _rebase(rule.prelude, path.parent, base_dir)
        _rebase(rule.content, path.parent, base_dir)
        out.append(tinycss2.serialize([rule]))
    return "\n".join(out)


def names_in_use(outdir: Path, pages: list[Path]) -> tuple[set[str], tuple[str, ...]]:
    """Every word of the built pages and scripts, and the class prefixes scripts complete at run time.

    A class a script puts together (``"bs-popover-" + placement``) is not a word of any file: a
    selector naming a class that starts with such a quoted prefix (``"bs-"``) is kept. Icons are
    the exception: the icon fonts hold only the icons named in full (``book.icon_fonts``).
    """
    words: set[str] = set()
    prefixes: set[str] = set()
    for page in pages:
        words |= set(WORD.findall(page.read_text(encoding="utf8")))
    for script in [*outdir.glob("_static/**/*.js"), *outdir.glob("_images/**/*.js")]:
        if script.relative_to(outdir).as_posix() not in UNLOADED_SCRIPTS:
            text = script.read_text(encoding="utf8", errors="replace")
            words |= set(WORD.findall(text))
            prefixes |= set(re.findall(r"[\"'`]([A-Za-z_][\w-]*-)[\"'`$]", text))
    return words, tuple(sorted(prefixes - {"fa-"}))


def selectors(prelude) -> list[list]:
    """A rule's selector list as token lists, split at its top-level commas."""
    parts: list[list] = [[]]
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            parts.append([])
        else:
            parts[-1].append(token)
    return [part for part in parts if part]


def named(selector: list) -> list[str]:
    """The classes and ids a selector names outside ``:not(...)``-like functions and ``[...]``
    (a function's or attribute block's names decide nothing: they are tokens of a block)."""
    names = [token.value for token in selector if token.type == "hash"]
    names += [after.value for token, after in zip(selector, selector[1:], strict=False)
              if token.type == "literal" and token.value == "." and after.type == "ident"]  # fmt: skip
    return names


def prune_css(css: str, words: set[str], prefixes: tuple[str, ...]) -> str:
    """``css`` without the selectors that name a class or id no page or script has (see names_in_use)."""
    import tinycss2

    def keeps(selector) -> bool:  # an escaped name (\:) is kept: the words of a page are not escaped
        return "\\" in tinycss2.serialize(selector) or all(
            name in words or name.startswith(prefixes) for name in named(selector))

    def prune(rules) -> list[str]:
        out = []
        for rule in rules:
            if rule.type == "qualified-rule":
                kept = [tinycss2.serialize(part).strip() for part in selectors(rule.prelude) if keeps(part)]
                if kept:
                    out.append(f"{','.join(kept)}{{{tinycss2.serialize(rule.content).strip()}}}")
            elif rule.type == "at-rule" and rule.lower_at_keyword in GROUPING and rule.content is not None:
                inner = prune(tinycss2.parse_rule_list(rule.content, True, True))
                if inner:
                    out.append(f"@{rule.at_keyword}{tinycss2.serialize(rule.prelude)}{{{''.join(inner)}}}")
            elif rule.type == "at-rule":
                out.append(tinycss2.serialize([rule]))
        return out

    return "\n".join(prune(_css(css)))


def linked_stylesheets(soup, page: Path) -> list:
    """The ``<link rel="stylesheet">`` tags of the page's head, in order."""
    return [link for link in soup.head.find_all("link", href=True) if "stylesheet" in link.get("rel", [])]


def inline_stylesheets(soup, page: Path, outdir: Path, joined: dict, prune=lambda css: css) -> tuple:
    """Replace the head's stylesheet links by one ``<style>`` holding them all (in place); return
    the key of ``joined`` (the files, in order), which maps it to their joined and pruned text, its
    urls relative to ``outdir``: each page gets them relative to its own folder."""
    import tinycss2

    links = linked_stylesheets(soup, page)
    if not links:
        raise ValueError(f"{page}: no stylesheet in its <head>: did the theme's markup change?")
    files = tuple((page.parent / unquote(link["href"].split("?")[0])).resolve() for link in links)
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"{page}: stylesheets not in the build: {missing}")
    if files not in joined:
        css = prune("\n".join(flat_css(f, outdir.resolve()) for f in files))
        if "</style" in css.lower():
            raise ValueError(f"{page}: a stylesheet holds '</style', which would end the page's <style>")
        joined[files] = css
    if (files, page.parent) not in joined:  # the same text, its urls from this folder
        rules = _css(joined[files])
        for rule in rules:
            _rebase(rule.prelude, outdir.resolve(), page.parent.resolve())
            _rebase(rule.content, outdir.resolve(), page.parent.resolve())
        joined[files, page.parent] = "\n".join(tinycss2.serialize([rule]) for rule in rules)
    style = soup.new_tag("style", attrs={"data-mha": "first-paint"})
    style.string = f"\n{joined[files, page.parent]}\n"
    links[0].replace_with(style)
    for link in links[1:]:
        link.decompose()
    return files


def scripts_after_text(soup) -> None:
    """Move the head's parser-blocking scripts, in order, to the end of the body (in place)."""
    for script in soup.head.find_all("script"):
        kind = script.get("type", "text/javascript")
        data = kind not in ("text/javascript", "application/javascript")  # JSON, a module (deferred)
        if not (data or any(script.has_attr(name) for name in ("defer", "async", PAINT_SCRIPT))):
            soup.body.append(script.extract())


#: A code block's base colour (``.highlight``) and a token's (``.highlight .n``), under a scheme or not.
def _code_selector(selector: list) -> tuple[str, str | None] | None:
    """``(scheme, token class or None)`` when ``selector`` is ``[html[data-theme=X]] .highlight [.tok]``."""
    import tinycss2

    text = " ".join(tinycss2.serialize(selector).split())
    scheme, _, rest = text.rpartition(".highlight")
    if scheme.strip() and not re.fullmatch(r'html\[data-theme=("?)\w+\1\]\s*', scheme):
        return None
    token = rest.strip()
    if token == "":
        return scheme.strip(), None
    return (scheme.strip(), token[1:]) if re.fullmatch(r"\.[\w-]+", token) else None


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
                visit(tinycss2.parse_rule_list(rule.content, True, True))
            if rule.type != "qualified-rule":
                continue
            declarations = [(d.lower_name, tinycss2.serialize(d.value).strip().lower())
                            for d in tinycss2.parse_declaration_list(rule.content, skip_comments=True,
                                                                     skip_whitespace=True)
                            if d.type == "declaration"]  # fmt: skip
            for selector in selectors(rule.prelude):
                found = _code_selector(selector)
                if found and found[1] is None:
                    if "color" in dict(declarations):
                        base[found[0]] = dict(declarations)["color"]
                elif found:
                    tokens.setdefault(found[1], {}).setdefault(found[0], []).extend(declarations)
                else:  # a token span has one class: only a compound naming one class alone can match it
                    compound: list = []
                    for token in [*selector, None]:
                        if token is None or token.type == "whitespace" or (
                                token.type == "literal" and token.value in ">+~"):  # fmt: skip
                            if len(named(compound)) == 1:
                                named_elsewhere.add(named(compound)[0])
                            compound = []
                        else:
                            compound.append(token)

    visit(_css(css))
    return {name for name, schemes in tokens.items()
            if name not in named_elsewhere
            and all(scheme in base and rules == [("color", base[scheme])]
                    for scheme, rules in schemes.items())}  # fmt: skip


def plain_code(soup, plain: set[str]) -> None:
    """Join, in every code block, each run of ``plain`` tokens (and the blanks between them) into one
    span of the first token's class: the same colours, a fraction of the elements (in place)."""
    from bs4 import NavigableString, Tag

    for pre in soup.select("div.highlight > pre"):
        run: list = []
        for child in [*pre.children, None]:
            classes = child.get("class", []) if isinstance(child, Tag) and child.name == "span" else []
            is_plain = len(classes) == 1 and classes[0] in plain and not child.find(True)
            blank = isinstance(child, NavigableString) and not child.strip() and run
            if is_plain or blank:
                run.append(child)
                continue
            if len(run) > 1:
                run[0].string = "".join(part.get_text() for part in run)
                for part in run[1:]:
                    part.extract()
            run = []


def sphinx_pages(app) -> list[Path]:
    """The HTML files Sphinx wrote: every document, the index and the search page."""
    outdir = Path(app.outdir)
    names = sorted(app.env.found_docs | {"genindex", "search", "py-modindex"})
    return [page for page in (outdir / f"{name}{app.builder.out_suffix}" for name in names) if page.is_file()]


def rewrite_pages(app, exception) -> None:
    from bs4 import BeautifulSoup

    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    pages = sphinx_pages(app)
    words, prefixes = names_in_use(outdir, pages)
    joined: dict = {}  # the pages' stylesheets -> their text, and (stylesheets, folder) -> it from there
    plain: dict[tuple[Path, ...], set[str]] = {}  # a page's stylesheets -> their plain token classes
    for page in pages:
        soup = BeautifulSoup(page.read_text(encoding="utf8"), "html.parser")
        if soup.head.find("style", attrs={"data-mha": "first-paint"}):
            continue  # rewritten by an earlier build (Sphinx did not write it again)
        files = inline_stylesheets(soup, page, outdir, joined, lambda css: prune_css(css, words, prefixes))
        if files not in plain:  # once per set of stylesheets, not per folder its urls are written from
            plain[files] = plain_token_classes(joined[files])
        if not plain[files] and soup.select_one("div.highlight > pre span"):
            raise RuntimeError(f"{page}: code, but no plain Pygments token class in its stylesheets")
        plain_code(soup, plain[files])
        scripts_after_text(soup)
        page.write_text(str(soup), encoding="utf8")
    sizes = ", ".join(f"{len(css.encode('utf8')) // 1000} kB" for key, css in joined.items() if key in plain)
    LOGGER.info(f"first paint: {len(pages)} pages, stylesheets inline ({len(plain)} set(s): {sizes})")


def setup(app):
    # After the other build-finished steps that rewrite the theme's files (icon_fonts: 650).
    app.connect("build-finished", rewrite_pages, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
