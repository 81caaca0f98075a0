"""What a notebook cell may hold beyond Python, run as Jupyter runs it but without a shell.

Part of the sandbox's runner (it sits next to ``runner.py`` there, and imports only the standard
library). A student's notebook holds IPython syntax the plain interpreter refuses: magics
(``%matplotlib inline``, ``%time w = f(x)``, ``t = %timeit -o f(x)``, a ``%%time`` cell), shell
escapes (``!pip list``, ``files = !ls``), help lines (``np.tril?``), ``display(...)``, ``help(...)``
and ``get_ipython()`` without an import, cells that are not Python (``%%bash``, ``%%script false``),
and ``%%writefile helpers.py`` followed by ``import helpers``. Each becomes what it does in Jupyter,
minus the shell: a shell command prints nothing and gives an empty list.
"""

import importlib.machinery
import io
import re
import tokenize

__all__ = ["strip_magics", "display", "help", "Shell", "keep_written_module", "WrittenModules",
           "IPythonShellHook", "PYTHON_CELL_MAGICS"]

# IPython's help: ``np.tril?``, ``np.tril??``, ``?np.tril`` on a line of their own.
_HELP_LINE = re.compile(r"\?{1,2}[A-Za-z_][\w.]*|[A-Za-z_][\w.]*\?{1,2}")
# A shell command's output kept in a name: ``files = !ls``.
_SHELL_ASSIGNMENT = re.compile(r"(?P<target>[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*)\s*=\s*!.*")
# A magic's result kept in a name: ``w = %time softmax(x)``, ``t = %timeit -o f(x)``.
_MAGIC_ASSIGNMENT = re.compile(r"(?P<target>[A-Za-z_][\w.]*)\s*=\s*%(?P<magic>\w+)\s*(?P<rest>.*)")
# ``%env NAME=value`` or ``%env NAME value``: sets an environment variable.
_ENV = re.compile(r"%env\s+(?P<name>[A-Za-z_]\w*)(\s*=\s*|\s+)(?P<value>.*)")
# ``%run helpers.py``: runs a file, one a ``%%writefile`` cell wrote or one handed in.
_RUN = re.compile(r"%run\s+(?:\./)?(?P<module>[A-Za-z_]\w*)\.py\s*")
# A cell that writes a Python file: ``%%writefile helpers.py`` (``-a`` appends; ``%%file`` is the same).
_WRITE_FILE = re.compile(r"%%(writefile|file)\s+(?P<append>-a\s+)?(?:\./)?(?P<module>[A-Za-z_]\w*)\.py")
_WRITTEN: dict[str, str] = {}  # module name -> the source a cell wrote
#: Cell magics whose body is Python run in the notebook's namespace; every other one (``%%bash``,
#: ``%%html``, ``%%writefile``, ``%%script false`` ...) hands its body to something else: it never runs.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


def _magic_lines(source):
    """Line numbers (from 1) of IPython magics and shell escapes: lines that start a statement with
    ``%`` or ``!``. A line inside brackets that starts with ``%`` or ``!=`` continues an expression."""
    lines = source.splitlines()
    starts, at_start = set(), True
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NEWLINE:
                at_start = True
            elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                if at_start:
                    starts.add(token.start[0])
                at_start = False
    except (tokenize.TokenError, SyntaxError):  # e.g. an unclosed quote in a shell escape
        starts = set(range(1, len(lines) + 1))
    return {n for n in starts if n <= len(lines) and lines[n - 1].lstrip()[:1] in ("%", "!")}


def strip_magics(source):
    """The cell as plain Python: each magic, shell escape or help line becomes ``pass``, except those
    that do something Python can: ``%time statement`` runs the statement (an assignment in it defines
    its name), ``name = %time expression`` keeps the value, ``name = !command`` becomes ``name = []``,
    ``%env NAME=value`` sets it, ``%run helpers.py`` runs a module a cell wrote (or the file handed in
next to the notebook) and keeps its names. A cell magic whose
    body is not Python (:data:`PYTHON_CELL_MAGICS`) leaves nothing to run; ``%%capture out`` binds
    ``out`` to empty captured output."""
    first = source.lstrip("\n").split("\n", 1)[0].strip()
    if first.startswith("%%"):
        magic, _, arguments = first[2:].partition(" ")
        if magic not in PYTHON_CELL_MAGICS:
            return "pass"
        names = [word for word in arguments.split() if not word.startswith("-")]
        if magic == "capture" and names and names[0].isidentifier():
            source = source.replace(first, f"{names[0]} = {_CAPTURED}", 1)
    magic = _magic_lines(source)
    lines = source.splitlines()
    magic |= {n for n, line in enumerate(lines, start=1) if _HELP_LINE.fullmatch(line.strip())
              or _SHELL_ASSIGNMENT.fullmatch(line.strip()) or _MAGIC_ASSIGNMENT.fullmatch(line.strip())}
    if not magic:
        return source
    for n in magic:
        stripped = lines[n - 1].lstrip()
        indent = lines[n - 1][: len(lines[n - 1]) - len(stripped)]
        lines[n - 1] = indent + _as_python(stripped)
    return "\n".join(lines)


# What ``%%capture out`` binds: the output it captured, empty here (prints are not kept).
_CAPTURED = ("__import__('types').SimpleNamespace(stdout='', stderr='', outputs=[], "
             "show=lambda: None)")


# What ``t = %timeit -o statement`` binds: a result with no time measured (nothing is timed here).
_TIMED = ("__import__('types').SimpleNamespace(average=0.0, stdev=0.0, best=0.0, worst=0.0, "
          "all_runs=[], timings=[], loops=0, repeat=0, compile_time=0.0)")


def _as_python(line):
    """One magic, shell escape or help line (stripped) as the Python statement it stands for."""
    words = line.split(None, 1)
    if len(words) == 2 and words[0] == "%time":
        return words[1]
    if shell := _SHELL_ASSIGNMENT.fullmatch(line):  # no shell here: the command printed nothing
        return f"{shell['target']} = []"
    if kept := _MAGIC_ASSIGNMENT.fullmatch(line):
        value = {"time": kept["rest"] or "None", "timeit": _TIMED}.get(kept["magic"], "None")
        return f"{kept['target']} = {value}"
    if env := _ENV.fullmatch(line):
        return f"__import__('os').environ[{env['name']!r}] = {env['value'].strip()!r}"
    if run := _RUN.fullmatch(line):  # a module a cell wrote, or a file handed in next to the notebook
        if run["module"] in _WRITTEN:
            return f"from {run['module']} import *"
        path = f"{run['module']}.py"
        return f"globals().update(__import__('runpy').run_path({path!r}, run_name='__main__'))"
    return "pass"


def display(*objects, **options):
    """IPython's ``display``, which a notebook has without importing it; prints nothing here."""


def help(*args, **kwargs):  # noqa: A001 - the builtin ``python -S`` leaves out
    """The interpreter's ``help`` (and ``exit``, ``quit``), which the runner's ``python -S`` has not:
    prints nothing here."""


class Shell:
    """What ``get_ipython()`` gives a cell: magics do nothing (``time`` runs its statement), as
    :func:`strip_magics` has them, and a shell command prints nothing."""

    def __init__(self, namespace):
        self._namespace = namespace

    def run_line_magic(self, name, line, *args, **kwargs):
        if name == "time":
            exec(compile(line, "<%time>", "exec"), self._namespace)  # noqa: S102

    def run_cell_magic(self, name, line, cell, *args, **kwargs):
        if name in PYTHON_CELL_MAGICS:
            exec(compile(cell, f"<%%{name}>", "exec"), self._namespace)  # noqa: S102

    def system(self, *args, **kwargs):
        pass

    def getoutput(self, *args, **kwargs):
        return []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


def keep_written_module(source):
    """Keep what a ``%%writefile helpers.py`` cell writes, for a later ``import helpers`` or
    ``%run helpers.py`` (as in Jupyter, the cell itself runs nothing)."""
    first, _, body = source.lstrip("\n").partition("\n")
    written = _WRITE_FILE.fullmatch(first.strip())
    if written:
        module = written["module"]
        _WRITTEN[module] = (_WRITTEN.get(module, "") if written["append"] else "") + body + "\n"


class WrittenModules:
    """A meta path finder that imports the modules ``%%writefile`` cells wrote."""

    def find_spec(self, name, path=None, target=None):
        if name in _WRITTEN:
            return importlib.machinery.ModuleSpec(name, self, origin=f"{name}.py")
        return None

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module):
        exec(compile(_WRITTEN[module.__name__], f"{module.__name__}.py", "exec"), vars(module))  # noqa: S102


class IPythonShellHook:
    """A meta path finder after which ``from IPython import get_ipython`` gives the runner's
    :class:`Shell` (IPython's own says None outside a kernel): VS Code's snippet
    ``get_ipython().run_line_magic("load_ext", "autoreload")`` then does nothing, as it should."""

    def __init__(self, shell):
        self._shell = shell

    def find_spec(self, name, path=None, target=None):
        if name != "IPython":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        run_package, shell = spec.loader.exec_module, self._shell

        def exec_module(module):
            run_package(module)
            module.get_ipython = lambda: shell

        spec.loader.exec_module = exec_module  # this spec's own loader: nothing else changes
        return spec
