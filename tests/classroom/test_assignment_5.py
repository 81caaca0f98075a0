"""Assignment 5 (chapters 11 to 15, and a question each on chapters 2 and 10): its visible tests name the
bug they catch, its predictions are graded right and wrong, and the code it gives students computes what
the package computes."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mha
from mha_classroom import grade_submission, load_assignment
from mha_classroom.release import nbgrader_notebook
from mha_classroom.source import instructor_source
from tests.classroom.conftest import ROOT, TEST_LIMITS

pytestmark = pytest.mark.classroom
SOURCE = ROOT / "assignments" / "05-blocks-decoding-and-real-models.md"

#: question -> (a line of the solution, the same line with a classic bug, what the feedback must say)
BUGS = {
    "layer_norm_float32": (
        "variance = (centred * centred).mean(axis=-1, keepdims=True)",
        "variance = (x * x).mean(axis=-1, keepdims=True) - x.mean(axis=-1, keepdims=True) ** 2",
        "not as mean(x²) - mean(x)²"),
    "block_pre_norm": (  # post-norm: each norm after its residual addition
        '    h = layer_norm(x, params["gamma1"], params["beta1"])\n'
        "    x = x + attention_layer(params, h, h, h, n_heads, mask)"
        "  # the stream itself is never normalised\n"
        '    h = layer_norm(x, params["gamma2"], params["beta2"])\n'
        '    hidden = np.maximum(h @ params["W_1"] + params["b_1"], 0.0)  # (batch, seq, d_ff)\n'
        '    return x + hidden @ params["W_2"] + params["b_2"]',
        "    x = layer_norm(x + attention_layer(params, x, x, x, n_heads, mask), "
        'params["gamma1"], params["beta1"])\n'
        '    hidden = np.maximum(x @ params["W_1"] + params["b_1"], 0.0)\n'
        '    return layer_norm(x + hidden @ params["W_2"] + params["b_2"], '
        'params["gamma2"], params["beta2"])',
        "you normalised after adding (post-norm)"),
    "decode_first": (
        "scores = q @ np.swapaxes(cache_k, -1, -2) / math.sqrt(d_head)",
        "scores = q @ np.swapaxes(cache_k[:, :, :-1], -1, -2) / math.sqrt(d_head)",
        "append its own key and value to the caches before it attends"),
    "torch_packed": (
        'return {"W_q": W_q.T, "W_k": W_k.T, "W_v": W_v.T, "W_o": state["out_proj.weight"].T,',
        'return {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": state["out_proj.weight"],',
        "W_k is not transposed"),
    "torch_layout": (
        "return out if batch_first else np.swapaxes(out, 0, 1)", "return out",
        "with batch_first=False the output is (seq, batch, d_model)"),
    "torch_masks": (
        "allowed = ~attn_mask if attn_mask.dtype == bool else attn_mask == 0",
        "allowed = attn_mask if attn_mask.dtype == bool else attn_mask == 0",
        "a True in a boolean mask means blocked"),
    "keras_call": (
        "mask = None if attention_mask is None else np.asarray(attention_mask)[:, None]",
        "mask = attention_mask", "add a heads axis"),
    "tutorial_call": (
        "return attention_layer(params, q, k, v, n_heads, allowed)",
        "return attention_layer(params, v, k, q, n_heads, allowed)",
        "the tutorial's call is (v, k, q)"),
    "head_kinds_synthetic": (
        "rows[..., 0].mean(axis=-1),  # [CLS]", "weights[..., 0].mean(axis=-1),",
        "average over the word queries only"),
    "predict_order": ("key=counts.get, reverse=True", "key=counts.get, reverse=False", "hidden test"),
    "lookup_soft": (
        "scores = keys @ query / (math.sqrt(query.shape[-1]) * temperature)",
        "scores = keys @ query / math.sqrt(query.shape[-1])",
        "divide the scores by the temperature too"),
    "lookup_hard": ("return values[np.argmax(keys @ query)]",
                    "return values[np.argmax(np.abs(keys @ query))]",
                    "the best key has the largest score"),
    "streaming_mask": ("return (behind >= 0) & ((behind < window) | is_sink)",
                       "return ((behind >= 0) & (behind < window)) | is_sink",
                       "sinks that come after them"),
    "stream_reach": ("    return reached\n", "    return step\n", "that is one layer"),
}


@pytest.fixture(scope="module")
def assignment_5():
    return load_assignment(SOURCE)


def test_each_visible_test_names_the_bug_it_catches(assignment_5, sandbox, tmp_path):
    notebook = nbgrader_notebook(assignment_5)
    for right, wrong, _ in BUGS.values():
        hits = sum(right in cell["source"] for cell in notebook["cells"])
        assert hits == 1, f"the solution line {right!r} is no longer in the assignment"
        for cell in notebook["cells"]:
            cell["source"] = cell["source"].replace(right, wrong)
    path = tmp_path / "buggy.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf8")
    result = grade_submission(assignment_5, "buggy", path, TEST_LIMITS, sandbox=sandbox)
    points = {q.grade_id: q.points for q in result.questions}
    feedback = {q.grade_id: q.feedback for q in result.questions}
    for question, (_, _, named) in BUGS.items():
        assert points[question] == 0 and named in feedback[question], (question, feedback[question])
    # each bug costs its own question, not its neighbours'
    for untouched in ("layer_norm", "keras_weights", "predict_parameters", "predict_cache",
                      "predict_dropout"):
        assert points[untouched] == 1, (untouched, feedback[untouched])


def _given(assignment) -> dict:
    """The names the assignment's first code cell gives students (attention_layer, random_params)."""
    first = next(cell for cell in assignment.cells if cell.role == "given")
    namespace: dict = {}
    exec(compile(instructor_source(first), str(SOURCE), "exec"), namespace)  # noqa: S102 - our own source
    return namespace


@pytest.mark.parametrize(("d_model", "n_heads", "kdim", "vdim"), [(8, 2, 8, 8), (12, 3, 5, 7), (6, 6, 4, 4)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_given_attention_layer_computes_the_packages_layer(assignment_5, d_model, n_heads, kdim, vdim,
                                                               dtype):
    given = _given(assignment_5)
    rng = np.random.default_rng(d_model + n_heads)
    layer = mha.MultiHeadAttention(d_model, n_heads, kdim=kdim, vdim=vdim, rng=rng, dtype=dtype)
    for array in layer.parameters().values():
        array[...] = rng.normal(scale=0.5, size=array.shape)
    params = {name: getattr(layer, name) for name in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")}
    x = rng.normal(size=(2, 3, d_model)).astype(dtype)
    keys, values = rng.normal(size=(2, 4, kdim)).astype(dtype), rng.normal(size=(2, 4, vdim)).astype(dtype)
    mask = mha.padding_mask([4, 0], 4)  # the second sequence has no key: zero output, no NaN
    got = given["attention_layer"](params, x, keys, values, n_heads, mask)
    assert got.dtype == dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, layer(x, keys, values, mask=mask), rtol=tolerance, atol=tolerance)
    np.testing.assert_array_equal(got[1], np.broadcast_to(layer.b_o, got[1].shape))  # zero context + b_o


def test_random_params_draws_every_weight_a_block_needs(assignment_5):
    params = _given(assignment_5)["random_params"](np.random.default_rng(0), 8, d_ff=16, d_memory=5)
    block = mha.TransformerBlock(8, 2, 16)
    names = {name.split(".")[1] + name[4] if name.startswith("norm") else name.split(".")[1]
             for name in block.parameters()}
    assert names == set(params)
    assert params["W_k"].shape == (5, 8) and params["W_1"].shape == (8, 16)
    assert abs(params["gamma1"].mean() - 1) < 0.5  # a layer norm's scale starts near 1
