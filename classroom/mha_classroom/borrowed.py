"""Names a student's code takes from a visible test cell, and the test cells that define them.

In Jupyter a student runs the notebook from top to bottom, test cells included, so an answer may
use what a test cell above it made: "think first, then try it" invites exactly that, with the
``W_q`` and ``x`` of the test before. The grader runs only the student's own cells (the tests run
in the grader's process), so such an answer stopped there with a ``NameError`` it never showed in
the notebook. When that happens the grader runs the code again with the test cells that define
those names, each as released (hidden tests removed) at its place in the notebook; what those cells
raise is not the student's and is not reported. (A test cell the student edited is already run as
the student's code, as the notebook ran it.)
"""

from __future__ import annotations

import ast
import math
import re

from mha_classroom.release import student_source
from mha_classroom.source import Assignment
from mha_classroom.submission import untouched_test_cells

_NAME_ERROR = re.compile(r"name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")
_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp,
               ast.SetComp, ast.DictComp, ast.GeneratorExp)


def defined_names(source: str) -> set[str]:
    """The names a cell binds at its top level: assignments (unpacking too), imports, ``for`` and
    ``with`` targets, functions and classes. Names bound inside a function or a comprehension are
    that scope's own. Source that does not parse binds nothing.

    >>> sorted(defined_names("import numpy as np\\nW_q, W_k = 1, 2\\ndef f(x):\\n    y = x"))
    ['W_k', 'W_q', 'f', 'np']
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    pending: list[ast.AST] = [tree]
    while pending:
        for child in ast.iter_child_nodes(pending.pop()):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(child.name)  # its body binds its own names
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            elif isinstance(child, ast.alias):
                names.add((child.asname or child.name).split(".")[0])
            if not isinstance(child, _OWN_SCOPES):
                pending.append(child)
    return names


def loaded_names(source: str) -> set[str]:
    """Every name a cell reads, at any depth (a function body's too). Source that does not parse
    reads nothing."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def missing_name(error) -> str | None:
    """The name in a ``NameError`` report ``(type, message, ...)``, else None."""
    if not error or error[0] != "NameError":
        return None
    found = _NAME_ERROR.search(error[1])
    return found.group(1) if found else None


def borrowed_test_cells(assignment: Assignment, cells, reports: dict, answers: dict,
                        running: set[int]) -> tuple[list[tuple[int, str]], list[str]]:
    """The test cells to run with the student's code, and a note for each name they supply.

    Parameters
    ----------
    assignment : Assignment
    cells : list of (cell_type, source, grade_id)
        The submitted notebook, as :func:`mha_classroom.submission.read_notebook` returns it.
    reports : dict
        Cell number -> ``(status, error)`` from the last run; ``error`` is ``(type, message, line)``.
    answers : dict
        Probe key -> :class:`mha_classroom.probes.Answer`: a function that raised ``NameError`` when
        the tests called it may use a test cell's name too.
    running : set of int
        Numbers of the cells that already run.

    Returns
    -------
    cells : list of (number, source)
        Each defining test cell not yet running, once, at its number in the notebook: for a name
        a cell missed, the last test cell above that cell that defines it; for a name a function
        missed, the last such test cell in the notebook.
    notes : list of str
    """
    tests = {test.grade_id: test for test in assignment.tests}
    defines: dict[int, tuple[str, str, set[str]]] = {}  # number -> (grade_id, released source, names)
    own: dict[int, set[str]] = {}  # the student's own code cells -> the names each binds
    untouched = untouched_test_cells(assignment, cells)
    for number, (kind, source, grade_id) in enumerate(cells, start=1):
        if kind != "code":
            continue
        if number not in untouched:  # an edited test cell runs as the student's code
            own[number] = defined_names(source)
        elif all(grade_id != seen for seen, _, _ in defines.values()):  # a copy runs once
            released = student_source(tests[grade_id])
            defines[number] = (grade_id, released, defined_names(released))
    # (name, the cell that needed it): a cell stopped on one name, but it may read others that test
    # cells define too (x and W_q from the test above): all of them at once, or a run per name
    needs: list[tuple[str | None, float]] = []
    for number, (_, error) in sorted(reports.items()):
        name = missing_name(error)
        if name and any(name in names for _, _, names in defines.values()):
            source = cells[number - 1][1] if number <= len(cells) else ""
            ours = set().union(*(names for n, names in own.items() if n < number))  # np, helpers...
            needs += [(other, number) for other in sorted(loaded_names(source) - ours | {name})]
    needs += [(missing_name(answer.exc), math.inf) for answer in answers.values()
              if answer.status == "raised"]
    chosen: dict[int, list[tuple[str, float]]] = {}  # test cell -> (name, the cell that needed it)
    for name, before in needs:
        above = [number for number, (_, _, names) in defines.items() if number < before and name in names]
        if not name or not above:
            continue
        source = max(above)  # the last test cell above that defines it, unless the student's own
        if any(source < number < before and name in names for number, names in own.items()):
            continue  # code redefines it in between, as the notebook would have it
        if (name, before) not in chosen.get(source, []):
            chosen.setdefault(source, []).append((name, before))
    added = sorted(number for number in chosen if number not in running)
    notes = []
    for number in added:
        for who in sorted({who for _, who in chosen[number]}):
            names = sorted(name for name, needed_by in chosen[number] if needed_by == who)
            listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
            notes.append(f"{'a function of yours' if who == math.inf else f'cell {who}'} uses {listed}, "
                         f"which the test cell {defines[number][0]!r} (cell {number}) defines: as in "
                         "your notebook, the grader ran that test cell (as released) "
                         + ("at its place" if who == math.inf else "before it"))
    return [(number, defines[number][1]) for number in added], notes
