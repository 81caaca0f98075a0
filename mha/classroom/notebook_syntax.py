"""What a notebook cell may hold beyond Python, run as Jupyter runs it but without a shell.

Part of the sandbox's runner (it sits next to ``runner.py`` there, and imports only the standard
library). A student's notebook holds IPython syntax the plain interpreter refuses: magics
(``%matplotlib inline``, ``%time w = f(x)``, a ``%%time`` cell), shell escapes (``!pip list``,
``files = !ls``), help lines (``np.tril?``), ``display(...)`` and ``get_ipython()`` without an
import, and ``%%writefile helpers.py`` followed by ``import helpers``. Each becomes what it does in
Jupyter, minus the shell: a shell command prints nothing and gives an empty list.
"""

import importlib.machinery
import io
import re
import tokenize

__all__ = ["strip_magics", "display", "Shell", "keep_written_module", "WrittenModules"]

# IPython's help: ``np.tril?``, ``np.tril??``, ``?np.tril`` on a line of their own.
_HELP_LINE = re.compile(r"\?{1,2}[A-Za-z_][\w.]*|[A-Za-z_][\w.]*\?{1,2}")
# A shell command's output kept in a name: ``files = !ls``.
_SHELL_ASSIGNMENT = re.compile(r"(?P<target>[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*)\s*=\s*!.*")
# A cell that writes a Python file: ``%%writefile helpers.py`` (``-a`` appends; ``%%file`` is the same).
_WRITE_FILE = re.compile(r"%%(writefile|file)\s+(?P<append>-a\s+)?(?:\./)?(?P<module>[A-Za-z_]\w*)\.py")
_WRITTEN: dict[str, str] = {}  # module name -> the source a cell wrote


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
    """The cell as plain Python: each magic, shell escape or help line becomes ``pass``, except
    ``%time statement``, which IPython runs (an assignment in it defines its name), so it stays as
    the statement, and ``name = !command``, which becomes ``name = []``."""
    magic = _magic_lines(source)
    lines = source.splitlines()
    magic |= {n for n, line in enumerate(lines, start=1) if _HELP_LINE.fullmatch(line.strip())
              or _SHELL_ASSIGNMENT.fullmatch(line.strip())}
    if not magic:
        return source
    for n in magic:
        stripped = lines[n - 1].lstrip()
        indent = lines[n - 1][: len(lines[n - 1]) - len(stripped)]
        timed = stripped.split(None, 1)
        statement = timed[1] if len(timed) == 2 and timed[0] == "%time" else "pass"
        shell = _SHELL_ASSIGNMENT.fullmatch(stripped)
        if shell:  # no shell here: the command printed nothing
            statement = f"{shell['target']} = []"
        lines[n - 1] = indent + statement
    return "\n".join(lines)


def display(*objects, **options):
    """IPython's ``display``, which a notebook has without importing it; prints nothing here."""


class Shell:
    """What ``get_ipython()`` gives a cell: magics do nothing (``time`` runs its statement), as
    :func:`strip_magics` has them, and a shell command prints nothing."""

    def __init__(self, namespace):
        self._namespace = namespace

    def run_line_magic(self, name, line, *args, **kwargs):
        if name == "time":
            exec(compile(line, "<%time>", "exec"), self._namespace)  # noqa: S102

    def run_cell_magic(self, name, line, cell, *args, **kwargs):
        if name in ("time", "timeit", "capture"):
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
    """Keep what a ``%%writefile helpers.py`` cell writes, for a later ``import helpers``.

    The cell's lines also run where the cell is (its first line is a magic, so :func:`strip_magics`
    leaves the rest as Python), as before: a notebook that uses the helpers without importing them
    keeps working too.
    """
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
