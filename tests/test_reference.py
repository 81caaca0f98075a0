"""The reference documents every call of the core: each public function, class, ``__call__`` and public
method of ``mha/*.py``, ``mha.grad`` and ``mha.fast`` has numpydoc Parameters (every parameter named),
Returns, Raises where it can raise, and Examples that run as doctests; the API pages ask autodoc for
``__call__`` beside a summary table; the Python and NumPy names in signatures link out.

numpydoc's own validator (``numpydoc.validate``) checks the Parameters, Returns and Examples; whether a
call can raise is read from the code: a ``raise`` in its body, or a call to a function or method of the
core that can. The book build renders what these tests check in the sources (``book/api_pages.py``).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import re
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

ROOT = Path(__file__).resolve().parent.parent
#: The core's modules: what ``import mha`` loads, in the reference's order (``book/api_pages.py``'s CORE).
CORE = ["mha.attention", "mha.masks", "mha.layers", "mha.cost", "mha.positions", "mha.efficient",
        "mha.variants", "mha.latent_attention", "mha.rope_scaling", "mha.linear_attention",
        "mha.model_configs", "mha.normalization", "mha.feed_forward", "mha.block", "mha.grad",
        "mha.grad.attention", "mha.grad.block", "mha.grad.linear", "mha.grad.loss", "mha.grad.normalization",
        "mha.frameworks", "mha.module", "mha.validation", "mha.extras", "mha.typing", "mha.fast",
        "mha.fast.threads", "mha.fast.tiles"]
SECTIONS = ("Parameters", "Returns", "Raises", "Examples")
#: numpydoc's checks that make a call documented: a docstring, every parameter and no unknown one,
#: a Returns section for what returns something, an Examples section.
CHECKS = {"GL08", "PR01", "PR02", "RT01", "EX01"}


def sections(docstring: str | None) -> set[str]:
    """The numpydoc section titles of a docstring (a title underlined with dashes)."""
    return set(re.findall(r"^\s*(\w+)\s*\n\s*-{3,}\s*$", inspect.cleandoc(docstring or ""), re.M))


def _own_names(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return [n for n in names if getattr(getattr(module, n), "__module__", None) == module.__name__]


def public_calls() -> Iterator[tuple[str, Any, str]]:
    """(dotted name, object, kind) for every public call of the core; kind is function, class, method
    or property. Methods are those a class defines itself (an inherited one is documented on its base)."""
    for module_name in CORE:
        module = importlib.import_module(module_name)
        for name in _own_names(module):
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                yield f"{module_name}.{name}", obj, "function"
            elif inspect.isclass(obj):
                yield f"{module_name}.{name}", obj, "class"
                for member, value in vars(obj).items():
                    if member.startswith("_") and member != "__call__":
                        continue
                    if isinstance(value, property):
                        yield f"{module_name}.{name}.{member}", value, "property"
                    elif inspect.isfunction(inspect.unwrap(getattr(value, "__func__", value))):
                        yield f"{module_name}.{name}.{member}", getattr(obj, member), "method"


CALLS = list(public_calls())


def _function_of(obj: Any) -> Callable[..., Any] | None:
    """The Python function whose code runs for ``obj`` (a class: its own ``__init__``)."""
    if inspect.isclass(obj):  # a dataclass's __init__ is generated: its checks are in __post_init__
        function = vars(obj).get("__post_init__") or vars(obj).get("__init__")
    else:
        function = inspect.unwrap(getattr(obj, "__func__", obj))
    written = inspect.isfunction(function) and Path(function.__code__.co_filename).is_file()
    return function if written else None


def _is_core(obj: Any, modules: set[str] = set(CORE)) -> bool:  # noqa: B006 - read only
    return getattr(obj, "__module__", None) in modules


def _callee(node: ast.expr, function: Callable[..., Any], owner: type | None) -> Any:
    """The object a call's callee names: a module global, ``module.attr``, ``self.method``, ``cls(...)``."""
    namespace = function.__globals__
    if isinstance(node, ast.Name):
        return owner if node.id == "cls" else namespace.get(node.id, getattr(builtins, node.id, None))
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        base = node.value.id
        if base in ("self", "cls") and owner is not None:
            return inspect.getattr_static(owner, node.attr, None)
        target = namespace.get(base)
        if inspect.ismodule(target) or inspect.isclass(target):
            return getattr(target, node.attr, None)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call) and owner is not None \
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "super":
        return next((vars(base)[node.attr] for base in owner.__mro__[1:] if node.attr in vars(base)), None)
    return None


@functools.cache
def can_raise(obj: Any, owner: type | None = None) -> bool:
    """Whether calling ``obj`` can raise an error the core raises: a ``raise`` in its code, or a call of a
    core function, class or method that can (followed through ``self.``, ``cls.``, ``super().`` and
    module attributes). ``assert`` does not count: it guards what cannot happen."""
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    if inspect.isclass(obj):
        owner = obj
    function = _function_of(obj)
    if function is None:
        return False
    if owner is None and "." in function.__qualname__:
        owner = getattr(inspect.getmodule(function), function.__qualname__.split(".")[0], None)
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call):
            callee = _callee(node.func, function, owner)
            if callee is not None and callee is not obj and _is_core(callee if not isinstance(
                    callee, staticmethod | classmethod) else callee.__func__):
                if can_raise(callee, callee if inspect.isclass(callee) else owner if
                             _defined_on(callee, owner) else None):
                    return True
    return False


def _defined_on(callee: Any, owner: type | None) -> bool:
    return owner is not None and any(callee in vars(base).values() for base in owner.__mro__)


def _ids(calls: list[tuple[str, Any, str]]) -> list[str]:
    return [name for name, _, _ in calls]


DOCUMENTED = [call for call in CALLS if call[2] != "property"]


@pytest.mark.parametrize(("name", "obj", "kind"), DOCUMENTED, ids=_ids(DOCUMENTED))
def test_every_core_call_documents_its_parameters_returns_and_an_example(name, obj, kind):
    errors = [f"{code}: {message}" for code, message in numpydoc_validate.validate(name)["errors"]
              if code in CHECKS]
    assert errors == [], f"{name}: {errors}"


@pytest.mark.parametrize(("name", "obj", "kind"), DOCUMENTED, ids=_ids(DOCUMENTED))
def test_every_core_call_that_can_raise_says_what_and_when(name, obj, kind):
    documented = "Raises" in sections(obj.__doc__)
    if can_raise(obj):
        assert documented, f"{name} can raise (a raise in its code or a check it calls): add a Raises section"
    if documented:
        raised = re.search(r"^Raises\n-+\n(.*?)(?:\n\n\S|\Z)", inspect.cleandoc(obj.__doc__), re.S | re.M)
        assert raised is not None
        named = re.findall(r"^(\w+)\s*$", raised.group(1), re.M)
        assert named, f"{name}'s Raises section names no exception"
        for exception in named:
            found = getattr(builtins, exception, None) or getattr(inspect.getmodule(obj), exception, None)
            assert isinstance(found, type) and issubclass(found, Exception), f"{name} raises {exception}?"


@pytest.mark.parametrize(("name", "obj", "kind"), DOCUMENTED, ids=_ids(DOCUMENTED))
def test_every_example_is_a_doctest(name, obj, kind):
    doc = inspect.cleandoc(obj.__doc__ or "")
    example = doc.split("Examples\n--------\n", 1)[-1]
    assert ">>> " in example, f"{name}'s Examples hold no doctest (>>> lines) for pytest to run"


PROPERTIES = [call for call in CALLS if call[2] == "property"]


@pytest.mark.parametrize(("name", "obj", "kind"), PROPERTIES, ids=_ids(PROPERTIES))
def test_every_property_says_what_it_holds(name, obj, kind):
    assert (obj.__doc__ or "").strip(), f"{name} has no docstring"


def test_the_walk_finds_the_calls_people_make():
    names = {name for name, _, _ in CALLS}
    assert {"mha.layers.MultiHeadAttention.__call__", "mha.block.TransformerBlock.__call__",
            "mha.latent_attention.LatentAttention.__call__", "mha.attention.softmax",
            "mha.efficient.KVCache.append", "mha.grad.attention.multi_head_backward",
            "mha.fast.tiles.attend_tiles", "mha.frameworks.FrameworkWeights.from_torch_state_dict",
            "mha.layers.MultiHeadAttention.kv_dim"} <= names
    assert len(DOCUMENTED) >= 170


def test_the_core_list_is_every_module_import_mha_loads():
    import pkgutil

    import mha

    found = {info.name for info in pkgutil.walk_packages(mha.__path__, "mha.")
             if not any(part.startswith("_") for part in info.name.split("."))
             and info.name.split(".")[1] not in ("lab", "plotting", "explorers", "checks", "pretrained")}
    assert found == set(CORE)


def test_the_section_reader_reads_numpydoc():
    doc = "Do it.\n\n    Parameters\n    ----------\n    x : int\n\n    Raises\n    ------\n    ValueError\n"
    assert sections(doc) == {"Parameters", "Raises"}


def test_the_raise_reader_sees_a_raise_a_check_it_calls_and_a_method_through_self(tmp_path, monkeypatch):
    (tmp_path / "toy_core.py").write_text(textwrap.dedent("""
        def checked(x):
            if x < 0:
                raise ValueError("x must be >= 0")
            return x
        def door(x):
            return checked(x) + 1
        def quiet(x):
            assert x >= 0
            return x + 1
        class Layer:
            def __init__(self, n):
                self.n = n
            def __call__(self, x):
                return self._inner(x)
            def _inner(self, x):
                return checked(x)
        class Checked(Layer):
            def __init__(self, n):
                super().__init__(n)
                door(n)
    """), encoding="utf8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(globals()["_is_core"], "__defaults__", ({*CORE, "toy_core"},))
    toy = importlib.import_module("toy_core")
    can_raise.cache_clear()
    try:
        assert can_raise(toy.checked) and can_raise(toy.door) and can_raise(toy.Checked)
        assert not can_raise(toy.quiet) and not can_raise(toy.Layer)
        assert can_raise(toy.Layer.__call__)
    finally:
        can_raise.cache_clear()


def test_the_raise_reader_finds_the_layer_s_checks_and_the_annex_s_trust():
    from mha import fast
    from mha.layers import MultiHeadAttention

    assert can_raise(MultiHeadAttention.__call__) and can_raise(MultiHeadAttention)
    assert not can_raise(fast.worth_it)  # a size test on numbers the door computed


def test_the_pages_ask_for_call_and_open_with_a_summary_table():
    from book.api_pages import pages

    written = pages()
    layers = written["layers.md"]
    assert ":special-members: __call__" in layers and ".. autosummary::" in layers
    assert "   MultiHeadAttention\n" in layers  # the table's row, named as the module's own
    assert all(".. autosummary::" in text for name, text in written.items() if name != "index.md")


def test_python_and_numpy_names_link_to_inventories_the_build_carries():
    config = (ROOT / "_config.yml").read_text(encoding="utf8")
    assert "sphinx.ext.intersphinx" in config and "napoleon_use_ivar: false" in config
    for name in ("python", "numpy"):
        inventory = ROOT / "book" / "inventories" / f"{name}.inv"
        assert inventory.read_bytes().startswith(b"# Sphinx inventory version 2")
        assert f"book/inventories/{name}.inv" in config
