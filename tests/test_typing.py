"""The package is typed as its users' editors and type checkers expect (PEP 561).

``make test`` runs mypy itself (strict on the core, standard on the rest: ``[tool.mypy]`` in
``pyproject.toml``). What mypy's standard mode lets pass, these tests do not: every public function and
method of every module says what it takes and what it returns, and the marker file that tells a type
checker to read those annotations ships with the package.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import mha

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> list[str]:
    """Every public module of the package (an underscore module is its own package's business)."""
    names = ["mha"]
    for info in pkgutil.walk_packages(mha.__path__, "mha."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def _public_callables(module):
    """``(qualified name, function)`` for the module's own public functions, classes' methods included."""
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name, None)
        if getattr(obj, "__module__", None) != module.__name__:
            continue  # re-exported: checked where it is defined
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in ("__init__", "__call__"):
                    continue
                if isinstance(member, classmethod | staticmethod):
                    member = member.__func__
                elif isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member) and member.__module__ == module.__name__:
                    yield f"{name}.{attr}", member


def _unannotated(function) -> list[str]:
    """The parameters (and ``return``) of ``function`` that carry no annotation."""
    missing = []
    for index, parameter in enumerate(inspect.signature(function).parameters.values()):
        if index == 0 and parameter.name in ("self", "cls"):
            continue
        if parameter.annotation is inspect.Parameter.empty:
            missing.append(parameter.name)
    if inspect.signature(function).return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


@pytest.mark.parametrize("module_name", _modules())
def test_every_public_function_and_method_is_annotated(module_name):
    module = importlib.import_module(module_name)
    missing = {name: gaps for name, function in _public_callables(module) if (gaps := _unannotated(function))}
    assert missing == {}, f"{module_name}: unannotated parameters (and returns) of public callables"


def test_the_walk_finds_the_package_s_public_callables():
    found = {name for name, _ in _public_callables(importlib.import_module("mha.layers"))}
    assert {"MultiHeadAttention.__call__", "MultiHeadAttention.decode"} <= found
    assert len(_modules()) > 60  # every module of the course layers, not only the core


def test_a_missing_annotation_is_reported():
    def careless(x, y: int = 1):
        return x

    assert _unannotated(careless) == ["x", "return"]


def test_the_package_ships_its_type_marker():
    assert (ROOT / "mha" / "py.typed").is_file()
    assert Path(mha.__file__).with_name("py.typed").is_file()  # where the installed package is
