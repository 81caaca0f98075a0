"""MyST pages as plain Markdown, for the notebooks readers download or open in JupyterLite.

Jupyter renders CommonMark, not MyST: a chapter's ``{term}`` links, ``{cite:t}`` citations,
``{exercise}`` boxes and ``{literalinclude}`` blocks would show there as raw markup. The notebook copies
get their markdown cells through :func:`plain_markdown`, which keeps what each construct *says*:

- roles become their text: ``{term}`heads <head>``` → ``heads``, ``{doc}`shapes``` → ``shapes``,
  ``{cite:t}`vaswani2017attention``` → ``Vaswani et al. (2017)``, ``{math}`x``` → ``$x$``;
- directives become Markdown: an exercise or admonition becomes a quote headed by its title, a deep
  dive's start a quote that says it is optional and its end a closing line, a
  ``{literalinclude}`` of the package becomes the included source as a Python block, ``{math}`` a
  ``$$`` block; options (``:label:``, ``:class:`` ...) and targets (``(label)=``) are dropped.

Pure functions (text in, text out), so tests cover them without Sphinx.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["plain_markdown", "citation_labels", "fenced_body", "glued_values", "glue_file_values",
           "notebook_as_plain_markdown"]

ROLE = re.compile(r"\{([a-z][a-z:-]*)\}`([^`]*)`")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z][a-z:-]*)\}\s*(?P<argument>.*)$")
OPTION = re.compile(r"^\s*:[\w-]+:")
TARGET = re.compile(r"^\(\s*[^()\s]+\s*\)=\s*$")

#: Directives shown as a quote headed by their title (or, without one, by their name).
BOXES = {"admonition", "note", "tip", "hint", "important", "warning", "caution", "attention", "danger",
         "error", "seealso", "dropdown", "exercise", "solution", "solution-start", "margin", "sidebar",
         "topic"}
#: Directives whose body is dropped with them (they only mark a place).
MARKERS = {"solution-end", "tableofcontents", "bibliography", "glossary-index"}


def citation_labels(bibfile: Path) -> dict[str, tuple[str, str]]:
    """``key -> (authors, year)`` for every entry of a BibTeX file, in author-year style.

    One author gives ``"Dao"``, two ``"Milakov and Gimelshein"``, more ``"Vaswani et al."``.
    """
    from pybtex.database import parse_file

    labels = {}
    for key, entry in parse_file(str(bibfile)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [" ".join(person.last_names) or str(person) for person in people]
        if not names:
            authors = entry.fields.get("organization", key)
        elif len(names) == 1:
            authors = names[0]
        elif len(names) == 2:
            authors = f"{names[0]} and {names[1]}"
        else:
            authors = f"{names[0]} et al."
        labels[key] = (authors.replace("{", "").replace("}", ""), entry.fields.get("year", "n.d."))
    return labels


def _cite(role: str, keys: str, citations: Mapping[str, tuple[str, str]]) -> str:
    found = [citations.get(key.strip(), (key.strip(), "")) for key in keys.split(",") if key.strip()]
    if role in ("cite:t", "cite:ts"):  # textual: Vaswani et al. (2017)
        return "; ".join(f"{authors} ({year})" if year else authors for authors, year in found)
    inner = "; ".join(f"{authors}, {year}" if year else authors for authors, year in found)
    return f"({inner})"


def _glued(content: str, glued: Mapping[str, str]) -> str:
    """A ``{glue:text}`key:format``` role as the build's value, formatted as the book shows it."""
    key, _, spec = content.rpartition(":") if ":" in content else (content, "", "")
    if key not in glued:
        return f"*({key}: computed by the code)*"
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(glued[key], spec)


def _role(match: re.Match, citations: Mapping[str, tuple[str, str]], glued: Mapping[str, str]) -> str:
    role, content = match.group(1), match.group(2)
    if role in ("glue", "glue:text", "glue:any"):
        return _glued(content, glued)
    if role.startswith("cite"):
        return _cite(role, content, citations)
    if role == "math":
        return f"${content}$"
    if role in ("kbd", "code", "samp"):
        return f"`{content}`"
    explicit = EXPLICIT.match(content)
    if explicit and explicit.group("text"):
        return explicit.group("text")
    if role in ("ref", "numref", "eq"):  # a bare label: the best text is the label in words
        return content.replace("-", " ").replace("_", " ")
    if role in ("doc", "download"):  # a page name: its last part, in words
        return content.rsplit("/", 1)[-1].replace("_", " ")
    return content


def _included_source(argument: str, options: dict[str, str], page: Path | None) -> str | None:
    """The text a ``{literalinclude}`` shows: a ``:pyobject:`` of a Python file, or the file."""
    if page is None:
        return None
    path = (page.parent / argument.strip()).resolve()
    if not path.is_file():
        return None
    source = path.read_text()
    wanted = options.get("pyobject")
    if not wanted:
        return source
    tree = ast.parse(source)
    nodes, parts = tree.body, wanted.split(".")
    node = None
    for part in parts:
        node = next((n for n in nodes if getattr(n, "name", None) == part), None)
        if node is None:
            return None
        nodes = getattr(node, "body", [])
    lines = source.splitlines()
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
    return "\n".join(lines[start:node.end_lineno]) + "\n"


def _directive(name: str, argument: str, options: dict[str, str], body: str, page: Path | None,
               citations) -> str:
    if name in MARKERS:
        return ""
    if name == "deep-dive-start":  # a notebook cannot fold cells away: say where the optional part starts
        title = plain_markdown(argument, citations, page=page).strip()
        inner = plain_markdown(body, citations, page=page).strip()
        lines = [f"**Deep dive (off the core path): {title}.** On the core path, skip to the end of the "
                 "deep dive.", *([""] + inner.splitlines() if inner else [])]
        return "\n".join(f"> {line}" if line else ">" for line in lines) + "\n"
    if name == "deep-dive-end":
        return "*End of the deep dive.*\n"
    if name == "literalinclude":
        source = _included_source(argument, options, page)
        shown = re.sub(r"^(\.\./)+", "", argument.strip())  # as the reader's copy of the course names it
        where = f"`{shown}`" + (f", `{options['pyobject']}`" if "pyobject" in options else "")
        if source is None:
            return f"*(Source: {where}.)*\n"
        return f"From {where}:\n\n```python\n{source.rstrip()}\n```\n"
    if name in ("math", "latex"):
        return f"$$\n{body.strip()}\n$$\n"
    if name in ("code-block", "code", "sourcecode"):
        return f"```{argument.strip()}\n{body.rstrip()}\n```\n"
    inner = plain_markdown(body, citations, page=page).strip()
    if name in BOXES:
        title = plain_markdown(argument, citations, page=page).strip()
        heading = {"exercise": "Exercise", "solution": "Solution (try the exercise first)",
                   "solution-start": "Solution (try the exercise first)"}.get(name, name.capitalize())
        if name == "admonition" and title:
            heading = title
        elif title and name != "solution-start":  # a solution's argument is its exercise's label
            heading = f"{heading}: {title}"
        quoted = "\n".join(f"> {line}" if line else ">" for line in inner.splitlines())
        return f"> **{heading}**\n>\n{quoted}\n" if inner else f"> **{heading}**\n"
    return f"{inner}\n" if inner else ""


def fenced_body(lines: list[str], start: int, fence: str, opens) -> tuple[list[str], int]:
    """The lines of a block from ``start`` to its closing ``fence``, and the index after that fence.

    ``opens(line)`` says whether a line opens a nested block closed by the same fence: those count, so
    that a block holding another of its kind ends at its own fence.

    Examples
    --------
    >>> fenced_body(["a", "```", "b"], 0, "```", lambda line: False)
    (['a'], 2)
    """
    body, depth, i = [], 1, start
    while i < len(lines):
        if opens(lines[i]):
            depth += 1
        elif lines[i].strip() == fence:
            depth -= 1
            if depth == 0:
                return body, i + 1
        body.append(lines[i])
        i += 1
    return body, i


def _opens_directive(fence: str):
    """Whether a line opens a directive closed by ``fence`` (one nested in the block being read)."""
    return lambda line: bool((nested := FENCE.match(line)) and nested.group("fence") == fence)


def plain_markdown(text: str, citations: Mapping[str, tuple[str, str]] | None = None, *,
                   page: Path | None = None, glued: Mapping[str, str] | None = None) -> str:
    """``text`` (MyST Markdown) with every MyST role, directive and target in plain Markdown.

    Parameters
    ----------
    text : str
        A markdown cell of a MyST page.
    citations : mapping of str to (str, str), optional
        ``key -> (authors, year)``, from :func:`citation_labels`; unknown keys are shown as keys.
    page : pathlib.Path, optional
        The page's file: ``{literalinclude}`` paths are relative to it.
    glued : mapping of str to str, optional
        ``key -> text/plain`` of the values the page's cells glued (:func:`glued_values`): a
        ``{glue:text}`` role shows the value, formatted; without it, a note that the code computes it.

    Examples
    --------
    >>> citations = {"v17": ("Vaswani et al.", "2017")}
    >>> plain_markdown("Each {term}`head <attention head>` reads {cite:t}`v17`.", citations)
    'Each head reads Vaswani et al. (2017).'
    >>> print(plain_markdown("```{tip} Try it\\n:class: dropdown\\nRun **all** cells.\\n```"))
    > **Tip: Try it**
    >
    > Run **all** cells.
    """
    citations, glued = citations or {}, glued or {}
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    in_code = None  # the fence of a plain code block: its content is left alone
    while i < len(lines):
        line = lines[i]
        if in_code is not None:
            out.append(line)
            if line.strip() == in_code:
                in_code = None
            i += 1
            continue
        opening = FENCE.match(line)
        if opening is None:
            plain_fence = re.match(r"^\s*(`{3,}|~{3,})", line)
            if plain_fence:
                in_code = plain_fence.group(1)
                out.append(line)
            elif not TARGET.match(line) and not line.lstrip().startswith("% "):
                out.append(ROLE.sub(lambda m: _role(m, citations, glued), line))
            i += 1
            continue
        fence, name = opening.group("fence"), opening.group("name")
        i += 1
        options: dict[str, str] = {}
        while i < len(lines) and OPTION.match(lines[i]):
            key, _, value = lines[i].strip()[1:].partition(":")
            options[key] = value.strip()
            i += 1
        body, i = fenced_body(lines, i, fence, _opens_directive(fence))
        shown = _directive(name, opening.group("argument"), options, "\n".join(body), page, citations)
        if shown:
            out.append(shown.rstrip("\n"))
    result = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", result).strip("\n") + ("\n" if text.endswith("\n") else "")


def glued_values(nb) -> dict[str, str]:
    """``key -> text/plain`` of every value an executed notebook's cells glued (myst-nb's ``glue``)."""
    from myst_nb.ext.glue import extract_glue_data_cell

    return {key: data.data["text/plain"]
            for cell in nb.cells if cell.cell_type == "code"
            for key, data in extract_glue_data_cell(cell) if "text/plain" in data.data}


def glue_file_values(path: Path) -> dict[str, str]:
    """``key -> text/plain`` from the ``<page>.glue.json`` myst-nb writes beside an executed notebook.

    myst-nb takes the glue outputs out of the notebook it writes to ``_build/jupyter_execute`` and
    keeps them in this file; no file (a page that glues nothing) gives no values.
    """
    import json

    if not path.is_file():
        return {}
    return {key: output["data"]["text/plain"]
            for key, output in json.loads(path.read_text(encoding="utf8")).items()
            if "text/plain" in output.get("data", {})}


def notebook_as_plain_markdown(nb, citations: Mapping[str, tuple[str, str]] | None = None, *,
                               page: Path | None = None, glued: Mapping[str, str] | None = None):
    """Rewrite every markdown cell of ``nb`` (an nbformat notebook) with :func:`plain_markdown`.

    An executed notebook's glued values appear in its prose as the build computed them: ``glued``
    when given (the build's ``.glue.json``, :func:`glue_file_values`), else the glue outputs the
    notebook still holds.
    """
    glued = {**glued_values(nb), **(glued or {})}
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = plain_markdown(cell.source, citations, page=page, glued=glued)
    return nb
