"""The API reference's pages (``api/*.md``), written from the package itself when the book builds.

One page per public module of the core, in the order the chapters teach them, then one per course layer
(``mha.lab``, ``mha.plotting`` ...) with a section per module, named after the chapter that owns it. Each
page holds the module's docstring, a summary table and an entry per public name (its ``__all__``, or the
names it defines without a leading underscore), rendered by Sphinx's autodoc from the numpydoc docstrings.
``book.api_links`` adds the chapter that teaches each entry and the links from chapters.

As a Sphinx extension (``_config.yml``), this writes the pages when the build's configuration is read,
before Sphinx looks for its sources: they are never committed (``api/`` is git-ignored), so they cannot go
stale. ``python -m book.api_pages`` writes them without a build (to read them, or for tools that read the
table of contents' pages).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "api"

#: (module, title): the core modules in the order the chapters teach them, then what they stand on.
CORE = [
    ("mha.attention", "Softmax and scaled dot-product attention"),
    ("mha.masks", "Masks"),
    ("mha.layers", "The multi-head attention layer"),
    ("mha.cost", "Parameters, FLOPs and bytes"),
    ("mha.positions", "Position information"),
    ("mha.efficient", "Chunked attention and the KV cache"),
    ("mha.variants", "The attention step of current models"),
    ("mha.latent_attention", "Multi-head latent attention"),
    ("mha.rope_scaling", "Rotary positions past the trained context"),
    ("mha.linear_attention", "Linear attention"),
    ("mha.model_configs", "Five published models' attention"),
    ("mha.normalization", "Layer norm"),
    ("mha.feed_forward", "The feed-forward network"),
    ("mha.block", "Transformer and decoder blocks"),
    ("mha.grad", "Backward passes"),
    ("mha.frameworks", "PyTorch's and Keras's weights"),
    ("mha.module", "What every layer is built on"),
    ("mha.validation", "Input checks"),
    ("mha.extras", "Optional dependencies"),
    ("mha.typing", "Types in the signatures"),
    ("mha.fast", "The annex: tiles and threads"),
]
#: (package, title): the course's layers around the core; one page each, a section per module.
LAYERS = [
    ("mha.lab", "The lab: what the chapters run"),
    ("mha.plotting", "Plots: arrays in, figure out"),
    ("mha.explorers", "Explorers: the widgets"),
    ("mha.checks", "Checks for your own code"),
    ("mha.pretrained", "A pretrained model"),
]
#: The chapters in book order: a course layer's modules named after one come in this order.
CHAPTER_ORDER = ["self_attention", "multi_head", "shapes", "cross_attention", "cost", "positions",
                 "heads_that_learn", "efficient_attention", "modern_attention", "transformer_block",
                 "tiny_gpt", "encoder_decoder", "frameworks", "real_heads"]


def page_name(module: str) -> str:
    """``mha.feed_forward`` -> ``feed_forward`` (the file ``api/feed_forward.md``)."""
    return module.split(".", 1)[1]


def public_names(module: ModuleType) -> list[str]:
    """The names a module documents: ``__all__``, else what it defines without a leading underscore."""
    names = getattr(module, "__all__", None)
    if names is None:  # what the module's own code binds: defs, classes and assignments, not imports
        import ast

        tree = ast.parse(inspect.getsource(module))
        bound = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            bound |= {t.id for t in targets if isinstance(t, ast.Name)}
        names = [n for n in vars(module) if n in bound and not n.startswith("_")]
    return [n for n in names if not inspect.ismodule(getattr(module, n))]


def own_names(module: ModuleType) -> list[str]:
    """The public names ``module`` defines itself (a facade's re-exports are documented where they live)."""
    elsewhere = set()  # ids of the constants a package's own modules document
    for part in submodules(module) if hasattr(module, "__path__") else []:
        sub = importlib.import_module(part)
        elsewhere |= {id(getattr(sub, n)) for n in public_names(sub)}
    names = []
    for name in public_names(module):
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isroutine(obj):
            if getattr(obj, "__module__", None) == module.__name__:
                names.append(name)
        elif id(obj) not in elsewhere:
            names.append(name)
    return names


def submodules(package: ModuleType) -> list[str]:
    """A package's public modules: those named after a chapter in book order, then the shared ones."""
    import pkgutil

    found = [info.name for info in pkgutil.iter_modules(package.__path__) if not info.name.startswith("_")]
    chapters = [name for name in CHAPTER_ORDER if name in found]
    return [f"{package.__name__}.{name}" for name in chapters + sorted(set(found) - set(chapters))]


def _directive(module: ModuleType, name: str) -> str:
    obj = getattr(module, name)
    qualified = f"{module.__name__}.{name}"
    if inspect.isclass(obj):  # __call__ too: how a layer is used, with its mask, causal, bias ... options
        return (f".. autoclass:: {qualified}\n   :members:\n   :special-members: __call__\n"
                "   :show-inheritance:\n")
    if inspect.isroutine(obj):
        return f".. autofunction:: {qualified}\n"
    return f".. autodata:: {qualified}\n   :no-value:\n" if not isinstance(obj, (int, float, str)) \
        else f".. autodata:: {qualified}\n"


def _summary(module: ModuleType, names: list[str]) -> str:
    """An autosummary table of the entries below: one line per name, its docstring's first sentence."""
    if not names:
        return ""
    rows = "\n".join(f"   {name}" for name in names)  # names of the module automodule just set
    return f".. autosummary::\n   :nosignatures:\n\n{rows}\n"


def _entries(module: ModuleType, heading: str | None = None) -> str:
    """A module's docstring, a summary table, and one entry per public name, as an eval-rst block."""
    names = own_names(module)
    rst = [f".. automodule:: {module.__name__}\n", _summary(module, names)]
    rst += [_directive(module, name) for name in names]
    block = "```{eval-rst}\n" + "\n".join(r for r in rst if r) + "```\n"
    return (f"## `{heading}`\n\n" if heading else "") + block


def _page(module_name: str, title: str) -> str:
    module = importlib.import_module(module_name)
    body = [f"# `{module_name}`\n\n{title}.\n"]
    parts = submodules(module) if hasattr(module, "__path__") else []
    body.append(_entries(module))
    for part in parts:
        body.append(_entries(importlib.import_module(part), heading=part))
    return "\n".join(body)


INDEX_INTRO = """# Reading the reference

Every public function, class and constant of the package, with the shapes it takes and returns, one
page per module, in the order the chapters teach them. Each entry comes from the docstring you also get
with `help(...)` in Python, and says which chapter teaches it; in the chapters, the first mention of a
name links here.

How to read an entry: **Parameters** give each argument's type and shape in the course's names
(`batch, seq_q, seq_k, d_model, n_heads, d_head`); **Returns** what comes back; the **Examples** run
as they are (the tests run every one of them). The signatures use a few names for types, listed in
`mha.typing`: an `ArrayLike` is anything `np.asarray` takes, a `FloatArray` an array of float16, float32
or float64 (float32 in, float32 out).
"""


def _index() -> str:
    """The reference's first page: how to read it, its pages, and what ``import mha`` gives."""
    lines = [INDEX_INTRO, "## The pages\n", "| module | what it holds |", "| --- | --- |"]
    for name, title in CORE + LAYERS:
        lines.append(f"| [`{name}`]({page_name(name)}.md) | {title} |")
    lines += ["", "## What `import mha` gives you\n",
              "The core's names, importable from `mha` itself (each links to its entry):\n"]
    mha = importlib.import_module("mha")
    names = [n for n in mha.__all__ if not inspect.ismodule(getattr(mha, n))]
    lines.append(", ".join(f"`mha.{n}`" for n in names) + ".\n")
    lines += ["The course's layers load on first use; the chapters import from their facades:\n"]
    for package, _ in LAYERS:
        facade = importlib.import_module(package)
        exported = [n for n in facade.__all__ if not inspect.ismodule(getattr(facade, n))]
        shown = ", ".join(f"`{n}`" for n in exported)
        lines.append(f"- `from {package} import ...`: {shown}.")
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name under ``api/`` -> its text, for every page of the reference."""
    modules = {f"{page_name(name)}.md": _page(name, title) for name, title in CORE + LAYERS}
    return {"index.md": _index(), **modules}


#: Every generated page opens with this MyST comment: what is written here may be rewritten or removed.
MARKER = "% Written by book/api_pages.py from the package's docstrings when the book builds: edit those.\n"


def write(folder: Path = API) -> list[Path]:
    """Write the reference's pages into ``folder``; return the pages whose text changed.

    A page whose text is already current is left alone (Sphinx rereads a source whose time changed), and a
    generated page no module asks for any more is removed; a file without :data:`MARKER` is never touched.
    """
    folder.mkdir(parents=True, exist_ok=True)
    written = {name: MARKER + text for name, text in pages().items()}
    changed = []
    for name, text in written.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf8") != text:
            path.write_text(text, encoding="utf8")
            changed.append(path)
    for path in folder.glob("*.md"):
        if path.name not in written and path.read_text(encoding="utf8").startswith(MARKER):
            path.unlink()
    return changed


def _on_config_inited(app, config) -> None:
    write(Path(app.srcdir) / "api")


def setup(app):
    # When the configuration is read: before Sphinx lists its sources, after the table of contents is.
    app.connect("config-inited", _on_config_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main() -> int:
    changed = write()
    print(f"{len(pages())} pages in {API.relative_to(ROOT)}, {len(changed)} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
