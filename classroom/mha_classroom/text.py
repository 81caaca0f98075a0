"""Text from a submission, made safe to show: invisible characters made visible, host paths removed.

A student's error message, cell source or file name may hold terminal escapes (``ESC[2K`` erases
a line of ``cat grades.csv``), bidirectional overrides (``U+202E`` turns ``deliaf`` into
``failed``), zero-width characters (two ids that look the same), NUL bytes (``grep`` then calls
the file binary), or the grader's own folders (a run can read ``/proc/self/mountinfo``).
:func:`visible` writes every control, format, separator, surrogate, private-use or unassigned
character as a backslash escape (newlines and tabs stay, for the callers that keep lines);
:func:`without_paths` replaces the grader's folders by ``…``.
"""

from __future__ import annotations

import unicodedata

__all__ = ["visible", "without_paths"]

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every invisible or control character written as an escape.

    Examples
    --------
    >>> visible("ok\\x1b[2K passed\\u202e\\u200b\\x00")
    'ok\\\\x1b[2K passed\\\\u202e\\\\u200b\\\\x00'
    >>> visible("José\\tdone\\n")
    'José\\tdone\\n'
    """
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(char) if char not in "\n\t"
                   and unicodedata.category(char) in _HIDDEN_CATEGORIES else char
                   for char in text)


def without_paths(text: str, paths: list[str]) -> str:
    """``text`` with each of ``paths`` (longest first) replaced by ``…``.

    Examples
    --------
    >>> without_paths("no /srv/venv/lib/x.so here", ["/srv/venv/lib", "/srv/venv"])
    'no …/x.so here'
    """
    for path in paths:
        if path and path in text:
            text = text.replace(path, "…")
    return text
