"""Sphinx extension: the API reference and the chapters link to each other, with no link typed by hand.

- **Chapter to entry.** In every page outside ``api/``, the first inline code that names a public object of
  the package (```mha.chunked_attention```, ```chunked_attention(q, k, v)```,
  ```MultiHeadAttention.decode```, ```from mha.lab import trace_shapes``` names ``trace_shapes``...) links
  to its entry in the reference. The API index links every such name.
- **Entry to chapter.** Each entry of the reference says which chapter teaches it: the first chapter, in
  book order, whose text or code uses the name.
- Members a class inherits from outside the package (matplotlib's ``Artist.set``, which matplotlib
  writes onto every figure class) stay out of the reference: their docstrings are not ours.

Names resolve through Python itself: a facade's name (``mha.softmax``) links to the entry of the object it
is (``mha.attention.softmax``). A bare name links only when exactly one documented object has it.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

from docutils import nodes

from book.api_pages import CORE, LAYERS, own_names, submodules
from book.toc import toc_docnames

_NAME = re.compile(r"^(?:from\s+\S+\s+import\s+)?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\(.*\))?$", re.S)
_DOTTED = re.compile(r"\bmha(?:\.[A-Za-z_]\w*)+")
_IMPORT = re.compile(r"from\s+(mha(?:\.\w+)*)\s+import\s+\(?([\w\s,]+)\)?")
_INLINE = re.compile(r"`([^`\n]+)`")
#: Pages whose use of a name does not mean they teach it (they show how to install or grade).
_NOT_TEACHING = ("chapters/run_locally", "chapters/teachers")
#: The chapter that teaches a core module (the course layers' modules are named after theirs).
CORE_CHAPTERS = {"attention": "self_attention", "masks": "self_attention", "layers": "multi_head",
                 "cost": "cost", "positions": "positions", "efficient": "efficient_attention",
                 "fast": "efficient_attention", "normalization": "transformer_block",
                 "feed_forward": "transformer_block", "block": "transformer_block",
                 "frameworks": "frameworks", "pretrained": "real_heads"}


def documented_modules() -> list[str]:
    """Every module the reference documents, in its order."""
    names = []
    for name, _ in CORE + LAYERS:
        module = importlib.import_module(name)
        names += [name] + (submodules(module) if hasattr(module, "__path__") else [])
    return names


def _canonical(obj: Any, fallback: str) -> str:
    """The name an object is documented under: where its class or function is defined."""
    if inspect.ismodule(obj):
        return obj.__name__
    if inspect.isclass(obj) or inspect.isroutine(obj):
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        if module and qualname:
            return f"{module}.{qualname}"
    return fallback


class Names:
    """What inline code may name: bare names with one documented owner, and dotted ``mha`` paths."""

    def __init__(self) -> None:
        owners: dict[str, set[str]] = {}
        for module_name in documented_modules():
            module = importlib.import_module(module_name)
            for name in own_names(module):
                owners.setdefault(name, set()).add(_canonical(getattr(module, name), f"{module_name}.{name}"))
        self.bare = {name: next(iter(found)) for name, found in owners.items() if len(found) == 1}
        # A facade's name wins over a namesake deeper down (mha.chunked_attention, not the annex's).
        exported: dict[str, set[str]] = {}
        for facade_name in ["mha", *(name for name, _ in LAYERS), "mha.grad"]:
            facade = importlib.import_module(facade_name)
            for name in getattr(facade, "__all__", []):
                obj = getattr(facade, name)
                if not inspect.ismodule(obj):
                    exported.setdefault(name, set()).add(_canonical(obj, f"{facade_name}.{name}"))
        self.bare |= {name: next(iter(found)) for name, found in exported.items() if len(found) == 1}

    def resolve(self, text: str) -> str | None:
        """The documented name ``text`` refers to (``mha.softmax(x)`` -> ``mha.attention.softmax``)."""
        match = _NAME.match(text.strip())
        if not match:
            return None
        parts = match.group(1).split(".")
        if parts[0] == "mha":
            return self._dotted(parts)
        if parts[0] in self.bare:
            return ".".join([self.bare[parts[0]], *parts[1:]])
        return None

    @staticmethod
    def _dotted(parts: list[str]) -> str | None:
        for cut in range(len(parts), 0, -1):  # the longest prefix that imports as a module
            try:
                obj: Any = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            owner = ".".join(parts[:cut])
            for i, part in enumerate(parts[cut:]):
                if not hasattr(obj, part):
                    return None
                owner, obj = _canonical(obj, owner), getattr(obj, part)
                if i == len(parts) - cut - 1 and not (inspect.isclass(obj) or inspect.isroutine(obj)
                                                       or inspect.ismodule(obj)):
                    return f"{owner}.{part}"  # a constant, or a member documented on its class
            return _canonical(obj, ".".join(parts))
        return None


def _names_in_source(text: str) -> list[str]:
    """The candidate names a page's source uses, in the order they appear."""
    found = []
    for match in re.finditer(rf"{_IMPORT.pattern}|{_DOTTED.pattern}|{_INLINE.pattern}", text):
        chunk = match.group(0)
        imported = _IMPORT.match(chunk)
        if imported:
            found += [f"{imported.group(1)}.{name.strip()}" for name in imported.group(2).split(",")
                      if name.strip()]
        else:
            found.append(chunk.strip("`"))
    return found


def _teaching_chapter(target: str, users: list[str]) -> str:
    """Of the pages that use ``target`` (book order, chapters first), the one that teaches it: the chapter
    its module is named after (or, for the core, the chapter of :data:`CORE_CHAPTERS`) when that one
    uses it, else the first. A chapter may mention a name before the one that explains it."""
    parts = target.split(".")
    for part in parts[1:3]:  # mha.<module> or mha.<layer>.<module>
        chapter = f"chapters/{CORE_CHAPTERS.get(part, part)}"
        if chapter in users:
            return chapter
    return users[0]


def _taught_in(app, names: Names) -> dict[str, str]:
    """Documented name -> the chapter that teaches it (:func:`_teaching_chapter`)."""
    root = Path(app.srcdir)
    pages = [d for d in toc_docnames(root) if not d.startswith("api/")]
    ordered = [d for d in pages if d.startswith("chapters/") and d not in _NOT_TEACHING]
    ordered += [d for d in pages if d not in ordered]
    users: dict[str, list[str]] = {}
    for docname in ordered:
        sources = [root / f"{docname}{suffix}" for suffix in (".md", ".ipynb")]
        source = next((path for path in sources if path.is_file()), None)
        if source is None:
            continue
        for text in _names_in_source(source.read_text(encoding="utf8")):
            target = names.resolve(text)
            if target is not None and docname not in users.setdefault(target, []):
                users[target].append(docname)
    return {target: _teaching_chapter(target, pages) for target, pages in users.items()}


def _on_builder_inited(app) -> None:
    app.env.mha_api_names = Names()
    app.env.mha_taught_in = _taught_in(app, app.env.mha_api_names)


def _on_docstring(app, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Put "Taught in: <chapter>" under an entry's first paragraph.

    A constant without a ``#:`` comment would show its type's docstring (tuple's, str's, int's): it
    shows its value instead.
    """
    if what not in ("function", "class", "data", "exception"):
        return
    if what == "data" and lines and lines[0].strip() == _first_line(type(obj).__doc__):
        value = repr(obj)
        lines[:] = [f"Value: ``{value if len(value) <= 60 else value[:57] + '...'}``", ""]
    docname = getattr(app.env, "mha_taught_in", {}).get(name)
    if docname is None:
        return
    end = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    lines[end:end] = ["", f"**Taught in** :doc:`/{docname}`."]


def _first_line(doc: str | None) -> str | None:
    return inspect.cleandoc(doc).splitlines()[0].strip() if doc else None


def _skip_foreign_members(app, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """Leave out methods a class of the package inherits from a library (their docstrings are not ours)."""
    function = obj.fget if isinstance(obj, property) else obj
    if what == "class" and inspect.isroutine(function):
        module = getattr(function, "__module__", None) or ""
        if not module.startswith("mha"):
            return True
    return None


def _link_inline_code(app, doctree, docname: str) -> None:
    """Link the first inline code naming each documented object (every one on the API index)."""
    if docname.startswith("api/") and docname != "api/index":
        return
    names: Names | None = getattr(app.env, "mha_api_names", None)
    if names is None:
        return
    objects = app.env.get_domain("py").objects
    linked: set[str] = set()
    for literal in list(doctree.findall(nodes.literal)):
        if any(isinstance(a, (nodes.reference, nodes.title, nodes.literal_block, nodes.FixedTextElement))
               or a.tagname.startswith("desc") for a in _ancestors(literal)):
            continue
        target = names.resolve(literal.astext())
        entry = objects.get(target) if target else None
        if entry is None or (target in linked and docname != "api/index"):
            continue
        linked.add(target)
        uri = app.builder.get_relative_uri(docname, entry.docname) + "#" + entry.node_id
        reference = nodes.reference("", "", internal=True, refuri=uri, reftitle=target,
                                    classes=["mha-api-link"])
        literal.replace_self(reference)
        reference.append(literal)


def _resolve_alias(app, env, node, contnode):
    """A cross-reference in a docstring to a facade's name (``:func:`mha.split_heads```) finds the entry
    of the object it is (``mha.attention.split_heads``)."""
    names: Names | None = getattr(env, "mha_api_names", None)
    if names is None or node.get("refdomain") != "py":
        return None
    target = names.resolve(node.get("reftarget", ""))
    entry = env.get_domain("py").objects.get(target) if target else None
    if entry is None:
        return None
    from sphinx.util.nodes import make_refnode

    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, target)


def _ancestors(node):
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


# A signature longer than maximum_signature_line_length puts one parameter a line, as a <dl> of <dd>s
# inside the <dt>: a definition list without terms, which screen readers announce wrongly (axe's
# "definition-list" rule). The same lines as <div>s read and look the same (mha-site.css indents them).
SIGNATURE = re.compile(r'(<dt class="sig sig-object[^>]*>)(.*?)(</dt>)', re.S)


def _signature_lines_as_divs(body: str) -> str:
    def rewrite(match: re.Match) -> str:
        inner = (match.group(2).replace("<dl>", '<div class="mha-sig-params">').replace("</dl>", "</div>")
                 .replace("<dd>", '<div class="mha-sig-param">').replace("</dd>", "</div>"))
        return match.group(1) + inner + match.group(3)

    return SIGNATURE.sub(rewrite, body)


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if body and 'class="sig sig-object' in body:
        context["body"] = _signature_lines_as_divs(body)


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    app.connect("html-page-context", _on_page_context)
    # After napoleon (priority 500) has turned the numpydoc sections into reST.
    app.connect("autodoc-process-docstring", _on_docstring, priority=600)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("doctree-resolved", _link_inline_code)
    app.connect("missing-reference", _resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
