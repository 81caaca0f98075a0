"""The layout a learner reads: the textbook code first, speed behind one door, arrows pointing inward.

Static checks on the sources (``ast``), so they hold for code nobody has run yet:

- no import cycles in the package (a package's facade counts: ``from mha.lab import x`` runs
  ``mha/lab/__init__.py``), none upward (the core never imports the course layers built on it, the
  lab never imports the plots, ...), and no module imports an underscore module of another package;
- the functions a chapter teaches compute in their own module, and reach the annex through one door;
- every ``literalinclude`` a chapter shows is public code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Layers from the bottom up: a module may import its own layer or lower ones, never a higher one.
LAYERS = [
    ("mha.typing", "mha.validation", "mha.extras", "mha.module"),  # what every layer is built on
    ("mha.fast",),  # the annex: tiles and threads, knows nothing of the textbook modules
    ("mha",),  # the textbook core: attention, masks, layers, cost, positions, efficient, block ...
    ("mha.grad", "=mha"),  # backward passes over the core's forward caches; the facade gathers the core
    ("mha.lab", "mha.checks", "mha.pretrained"),  # what the chapters run, on the core
    ("mha.plotting",),  # arrays in, figure out
    ("mha.explorers",),  # widgets around the plots
    ("mha_classroom",),  # the grader, a package of its own
]
PACKAGES = ["mha", "mha_classroom"]


def _modules() -> dict[str, Path]:
    """Every module of the packages, by dotted name (a package by its own name: its ``__init__``)."""
    found = {}
    for package in PACKAGES:
        for base in (ROOT, ROOT / "classroom"):
            for path in sorted((base / package).rglob("*.py")) if (base / package).is_dir() else []:
                parts = list(path.relative_to(base).with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts.pop()
                found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The modules of the packages that ``name`` imports, at module level or inside functions."""
    imported = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names if alias.name in MODULES}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's own package upwards
                base = name.split(".") if is_package else name.split(".")[:-1]
                source = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source in MODULES:
                imported.add(source)  # a package's facade runs whatever is taken from it
            imported |= {f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in MODULES}
    imported.discard(name)  # a facade naming its own submodules is not a cycle
    return imported


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    """The index in LAYERS of the most specific prefix that names ``module``."""
    best, best_len = None, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if prefix.startswith("="):  # this module exactly (a facade), before any prefix
                if module == prefix[1:]:
                    return index
            elif (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"{module} belongs to no layer"
    return best


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iteratively)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_checker_sees_the_whole_package():
    assert {"mha", "mha.attention", "mha.layers", "mha.fast", "mha.fast.tiles", "mha.grad.block",
            "mha.lab", "mha.plotting", "mha.explorers", "mha.checks", "mha.pretrained"} <= set(MODULES)
    assert "mha.attention" in GRAPH["mha.layers"] and "mha.fast" in GRAPH["mha.attention"]


def test_the_cycle_finder_finds_a_facade_loop():
    """What it must catch: a package's facade importing a module that imports the facade back."""
    graph = {"pkg": {"pkg.grade"}, "pkg.grade": {"pkg"}, "pkg.wire": set()}
    assert _cycles(graph) == [["pkg", "pkg.grade"]]


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def test_no_upward_imports():
    upward = [(module, imported) for module, imports in GRAPH.items() for imported in imports
              if _layer(imported) > _layer(module)]
    assert upward == []


def _private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def _source_files() -> list[Path]:
    """The code that is not a test: the packages, the book's extensions, the benchmarks, the tools."""
    files = list(MODULES.values())
    for folder in ("book", "benchmarks", "tools"):
        files += sorted((ROOT / folder).rglob("*.py")) if (ROOT / folder).is_dir() else []
    return files


def test_no_private_module_is_imported_from_another_package():
    crossings = []
    for path in _source_files():
        tree = ast.parse(path.read_text(encoding="utf8"))
        names = [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
        names += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                  and not node.level]
        importer = next((name for name, p in MODULES.items() if p == path), str(path.relative_to(ROOT)))
        for imported in names:
            if not imported.startswith(tuple(PACKAGES)) or not _private(imported):
                continue
            owner = imported.rsplit(".", 1)[0]  # the package the private module belongs to
            if not (importer == owner or importer.startswith(owner + ".")):
                crossings.append((str(path.relative_to(ROOT)), imported))
    assert crossings == []


def _private_names_imported(path: Path, importer: str) -> list[tuple[str, str]]:
    """``(module, name)`` of every underscore name ``path`` imports from another module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level and node.module != importer:
            found += [(node.module, a.name) for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


#: The grader's (classroom/, another distribution with its own owner): known, and not to grow.
GRADER_PRIVATE_IMPORTS = {("mha_classroom.probes", "_grading"), ("mha_classroom.probes", "_run_cell")}


def test_no_private_name_is_imported_from_another_module():
    """What another module needs gets a public name: ``from x import _helper`` is a reach-in."""
    crossings, grader = [], set()
    for path in _source_files():
        importer = next((name for name, p in MODULES.items() if p == path), "")
        for imported in _private_names_imported(path, importer):
            if importer.startswith("mha_classroom"):
                grader.add(imported)
            else:
                crossings.append((str(path.relative_to(ROOT)), *imported))
    assert crossings == []
    assert grader <= GRADER_PRIVATE_IMPORTS, grader - GRADER_PRIVATE_IMPORTS


def test_the_private_name_rule_sees_a_reach_in(tmp_path):
    path = tmp_path / "user.py"
    path.write_text("from mha.plotting.heads import _hidden, shown\nfrom .sibling import _ok\n")
    assert _private_names_imported(path, "mha.plotting.real_heads") == [("mha.plotting.heads", "_hidden")]


#: Course-layer modules that serve several chapters, and why they exist. Every other module of
#: mha.lab, mha.plotting, mha.explorers and mha.checks is named after the chapter it serves
#: (``chapters/<name>.md``), or starts with that name (``self_attention_one_head``).
SHARED = {
    "mha.lab": {
        "models": "the three models' base (embedding, readout, loss) and the attention-only model",
        "training": "Adam, the schedule and the loop every chapter that trains calls",
        "tasks": "synthetic tasks with known answers (induction, repeated tokens)",
        "text": "the course's prose as characters (tiny GPT, modern attention)",
        "examples": "the course's sentences and deterministic toy embeddings",
        "analysis": "what trained heads attend to, and pruning them (heads that learn, real heads)",
        "measure": "timing and peak memory, as ratios in one run",
        "prose": "numbers a cell hands to its page's prose (glue), on every chapter that quotes one",
    },
    "mha.plotting": {
        "style": "sizes, fonts, colours and the figure every plot starts from",
        "charts": "line and bar charts of measured series",
        "heads": "a grid of attention maps, one per head",
        "diagrams": "box-and-arrow diagrams of a layer, labelled with the shapes",
        "training": "training curves and pruning curves",
        "text_boxes": "where a figure's texts land, and which overprint each other or leave the canvas",
    },
    "mha.explorers": {
        "frames": "the pre-rendered frame explorer every widget is built on",
        "live": "controls that recompute in a running kernel",
        "png": "figures as small PNG frames",
        "browser": "views drawn by the page's own script, their shared payload",
        "attention_view": "the head, model and query-key views of a real model",
        "quiz": "the questions a reader answers before a solution",
        "training": "a training run's curves and snapshots, step by step",
    },
    "mha.checks": {
        "machinery": "what every check runs on: calling, comparing, naming the mistake",
        "shared": "helpers several chapters' checks use",
        "questions": "questions (choices, numbers, orders) and their grading",
        "integrity": "what the grader needs to trust a check (the package refused inside answers)",
    },
}


def _chapters() -> set[str]:
    return {p.stem for p in (ROOT / "chapters").glob("*.md")}


@pytest.mark.parametrize("package", sorted(SHARED))
def test_every_course_module_is_named_after_its_chapter_or_shared(package):
    chapters = _chapters()
    modules = [name.rsplit(".", 1)[1] for name in MODULES if name.startswith(package + ".")]
    unplaced = [m for m in modules if m not in SHARED[package] and m not in chapters
                and not any(m.startswith(chapter + "_") for chapter in chapters)]
    assert unplaced == [], f"{package}: name these after their chapter, or list them in SHARED with a reason"
    assert set(SHARED[package]) <= set(modules), "SHARED lists modules that no longer exist"


def test_the_chapter_map_names_no_module_twice():
    """``diagram`` beside ``diagrams``: one name per concept across the course layers."""
    stems = [name.rsplit(".", 1)[1] for name in MODULES if name.startswith(tuple(SHARED))]
    near = {s for s in stems if s + "s" in stems or (s.endswith("s") and s[:-1] in stems)}
    assert near == set()


def test_the_core_has_no_private_modules():
    core = [p.name for p in (ROOT / "mha").glob("_*.py") if p.name != "__init__.py"]
    assert core == []


# ------------------------------------------------------------------------------------------ the textbook
def _function_source(path: Path, qualname: str) -> str:
    tree = ast.parse(path.read_text(encoding="utf8"))
    scopes = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    first, *rest = qualname.split(".")
    node = scopes[first]
    for part in rest:  # the last definition of the name: the implementation after its @overload stubs
        node = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == part][-1]
    return ast.get_source_segment(path.read_text(encoding="utf8"), node)


@pytest.mark.parametrize(("module", "function", "arithmetic"), [
    ("attention", "softmax", ["np.exp(", "x.max("]),
    ("attention", "scaled_dot_product_attention", ["check_qkv(", "attention_forward("]),
    ("attention", "attention_forward", ["q @ np.swapaxes(k, -1, -2)", "softmax(", "weights @ v"]),
    ("attention", "split_heads", ["reshape(", "swapaxes("]),
    ("efficient", "chunked_attention", ["np.exp(", "@ v[", "rescale"]),
    ("layers", "MultiHeadAttention._attend",  # the head split as two shape-commented lines, then the formula
     ["q.reshape(batch, seq_q, self.n_heads, d_head).swapaxes(1, 2)  # (batch, n_heads, seq_q, d_head)",
      "attention_forward(", "context.swapaxes(1, 2).reshape(batch, seq_q, self.d_model)"]),
    ("layers", "MultiHeadAttention.project", ["check_layer_inputs(", "self._project("]),
    ("layers", "MultiHeadAttention._project", ["self._W_qkv", "linear("]),
    ("masks", "sliding_window_mask", ["behind < window", "is_sink"]),
    ("variants", "ModernAttention.prepare", ["rms_norm(", "apply_rotary(", "attention_factor"]),
    ("latent_attention", "LatentAttention.__call__",
     ["scaled_dot_product_attention(", "self.heads(self.W_uk)", "self.heads(self.W_uv)"]),
    ("linear_attention", "linear_attention_recurrent", ["S = S + ", "z = z + "]),
])
def test_the_function_a_learner_calls_holds_its_arithmetic(module, function, arithmetic):
    source = _function_source(ROOT / "mha" / f"{module}.py", function)
    missing = [piece for piece in arithmetic if piece not in source]
    assert missing == [], f"{module}.{function} no longer shows {missing}"


@pytest.mark.parametrize(("module", "doors"), [("attention", 1), ("efficient", 1), ("layers", 1)])
def test_the_textbook_reaches_the_annex_through_one_door_per_module(module, doors):
    """One ``fast.worth_it`` test per module, and nothing else of the annex but what the door leads to."""
    source = (ROOT / "mha" / f"{module}.py").read_text(encoding="utf8")
    assert source.count("fast.worth_it(") == doors
    uses = set(re.findall(r"\bfast\.(\w+)", source))
    assert uses <= {"worth_it", "attention", "chunked_attention", "per_example", "weighted_heads"}, uses


def test_chapters_show_only_public_code():
    shown = []
    for chapter in sorted((ROOT / "chapters").glob("*.md")):
        text = chapter.read_text(encoding="utf8")
        for match in re.finditer(r"```\{literalinclude\} (\S+)\n((?::[^\n]*\n)*)", text):
            target, options = match.group(1), match.group(2)
            pyobject = re.search(r":pyobject: (\S+)", options)
            module = Path(target).with_suffix("").parts
            names = list(module) + (pyobject.group(1).split(".") if pyobject else [])
            shown.append((chapter.name, target, pyobject.group(1) if pyobject else None))
            private = [n for n in names if n.startswith("_") and not n.startswith("__") and n != ".."]
            assert private == [], f"{chapter.name} shows private code: {target} {options}"
    assert len(shown) >= 8  # the check looked at the chapters' listings


def _docstring_lines(source: str) -> set[int]:
    """Line numbers of the module's, classes' and functions' docstrings."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def test_every_core_module_stays_short_enough_to_read():
    """At most 350 lines of code each (docstrings aside: they are the reference, with a Parameters,
    Returns, Raises and Examples section per public call) and 800 lines in all (validation.py's 22
    public checks take about 20 lines of numpydoc each)."""
    long = {}
    for path in (ROOT / "mha").rglob("*.py"):
        source = path.read_text(encoding="utf8")
        total = len(source.splitlines())
        code = total - len(_docstring_lines(source))
        if code > 350 or total > 800:
            long[str(path.relative_to(ROOT))] = (code, total)
    assert long == {}


def test_the_length_rule_sees_docstrings():
    source = 'def f():\n    """One.\n\n    Two.\n    """\n    return 1\n'
    assert _docstring_lines(source) == {2, 3, 4, 5}
