"""The claims ledger's worker side: a chapter whose asserts are recorded instead of raised.

:func:`instrument` rewrites one code cell. Every ``assert`` becomes a call that records whether it held
and never raises, and every comparison inside it (``a > 0.95``, ``abs(x - 0.3) < 0.05``, ``0.5 < w < 0.9``,
``np.all(w < 0.51)``) also records its *margin*: how far the measured side is from failing, in the
quantity's own units (positive: the claim holds; an array compares its worst element). A run of a whole
chapter then tells, for each claim, not only that it held but by how much, which is what the ledger
compares across seeds and BLAS kernels.

:class:`Recorder` runs inside the kernel (the first cell of an instrumented notebook creates it). With a
seed other than 0 it also re-seeds the chapter: every ``numpy.random.default_rng(seed)`` the chapter or the
package creates is seeded with ``SeedSequence(seed, spawn_key=(ledger_seed,))`` instead, so the same code
draws other data and other initial weights (seed 0 is the chapter exactly as the book runs it).
"""

from __future__ import annotations

import ast
import json
import math
import operator
import os
from pathlib import Path
from typing import Any

import numpy as np

#: The name the instrumented cells call; created by :func:`setup_source`'s cell.
RECORDER = "_claims_ledger_"

OPERATORS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
             ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
PYTHON_OPERATORS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
                    "==": operator.eq, "!=": operator.ne, "in": lambda a, b: a in b,
                    "not in": lambda a, b: a not in b, "is": operator.is_, "is not": operator.is_not}


def _constant(node: ast.expr) -> bool:
    """True for a number written in the source: ``0.95``, ``-1``, ``1 / 3``, ``2**10``, ``math.sqrt(16)``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, ast.BinOp):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in {"sqrt", "log"} and all(_constant(a) for a in node.args)
    return False


#: Calls through which a comparison is still what the assert claims: ``all(x > 0 for x in xs)``,
#: ``np.all(w < 0.51)``, ``(w == 0).all()``. Anywhere else (``np.sum(w == 0)``, ``w[w > 0]``) it is a mask.
CLAIM_CALLS = {"all", "any", "bool"}


def _claimed(node: ast.expr) -> list[ast.Compare]:
    """The comparisons an assert's test claims, as opposed to those it uses to compute a value."""
    if isinstance(node, ast.Compare):
        return [node]
    if isinstance(node, ast.BoolOp):
        return [c for value in node.values for c in _claimed(value)]
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in CLAIM_CALLS:
            inner = node.args[0] if node.args else getattr(node.func, "value", None)
            if isinstance(inner, ast.GeneratorExp | ast.ListComp):
                inner = inner.elt
            return _claimed(inner) if isinstance(inner, ast.expr) else []
    return []


class _Asserts(ast.NodeTransformer):
    """``assert test`` becomes ``RECORDER.claim(key, test')``; each comparison in ``test`` is recorded."""

    def __init__(self, cell: int, source: str) -> None:
        self.cell, self.source = cell, source
        self.claims: list[dict[str, Any]] = []
        self._key = ""
        self._compares = 0
        self._claimed: set[int] = set()

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        self._key = f"cell {self.cell}, line {node.lineno}"
        self._compares = 0
        self._claimed = {id(c) for c in _claimed(node.test)}
        text = ast.get_source_segment(self.source, node) or ast.unparse(node)
        self.claims.append({"key": self._key, "source": text})
        test = self.visit(node.test)
        self._key = ""
        call = ast.Call(ast.Attribute(ast.Name(RECORDER, ast.Load()), "claim", ast.Load()),
                        [ast.Constant(self.claims[-1]["key"]), test], [])
        return ast.copy_location(ast.Expr(call), node)

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        if id(node) not in self._claimed:  # outside any assert, or a mask inside one: left as it is
            return self.generic_visit(node)
        node = self.generic_visit(node)  # type: ignore[assignment]
        operands = [node.left, *node.comparators]
        calls: list[ast.expr] = []
        for left, op, right in zip(operands, node.ops, operands[1:], strict=False):
            key = f"{self._key}, comparison {self._compares}"
            self._compares += 1
            text = f"{ast.unparse(left)} {OPERATORS[type(op)]} {ast.unparse(right)}"
            calls.append(ast.Call(
                ast.Attribute(ast.Name(RECORDER, ast.Load()), "compare", ast.Load()),
                [ast.Constant(key), left, ast.Constant(OPERATORS[type(op)]), right,
                 ast.Constant(text), ast.Constant(_constant(left)), ast.Constant(_constant(right))], []))
        return calls[0] if len(calls) == 1 else ast.BoolOp(ast.And(), calls)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return node  # an assert inside a helper the chapter defines is the helper's, not a claim

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]


def instrument(source: str, cell: int) -> tuple[str, list[dict[str, Any]]]:
    """One code cell with its top-level asserts recorded; the claims it makes (key and source).

    IPython syntax (``%matplotlib inline``) is translated first, as the kernel would.
    """
    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(source)
    tree = ast.parse(python)
    rewriter = _Asserts(cell, python)
    tree = ast.fix_missing_locations(rewriter.visit(tree))
    return ast.unparse(tree), rewriter.claims


def setup_source(record_path: Path, seed: int) -> str:
    """The cell that starts an instrumented notebook: the recorder, and the re-seeding for ``seed``."""
    here = Path(__file__).resolve().parent
    return (f"import sys\nsys.path.insert(0, {str(here)!r})\nfrom ledger_instrument import Recorder\n"
            f"{RECORDER} = Recorder({str(record_path)!r}, seed={seed})\ndel Recorder")


def _margin(left: Any, op: str, right: Any) -> float | None:
    """How far ``left op right`` is from failing, in the quantity's units; None when it has no size."""
    try:
        a = np.asarray(left, dtype=float)
        b = np.asarray(right, dtype=float)
        if a.size == 0 or b.size == 0:
            return None
        if op in {"<", "<="}:
            return float(np.min(b - a))
        if op in {">", ">="}:
            return float(np.min(a - b))
        if op == "==":
            return -float(np.max(np.abs(a - b)))  # 0 when equal: any difference fails
        if op == "!=":
            return float(np.min(np.abs(a - b)))
    except (TypeError, ValueError):
        return None
    return None


def _summary(value: Any) -> Any:
    """A JSON-able picture of a compared value: a number, a short list, or its repr."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    if array.size == 0:
        return "empty"
    if array.size == 1:
        number = float(array.reshape(()))
        return number if math.isfinite(number) else repr(number)
    return {"min": float(np.nanmin(array)), "max": float(np.nanmax(array)), "size": int(array.size)}


class Recorder:
    """Collects every claim and comparison of one run; written to ``path`` as JSON after each claim."""

    def __init__(self, path: str, *, seed: int = 0) -> None:
        import threadpoolctl

        self.path, self.seed = Path(path), seed
        self.claims: dict[str, dict[str, Any]] = {}
        self.comparisons: dict[str, dict[str, Any]] = {}
        if seed:
            self._reseed(seed)
        np.ones((8, 8)) @ np.ones((8, 8))  # load BLAS before asking which kernel runs
        blas = [info for info in threadpoolctl.threadpool_info() if info.get("user_api") == "blas"]
        self.machine = {
            "kernel": blas[0].get("architecture") if blas else None,
            "threads": blas[0].get("num_threads") if blas else None,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "python": ".".join(map(str, __import__("sys").version_info[:3])),
            "numpy": np.__version__,
        }
        self._write()

    @staticmethod
    def _reseed(seed: int) -> None:
        original = np.random.default_rng

        def default_rng(entropy: Any = None) -> np.random.Generator:
            if entropy is None or isinstance(entropy, np.random.Generator | np.random.BitGenerator):
                return original(entropy)
            if isinstance(entropy, np.random.SeedSequence):
                return original(np.random.SeedSequence(entropy.entropy, spawn_key=(*entropy.spawn_key, seed)))
            return original(np.random.SeedSequence(entropy, spawn_key=(seed,)))

        np.random.default_rng = default_rng  # the package and the chapter look it up at each call

    def compare(self, key: str, left: Any, op: str, right: Any, text: str, left_constant: bool,
                right_constant: bool) -> Any:
        result = PYTHON_OPERATORS[op](left, right)
        margin = _margin(left, op, right)
        entry = self.comparisons.setdefault(key, {"text": text, "op": op, "runs": 0, "margin": None})
        entry["runs"] += 1
        if margin is not None and (entry["margin"] is None or margin < entry["margin"]):
            entry["margin"] = margin
            measured = right if left_constant and not right_constant else left
            entry["measured"] = _summary(measured)
            entry["other"] = _summary(left if measured is right else right)
        if margin is None:  # no size: record what was compared, for a ranking or an identity
            entry.setdefault("values", [])
            if len(entry["values"]) < 5:
                entry["values"].append(_summary(left))
        entry["held"] = bool(entry.get("held", True) and _truth(result))
        return result

    def claim(self, key: str, value: Any) -> None:
        entry = self.claims.setdefault(key, {"runs": 0, "held": True})
        entry["runs"] += 1
        entry["held"] = bool(entry["held"] and _truth(value))
        self._write()

    def _write(self) -> None:
        record = {"seed": self.seed, "machine": self.machine, "claims": self.claims,
                  "comparisons": self.comparisons}
        self.path.write_text(json.dumps(record, indent=1), encoding="utf8")


def _truth(value: Any) -> bool:
    try:
        return bool(value)
    except ValueError:  # an array's truth is ambiguous: the chapter's own assert would raise too
        return False
