"""Optional dependencies: a missing one is named with the one command that installs it."""

from __future__ import annotations

import importlib.util

__all__ = ["MissingExtra", "require"]


class MissingExtra(ImportError):
    """An optional part of the package was used without its dependencies installed.

    An :class:`ImportError`, so code that already catches those catches it too.

    Examples
    --------
    >>> issubclass(MissingExtra, ImportError)
    True
    """


def require(part: str, extra: str, *modules: str) -> None:
    """Raise :class:`MissingExtra` with an install hint unless every module in ``modules`` is importable.

    Parameters
    ----------
    part : str
        What needs the modules, as the message names it, e.g. ``"mha.widgets"``.
    extra : str
        The package extra that installs them, e.g. ``"widgets"``.
    *modules : str
        Importable names to look for (nothing is imported).

    Raises
    ------
    MissingExtra
        Some of ``modules`` cannot be found; the message names them and the ``pip install`` command.

    Examples
    --------
    >>> require("mha.anything", "extra", "numpy")
    >>> try:
    ...     require("mha.widgets", "widgets", "surely_not_installed_module")
    ... except MissingExtra as error:
    ...     print(str(error).replace(" (", "\\n("))
    mha.widgets needs surely_not_installed_module: pip install "mha-course[widgets]"
    (in a clone of the course: pip install -e ".[widgets]")
    """
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtra(f"{part} needs {', '.join(missing)}: pip install \"mha-course[{extra}]\" "
                           f"(in a clone of the course: pip install -e \".[{extra}]\")")
