"""What the sandbox's runner offers in place of a package that is not there.

Part of the runner (it sits next to ``runner.py`` in the sandbox, and imports only the standard
library). Two kinds of absence:

* **mha in the NumPy-only run.** :class:`NoMha` makes ``import mha``, ``from mha import softmax as
  reference`` and ``import mha.cost`` work, with every name a stand-in that fails only when it is
  *used* (called, or looked into): an answer cell that imports ``mha`` to compare with it still
  defines its NumPy answers, and only code that calls the package needs it. ``mha.checks``, the
  learner's own checks, imports with checks that do nothing (a check in an answer cell is feedback
  for the student, not part of the answer). :attr:`NoMha.used` notes any use.
* **IPython or matplotlib where the grader runs** (a student's kernel always has IPython, and the
  course's has matplotlib; a grader installed with ``pip install ./classroom`` may have neither).
  :class:`Inert` makes their imports work with functions that do nothing: ``display(x)`` shows
  nothing, ``fig, ax = plt.subplots()`` gives two objects whose every method does nothing.
  :attr:`Inert.used` lists the packages a cell imported that way, for a note to the student.
"""

import contextlib
import importlib.machinery

__all__ = ["NoMha", "Inert", "MISSING"]

#: What a use of ``mha`` in the NumPy-only run raises (with the name that was used).
MISSING = "No module named 'mha' ({} is not there in the NumPy-only run)"


class _Absent:
    """``mha.<name>`` in the NumPy-only run: importable, fails when used."""

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def _fail(self, *args, **kwargs):
        NoMha.used = True
        raise ModuleNotFoundError(MISSING.format(self._name), name="mha")

    __call__ = __iter__ = __len__ = __getitem__ = __bool__ = __float__ = __index__ = _fail
    __mro_entries__ = _fail  # class MyLayer(mha.MultiHeadAttention) uses it

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Absent(f"{self._name}.{name}")

    def __repr__(self):
        return f"<{self._name}: not there in the NumPy-only run>"


class _SilentCheckFailed(AssertionError):
    """Stands in for ``mha.checks.CheckFailed`` (an ``except CheckFailed:`` must still be valid)."""


def _silent_check(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "CheckFailed":
        return _SilentCheckFailed
    return lambda *args, **kwargs: contextlib.nullcontext()  # strict() is used in a with statement


def _absent_name(module_name):
    def lookup(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Absent(f"{module_name}.{name}")
    return lookup


class NoMha:
    """A meta path finder standing in for ``mha`` when the grader asks for a run without it."""

    used = False
    checks_names = ()  # mha.checks.__all__, sent by the grader: ``from mha.checks import *`` works

    def find_spec(self, name, path=None, target=None):
        if name == "mha" or name.startswith("mha."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module):
        if module.__name__ == "mha.checks" or module.__name__.startswith("mha.checks."):
            module.__getattr__ = _silent_check
            module.__all__ = list(NoMha.checks_names) if module.__name__ == "mha.checks" else []
        else:
            module.__getattr__ = _absent_name(module.__name__)
            module.__all__ = []


class _Nothing:
    """What a stand-in package's functions return: every call, attribute or item is another one,
    it iterates over nothing, and it is a context manager."""

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __getitem__(self, key):
        return self

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NOTHING = _Nothing()


def _inert_name(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _NOTHING


def _pair(*args, **kwargs):
    return _Nothing(), _Nothing()


class Inert:
    """A meta path finder that gives packages the grader lacks (``names``) inert stand-ins."""

    used: set = set()

    def __init__(self, names, shell=None, display=None):
        self.names = frozenset(names)
        self.shell, self.display = shell, display

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        top = module.__name__.partition(".")[0]
        Inert.used.add(top)
        module.__getattr__ = _inert_name
        module.__all__ = []
        if top == "IPython":
            module.get_ipython = lambda: self.shell
            module.display = self.display
        if module.__name__ in ("matplotlib.pyplot", "pylab"):
            module.subplots = _pair
        if module.__name__ == "matplotlib":
            module.use, module.rcParams = _NOTHING, {}
