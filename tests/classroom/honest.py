"""Unusual but correct notebooks, across the four assignments: each must get full marks, with
notes that say what really happened.

Each :class:`Honest` starts from the instructor's notebook (every answer right) and changes it the
way real students do: other return types, libraries a kernel has, files handed in next to the
notebook, a comparison with ``mha``, a draft left above a fix, a last cell that rebinds a name, odd
file names, IPython habits. ``notes`` are patterns the feedback's notes must match (and no other
note may appear unless ``other_notes``); ``errors`` the same for the errors in the student's own
cells.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mha_classroom.release import nbgrader_notebook
from mha_classroom.source import Assignment

Cells = list[dict]


@dataclass(frozen=True)
class Honest:
    name: str
    assignment: int  # 1 to 4
    change: Callable[[Cells], None]
    notes: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)  # .py files next to the notebook
    file_name: str = ""  # the submission's own name, when it is not <name>.ipynb
    other_notes: bool = False


def code(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": source}


def answer(cells: Cells, name: str) -> int:
    """The index of the solution cell that defines ``name``."""
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code" and (f"def {name}(" in cell["source"]
                                            or cell["source"].startswith(f"### BEGIN SOLUTION\n{name} =")):
            return index
    raise KeyError(name)


def test_cell(cells: Cells, grade_id: str) -> int:
    return next(i for i, c in enumerate(cells) if c["source"].startswith(f"# grade_id: {grade_id} "))


def replace(name: str, source: str) -> Callable[[Cells], None]:
    def change(cells: Cells) -> None:
        cells[answer(cells, name)]["source"] = source
    return change


def prepend(name: str, lines: str) -> Callable[[Cells], None]:
    def change(cells: Cells) -> None:
        cells[answer(cells, name)]["source"] = lines + cells[answer(cells, name)]["source"]
    return change


def append_cells(*sources: str) -> Callable[[Cells], None]:
    def change(cells: Cells) -> None:
        cells.extend(code(source) for source in sources)
    return change


def both(*changes: Callable[[Cells], None]) -> Callable[[Cells], None]:
    def change(cells: Cells) -> None:
        for one in changes:
            one(cells)
    return change


def draft_above_fix(name: str, draft: str, below: str) -> Callable[[Cells], None]:
    """The answer cell keeps a draft; the fixed function sits in a new cell below the test
    ``below`` (which, in the student's notebook, ran with the draft)."""
    def change(cells: Cells) -> None:
        index = answer(cells, name)
        fixed = cells[index]["source"]
        cells[index]["source"] = draft
        cells.insert(test_cell(cells, below) + 1, code(fixed))
    return change


def unchanged(cells: Cells) -> None:
    pass


SOFTMAX_STUB = "def softmax(x, axis=-1):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
NAIVE_SOFTMAX = "def softmax(x, axis=-1):\n    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)\n"
ATTENTION_BODY = '''
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = np.max(scores, axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    exps = np.exp(scores - row_max)
    sums = np.sum(exps, axis=-1, keepdims=True)
    weights = np.divide(exps, sums, out=np.zeros_like(exps), where=sums > 0)
'''
NAMEDTUPLE = ("from collections import namedtuple\nAttention = namedtuple('Attention', 'output weights')\n\n"
              "def attention(q, k, v, mask=None):" + ATTENTION_BODY
              + "    return Attention(weights @ v, weights)\n")
TYPED_NAMEDTUPLE = ("from typing import NamedTuple\n\nclass Attended(NamedTuple):\n    output: np.ndarray\n"
                    "    weights: np.ndarray\n\ndef attention(q, k, v, mask=None):" + ATTENTION_BODY
                    + "    return Attended(output=weights @ v, weights=weights)\n")
SOFTMAX = '''def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)
'''
HELPERS = '''"""My helpers for assignment 1."""
import numpy as np


def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)
'''
PLOTTING = '''import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 2, figsize=(6, 3))
weights = softmax(np.random.default_rng(0).normal(size=(4, 4)))
axes[0].imshow(weights, cmap="viridis")
axes[0].set_title("weights")
axes[1].plot(weights.sum(axis=-1))
plt.tight_layout()
plt.show()
'''
CLASS_CALLABLE = '''class SelfAttention:
    """One head, as an object a test can call."""

    def __call__(self, x, W_q, W_k, W_v, causal=False):
        q, k, v = x @ W_q, x @ W_k, x @ W_v
        mask = causal_mask(x.shape[-2]) if causal else None
        return attention(q, k, v, mask)[0]


self_attention = SelfAttention()
'''
DECORATED = '''import functools


def logged(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper


@logged
def causal_mask(seq_q, seq_k=None):
    seq_k = seq_q if seq_k is None else seq_k
    return np.tri(seq_q, seq_k, k=seq_k - seq_q, dtype=bool)
'''
LAMBDA_SOFTMAX = ("softmax = lambda x, axis=-1: (lambda e: e / e.sum(axis=axis, keepdims=True))"
                  "(np.exp(x - x.max(axis=axis, keepdims=True)))\n")
EINSUM_LAYER = '''def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads, causal=False):
    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
    if causal:
        scores = np.where(np.tri(x.shape[-2], dtype=bool), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return merge_heads(np.einsum("bhqk,bhkd->bhqd", weights, v)) @ W_o
'''
SHAPES_AS_LISTS = '''def attention_shapes(batch, seq, d_model, n_heads):
    if d_model % n_heads != 0:
        raise ValueError(f"n_heads={n_heads} does not divide d_model={d_model}")
    d_head = d_model // n_heads
    from collections import OrderedDict
    return OrderedDict(q=[batch, seq, d_model], q_heads=[batch, n_heads, seq, d_head],
                       scores=[batch, n_heads, seq, seq], concat=[batch, seq, d_model],
                       output=[batch, seq, d_model])
'''
KEYWORD_LENGTHS = "def cross_attention(x, memory, W_q, W_k, W_v, W_o, n_heads, *, lengths=None):"
COMPLEX_ROTATE = '''def rotate(x, positions):
    d_head = x.shape[-1]
    w = 10000.0 ** (-np.arange(0, d_head, 2) / d_head)
    turns = np.exp(1j * np.asarray(positions)[:, None] * w[None, :])  # (seq, d_head / 2)
    pairs = (x[..., 0::2] + 1j * x[..., 1::2]) * turns
    out = np.empty(x.shape, dtype=np.result_type(x, np.float64))
    out[..., 0::2], out[..., 1::2] = pairs.real, pairs.imag
    return out
'''
NUMPY_INTEGERS = """_count, _flops = parameter_count, attention_core_flops


def parameter_count(d_model, n_heads, d_memory=None, bias=True):
    return np.int64(_count(d_model, n_heads, d_memory, bias))


def attention_core_flops(batch, seq_q, seq_k, d_model, n_heads):
    return {key: np.int64(value) for key, value in _flops(batch, seq_q, seq_k, d_model, n_heads).items()}
"""
COMPUTED_PREDICTION = """q, k = np.random.default_rng(0).normal(size=(2, 1, 8))
before = rotate(q, np.array([3])) @ rotate(k, np.array([1])).T
after = rotate(q, np.array([13])) @ rotate(k, np.array([11])).T
same_after_shift = bool(np.isclose(before, after).all())
"""
HONEST = [
    # assignment 1
    Honest("namedtuple_answer", 1, replace("attention", NAMEDTUPLE)),
    Honest("typed_namedtuple_answer", 1, replace("attention", TYPED_NAMEDTUPLE)),
    Honest("ipython_display_import", 1, both(
        prepend("softmax", "from IPython.display import display, Markdown\n"),
        append_cells("display(Markdown('**done**'))\ndisplay(softmax(np.ones(3)))"))),
    Honest("matplotlib_import_and_plot", 1, both(
        prepend("attention", "import matplotlib.pyplot as plt\n"), append_cells(PLOTTING))),
    Honest("helpers_module", 1, replace("softmax", "from helpers import softmax\n"),
           files={"helpers.py": HELPERS}),
    Honest("helpers_module_by_run", 1, replace("softmax", "%run helpers.py\n"),
           files={"helpers.py": HELPERS}),
    Honest("mha_only_to_compare", 1, both(
        prepend("softmax", "from mha import softmax as reference\n"),
        append_cells("x = np.random.default_rng(1).normal(size=(2, 5))\n"
                     "np.testing.assert_allclose(softmax(x), reference(x))\nprint('same as mha')")),
           notes=(r"your notebook uses the mha package \(cell \d+\); your answers ran without it",)),
    Honest("stub_above_fix", 1, draft_above_fix("softmax", SOFTMAX_STUB, "softmax_stable")),
    Honest("draft_above_fix", 1, draft_above_fix("softmax", NAIVE_SOFTMAX, "softmax_rows")),
    Honest("fix_uses_the_test_cells_names", 1, both(
        draft_above_fix("softmax", NAIVE_SOFTMAX, "softmax_rows"),
        lambda cells: cells.insert(test_cell(cells, "softmax_rows") + 2,
                                   code("print(softmax(x).round(3), weights.shape)"))),
           notes=(r"uses weights and x, which the test cell 'softmax_rows' \(cell \d+\) defines",)),
    Honest("last_cell_rebinds_the_answer", 1, append_cells("softmax = softmax(np.array([1.0, 2.0]))"),
           notes=(r"a cell after cell \d+ made softmax a ndarray; the grader graded your function "
                  r"softmax as cell \d+ left it",)),
    Honest("last_cell_deletes_an_answer", 1, append_cells("del attention"),
           notes=(r"made attention nothing \(del\); the grader graded your function attention",)),
    Honest("lambda_answer", 1, replace("softmax", LAMBDA_SOFTMAX)),
    Honest("callable_object_answer", 1, replace("self_attention", CLASS_CALLABLE)),
    Honest("decorated_answer", 1, replace("causal_mask", DECORATED)),
    Honest("answers_at_the_bottom", 1, lambda cells: cells.extend(
        [cells.pop(answer(cells, name)) for name in ("softmax", "attention", "causal_mask",
                                                     "self_attention")])),
    Honest("ipython_habits", 1, both(
        prepend("softmax", "%load_ext autoreload\n%autoreload 2\n%matplotlib inline\n"),
        prepend("attention", "%%time\n"),
        append_cells("from IPython import get_ipython\nget_ipython().run_line_magic('precision', '3')\n"
                     "files = !ls\nnp.tril?\n", "import numpy as np\nnp.seterr(all='raise')\n"
                     "np.random.seed(0)\nfor i in range(20000):\n    print(i)\n"))),
    Honest("future_annotations_and_types", 1, prepend(
        "softmax", "from __future__ import annotations\nimport numpy.typing as npt\n\n"
                   "def _typed(x: npt.NDArray[np.floating]) -> npt.NDArray[np.floating]:\n"
                   "    return x\n\n")),
    Honest("saved_in_capitals", 1, unchanged, file_name="saved_in_capitals.IPYNB"),
    Honest("saved_by_a_browser", 1, unchanged, file_name="saved_by_a_browser.ipynb.txt"),
    Honest("nbgrader_layout_with_helpers", 1, replace("softmax", "from helpers import softmax\n"),
           files={"helpers.py": HELPERS},
           file_name="nbgrader_layout_with_helpers/01-self-attention/01-self-attention.ipynb"),
    # assignment 2
    Honest("einsum_layer", 2, replace("multi_head_attention", EINSUM_LAYER)),
    Honest("shapes_as_lists_in_an_ordered_dict", 2, replace("attention_shapes", SHAPES_AS_LISTS)),
    Honest("experiment_under_new_names", 2, append_cells(
        "def split_plain(x, n_heads):\n    b, s, d = x.shape\n"
        "    return x.reshape(b, n_heads, s, d // n_heads)\n"
        "print(split_plain(np.ones((1, 4, 4)), 2).shape)")),
    Honest("a2_ipython_display", 2, prepend("split_heads", "from IPython.display import display\n")),
    Honest("a2_draft_above_fix", 2, draft_above_fix(
        "merge_heads", "def merge_heads(x):\n    b, h, s, d = x.shape\n    return x.reshape(b, s, h * d)\n",
        "merge_heads")),
    # assignment 3
    Honest("keyword_only_lengths", 3, lambda cells: cells.__setitem__(
        answer(cells, "cross_attention"), {**cells[answer(cells, "cross_attention")], "source": cells[
            answer(cells, "cross_attention")]["source"].replace(
            "def cross_attention(x, memory, W_q, W_k, W_v, W_o, n_heads, lengths=None):", KEYWORD_LENGTHS)})),
    Honest("numpy_integers_everywhere", 3, append_cells(NUMPY_INTEGERS)),
    Honest("a3_matplotlib_plot", 3, append_cells(
        "import matplotlib.pyplot as plt\n"
        "plt.plot([weights_bytes(1, 1, s, s, np.float32) for s in range(8)])\n"
        "plt.xlabel('seq')\nplt.show()")),
    Honest("a3_mha_to_compare", 3, append_cells(
        "import mha\nassert np.array_equal(padding_mask([1, 3], 3), mha.padding_mask([1, 3], 3))\n"),
           notes=(r"your notebook uses the mha package \(cell \d+\)",)),
    # assignment 4
    Honest("complex_rotate", 4, replace("rotate", COMPLEX_ROTATE)),
    Honest("a4_rebinds_a_function", 4, append_cells("rotate = rotate(np.ones((2, 2)), np.arange(2))"),
           notes=(r"made rotate a ndarray; the grader graded your function rotate",)),
    Honest("a4_predictions_computed", 4, append_cells(COMPUTED_PREDICTION)),
]


def build(case: Honest, assignment: Assignment, folder: Path) -> None:
    """Write the case's submission into ``folder`` (a file, or a folder with its files)."""
    notebook = nbgrader_notebook(assignment)
    case.change(notebook["cells"])
    text = json.dumps(notebook)
    name = case.file_name or f"{case.name}.ipynb"
    if case.files and "/" not in name:
        name = f"{case.name}/{assignment.name}.ipynb"
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    for file, source in case.files.items():
        (path.parent / file).write_text(source, encoding="utf-8")
