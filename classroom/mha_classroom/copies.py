"""Copy detection as evidence for the teacher, never a verdict: what matches, and how likely by chance.

A student's value answers (the numbers a predict question asks for) are compared with the right
answers of every copy of the class. One matching value proves nothing: a natural slip (``1 / D_K``
for ``sqrt(D_K) / D_K``) can land exactly on a classmate's right answer, and a value drawn from four
choices matches a quarter of the class by chance. So a match counts only when **several independent
values** agree with the same classmate's copy and not with the student's own, and when the chance
of that, **computed from the variant space** and multiplied out over the class, is small:

* values are grouped into independent *pieces*: values that read the same drawn names (``shrink``
  and ``spread`` both from ``D_K``) are one piece, since one choice decides both;
* the chance of a piece is the share of the variant space whose right answers equal what the
  student gave (every combination of the piece's draws counted, or 10,000 drawn at random when there
  are more, then rounded up), read from the solution's own formula;
* a pair's chance is the product over its matched pieces; the class's, the chance that any of the
  other copies matches that well: ``1 - (1 - p) ** others``;
* a variant cell handed in that is another student's released cell is a piece of its own, with the
  chance of drawing those numbers.

Only matches with at least :data:`MIN_PIECES` pieces and a class chance at most :data:`CLASS_CHANCE`
are listed, in ``copies.csv``, for the teacher alone: the points and the feedback never change, and
no student is told. The chance assumes an honest student's answers and the classmates' copies are
independent, which the seed makes true; it is evidence to look into, not a finding.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from types import CodeType

import numpy as np

from mha_classroom.exports import csv_text
from mha_classroom.probes import answer_names
from mha_classroom.source import Assignment, instructor_source
from mha_classroom.variants import Draw, draws, same_value, values_for

__all__ = ["CLASS_CHANCE", "MIN_PIECES", "ChanceModel", "Match", "copies_csv", "find_evidence",
           "summary_line"]

MIN_PIECES = 2
CLASS_CHANCE = 1e-3
ENUMERATE = 20_000  # a piece whose draws combine in at most this many ways is counted exactly
SAMPLES = 10_000
_MODULES = {"math": math, "np": np, "numpy": np}


@dataclass(frozen=True)
class Piece:
    """Value answers decided by the same draws: one piece of evidence."""

    names: tuple[str, ...]
    draws: tuple[str, ...]


@dataclass(frozen=True)
class Match:
    """Evidence that ``student`` handed in values of ``other``'s copy."""

    student: str
    other: str
    pieces: tuple[tuple[str, float], ...]  # (what matched, its chance)
    independent: int  # independent values among them (a variant cell's differing draws each count)
    chance: float  # for this pair
    class_chance: float  # that some other copy of the class matches this well


def _key(value: object) -> object:
    """A hashable form of an answer, numbers to 6 significant digits (as :func:`same_value`)."""
    if isinstance(value, bool | str) or value is None:
        return value
    if isinstance(value, int | float | np.number):
        return f"{float(value):.6g}"
    if isinstance(value, list | tuple | np.ndarray):
        return tuple(_key(item) for item in value)
    return repr(value)


class ChanceModel:
    """How the right answers of an assignment's value questions spread over its variant space.

    Only values the solution computes from the drawn names alone (a formula in a solution cell) get
    a chance; any other value is never counted as evidence.
    """

    def __init__(self, assignment: Assignment):
        self.draws: dict[str, Draw] = {draw.name: draw for draw in draws(assignment)}
        self.defaults = {draw.name: draw.default for draw in self.draws.values()}
        values = [name for name, kind in answer_names(assignment).items() if kind == "value"]
        self.cells: list[tuple[CodeType, tuple[str, ...]]] = []  # compiled cell, its value names
        depends: dict[str, set[str]] = {}
        for cell in assignment.cells:
            if cell.role != "solution":
                continue
            found = self._closed_form(instructor_source(cell), values)
            if found is not None:
                code, names, reads = found
                self.cells.append((code, names))
                depends.update({name: reads[name] for name in names})
        self.pieces = self._pieces(depends)
        self._spread: dict[Piece, tuple[dict, int, bool]] = {}

    def _closed_form(self, source: str, values: list[str]):
        """(code, value names, draws each reads) when the cell's statements read only draws."""
        tree = ast.parse(source)
        body = [node for node in tree.body if not isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
        reads: dict[str, set[str]] = {}
        stored: set[str] = set()
        for node in body:
            loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                     and isinstance(n.ctx, ast.Load)}
            targets = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                       and isinstance(n.ctx, ast.Store)}
            targets |= {alias.asname or alias.name.split(".")[0] for n in ast.walk(node)
                        if isinstance(n, ast.Import | ast.ImportFrom) for alias in n.names}
            for target in targets:
                reads.setdefault(target, set()).update(loads)
            stored |= targets
        names = tuple(name for name in values if name in stored)
        loaded = {n.id for node in body for n in ast.walk(node)
                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        free = loaded - stored - set(dir(builtins))
        if not names or not free <= set(self.draws) | set(_MODULES):
            return None
        for _ in range(len(reads)):  # close over names assigned from other names of the cell
            for target, loaded in reads.items():
                loaded |= {n for name in loaded & set(reads) if name != target for n in reads[name]}
        code = compile(ast.Module(body=body, type_ignores=[]), "<value answers>", "exec")
        try:  # a formula that fails on the defaults is no formula the grader can use
            exec(code, {"__builtins__": builtins, **_MODULES, **self.defaults})  # noqa: S102
        except Exception:  # noqa: BLE001
            return None
        return code, names, {name: reads[name] & set(self.draws) for name in names}

    @staticmethod
    def _pieces(depends: dict[str, set[str]]) -> tuple[Piece, ...]:
        """Group values whose draws overlap (constants are no evidence and are left out)."""
        groups: list[tuple[set[str], set[str]]] = []
        for name, used in sorted(depends.items()):
            if not used:
                continue
            joined = [g for g in groups if g[1] & used]
            names, draws_ = {name}, set(used)
            for group in joined:
                names |= group[0]
                draws_ |= group[1]
                groups.remove(group)
            groups.append((names, draws_))
        return tuple(Piece(tuple(sorted(n)), tuple(sorted(d))) for n, d in groups)

    def evaluate(self, values: dict[str, object]) -> dict[str, object]:
        """The right value answers for the drawn ``values`` (closed-form ones only)."""
        found: dict[str, object] = {}
        for code, names in self.cells:
            namespace = {"__builtins__": builtins, **_MODULES, **values}
            try:
                exec(code, namespace)  # noqa: S102 - the instructor's own formula
            except Exception:  # noqa: BLE001 - no right answer for these draws: nothing matches it
                continue
            found.update({name: namespace[name] for name in names})
        return found

    def _options(self, name: str) -> list:
        draw = self.draws[name]
        return list(range(draw.args[0], draw.args[1] + 1)) if draw.kind == "integers" else list(draw.args)

    def _size(self, name: str) -> int:
        draw = self.draws[name]
        return draw.args[1] - draw.args[0] + 1 if draw.kind == "integers" else len(draw.args)

    def spread(self, piece: Piece) -> tuple[dict, int, bool]:
        """(count of each answer tuple, combinations counted, exact) over the piece's draws."""
        if piece not in self._spread:
            total = math.prod(self._size(name) for name in piece.draws)
            combos: Iterable[tuple]
            if total <= ENUMERATE:
                combos = itertools.product(*(self._options(name) for name in piece.draws))
                exact, counted = True, total
            else:
                rng = np.random.default_rng(0)
                combos = (tuple(self._draw_one(rng, name) for name in piece.draws)
                          for _ in range(SAMPLES))
                exact, counted = False, SAMPLES
            counts: dict = {}
            for combo in combos:
                right = self.evaluate({**self.defaults, **dict(zip(piece.draws, combo, strict=True))})
                key = tuple(_key(right.get(name)) for name in piece.names)
                counts[key] = counts.get(key, 0) + 1
            self._spread[piece] = (counts, counted, exact)
        return self._spread[piece]

    def _draw_one(self, rng: np.random.Generator, name: str) -> object:
        draw = self.draws[name]
        if draw.kind == "integers":
            return int(rng.integers(draw.args[0], draw.args[1], endpoint=True))
        return draw.args[int(rng.integers(len(draw.args)))]

    def chance(self, piece: Piece, given: dict[str, object]) -> float:
        """The share of the variant space whose right answers equal ``given`` on the piece's names
        (a sampled share is rounded up: three more combinations than were seen)."""
        counts, counted, exact = self.spread(piece)
        names = [name for name in piece.names if name in given]
        seen = sum(count for key, count in counts.items()
                   if all(key[piece.names.index(n)] == _key(given[n]) for n in names))
        return seen / counted if exact else min(1.0, (seen + 3) / counted)

    def cell_chance(self, names: list[str]) -> float:
        """The chance of drawing given values for ``names`` (uniform, independent draws)."""
        return math.prod(1 / self._size(name) for name in names)

    def best_class_chance(self, others: int) -> float:
        """The smallest class chance any match of every piece could reach (the assignment's power)."""
        pair = 1.0
        for piece in self.pieces:
            counts, counted, exact = self.spread(piece)
            pair *= min(counts.values()) / counted if exact else 3 / counted
        return _class(pair, others)


def _class(pair: float, others: int) -> float:
    return -math.expm1(others * math.log1p(-min(pair, 1 - 1e-16))) if others else 0.0


def _value_pieces(model: ChanceModel, given: dict, own: dict,
                  theirs: dict) -> list[tuple[str, float, int]]:
    """The pieces on which ``given`` equals ``theirs`` and not ``own``: (names, chance, 1)."""
    found = []
    for piece in model.pieces:
        names = [name for name in piece.names if name in given]
        if not names or any(not same_value(given[n], theirs.get(n)) for n in names):
            continue
        if all(same_value(given[n], own.get(n)) for n in names):
            continue
        found.append((", ".join(names), model.chance(piece, {n: given[n] for n in names}), 1))
    return found


def _cell_piece(model: ChanceModel, cell: str | None, own: dict, theirs: dict,
                released: str) -> list[tuple[str, float, int]]:
    """The variant cell handed in, when it is the one released to the other student: its draws
    that differ from the student's own are as many independent values."""
    if cell is None or cell.strip() != released.strip():
        return []
    differ = [name for name in model.draws if own.get(name) != theirs.get(name)]
    if not differ:
        return []
    return [(f"the variant cell released to them ({', '.join(differ)})", model.cell_chance(differ),
             len(differ))]


def find_evidence(assignment: Assignment, seed: str, roster: tuple[str, ...],
                  answers: dict[str, dict[str, object]], cells: dict[str, str | None],
                  released: dict[str, str], model: ChanceModel | None = None) -> list[Match]:
    """Matches between each graded student's answers and another copy of the class.

    ``answers``: each graded student's value answers; ``cells``: the variant cell each handed in
    (None if none); ``released``: the variant cell released to each id of ``roster``.
    """
    model = model or ChanceModel(assignment)
    drawn = {s: values_for(assignment, seed, s) for s in roster}
    right = {s: model.evaluate(values) for s, values in drawn.items()}
    others = len(roster) - 1
    matches = []
    for student in sorted(answers):
        own = right.get(student, {})
        for other in roster:
            if other == student:
                continue
            pieces = _value_pieces(model, answers[student], own, right[other])
            pieces += _cell_piece(model, cells.get(student), drawn.get(student, {}), drawn[other],
                                  released[other])
            independent = sum(count for _, _, count in pieces)
            chance = math.prod(p for _, p, _ in pieces)
            if independent >= MIN_PIECES and _class(chance, others) <= CLASS_CHANCE:
                matches.append(Match(student, other, tuple((what, p) for what, p, _ in pieces),
                                     independent, chance, _class(chance, others)))
    return matches


def _odds(chance: float) -> str:
    return f"1 in {1 / chance:,.0f} ({chance:.2g})" if chance > 0 else "0"


def copies_csv(matches: list[Match]) -> str:
    """``copies.csv``: for the teacher only, the evidence of each match and its chance."""
    rows = [(m.student, m.other, "; ".join(f"{what} ({_odds(p)})" for what, p in m.pieces),
             m.independent, _odds(m.chance), _odds(m.class_chance)) for m in matches]
    return csv_text(("student", "matches_the_copy_of", "what_matches", "independent_values",
                     "chance_for_this_pair",
                     "chance_in_this_class"), rows)


def summary_line(matches: list[Match], model: ChanceModel, students: int) -> str:
    """The summary's line on copy evidence (Markdown)."""
    rule = (f"a match counts when at least {MIN_PIECES} independent values agree with one classmate's "
            f"copy and the chance of that in a class of {students} is at most 1 in "
            f"{1 / CLASS_CHANCE:,.0f}")
    if matches:
        who = sorted({m.student for m in matches})
        return (f"- copy evidence for {len(who)} submissions: {', '.join(who)}; see copies.csv ({rule}). "
                "It is evidence to look into, not a verdict: their points are as graded, and no "
                "student is told")
    best = model.best_class_chance(max(students - 1, 0))
    power = ("" if best <= CLASS_CHANCE else
             f"; with this assignment's variants, values alone can never be that unlikely (at best "
             f"{best:.2g} in this class)")
    return f"- copy evidence: none ({rule}{power})"
