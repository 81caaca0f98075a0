"""Tests of mha/checks/multi_head.py. Every mistake check_multi_head names is caught by a buggy layer
written here, learner-style layers (a function, a class, an object) and the package's layer get the
success line, and the chapter's exercise checks pass right answers and name wrong ones."""

import math

import numpy as np
import pytest

import mha
from mha import checks
from mha.checks import CheckFailed, check_multi_head
from tests.checks.answers import names_each_bug, right_answers_pass, wrong_answers_fail
from tests.checks.test_self_attention import attention, softmax
from tests.checks.test_shapes import MERGE_BUGS, SPLIT_BUGS, merge_heads, split_heads

# ------------------------------------------------------------------ learner-style implementations

def multi_head(x, W_q, W_k, W_v, W_o, n_heads):  # noqa: N803 - the lessons' names
    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))
    return merge_heads(attention(q, k, v)) @ W_o


class Layer:
    def __init__(self, d_model, n_heads, rng=None):
        rng = np.random.default_rng(1) if rng is None else rng
        self.n_heads = n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (rng.normal(size=(d_model, d_model))
                                                  for _ in range(4))
        self.b_q, self.b_k, self.b_v, self.b_o = (np.zeros(d_model) for _ in range(4))

    def __call__(self, x):
        q, k, v = (split_heads(x @ W + b, self.n_heads) for W, b in
                   ((self.W_q, self.b_q), (self.W_k, self.b_k), (self.W_v, self.b_v)))
        weights = softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]))
        return merge_heads(weights @ v) @ self.W_o + self.b_o, weights


class LayerWithoutBias(Layer):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads)
        del self.b_q, self.b_k, self.b_v, self.b_o
        self.b_q = self.b_k = self.b_v = self.b_o = None

    def __call__(self, x):
        q, k, v = (split_heads(x @ W, self.n_heads) for W in (self.W_q, self.W_k, self.W_v))
        return merge_heads(attention(q, k, v)) @ self.W_o


def mha_einsum(x, layer):
    seq, h, d = x.shape[0], layer.n_heads, layer.d_head
    q, k, v = ((x @ w + b).reshape(seq, h, d) for w, b in  # (seq, n_heads, d_head)
               ((layer.W_q, layer.b_q), (layer.W_k, layer.b_k), (layer.W_v, layer.b_v)))
    scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(d)  # (n_heads, seq_q, seq_k)
    context = np.einsum("hqk,khd->qhd", mha.softmax(scores), v)  # (seq, n_heads, d_head)
    return context.reshape(seq, h * d) @ layer.W_o + layer.b_o


@pytest.mark.parametrize(("check", "fn", "success"), [
    (check_multi_head, multi_head, "✔ check_multi_head passed"),
    (check_multi_head, Layer, "✔ check_multi_head passed"),
    (check_multi_head, Layer(12, 3), "✔ check_multi_head passed"),
    (check_multi_head, LayerWithoutBias, "✔ check_multi_head passed"),
])
def test_a_correct_implementation_prints_one_success_line(check, fn, success, capsys):
    check(fn)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("✔") and success in lines[0]


@pytest.mark.parametrize("layer", [
    mha.MultiHeadAttention,  # a class taking dtype=: built once per precision
    mha.MultiHeadAttention(12, 3, rng=0),  # a float64 object, whose float32 answers may be float64
    mha.MultiHeadAttention(12, 3, rng=0, dtype=np.float32),  # a float32 object: checked in float32
], ids=["class", "float64 object", "float32 object"])
def test_the_package_layer_passes_check_multi_head(layer, capsys):
    check_multi_head(layer)
    assert capsys.readouterr().out.startswith("✔ check_multi_head passed")


# ------------------------------------------------------------------------ buggy multi-head layers

def _layer(split=split_heads, merge=merge_heads, scale=None, project=True, n_heads=None,
           transpose=False, dtype=None):
    def layer(x, W_q, W_k, W_v, W_o, heads):  # noqa: N803
        h = n_heads or heads
        Ws = [W.T if transpose else W for W in (W_q, W_k, W_v, W_o)]
        q, k, v = (split(x @ W, h) for W in Ws[:3])
        s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale(x.shape[-1])
        out = merge(softmax(q @ np.swapaxes(k, -1, -2) * s) @ v)
        out = out @ Ws[3] if project else out
        return out.astype(dtype) if dtype else out
    return layer


MULTI_HEAD_BUGS = {
    "split without transpose": (_layer(split=SPLIT_BUGS["reshape without transpose"][0]),
                                r"cuts the \*sequence\* into heads"),
    "merge without transpose": (_layer(merge=MERGE_BUGS["reshape without transpose"][0]),
                                r"mixes positions"),
    "split and merge without transpose": (_layer(split=SPLIT_BUGS["reshape without transpose"][0],
                                                 merge=MERGE_BUGS["reshape without transpose"][0]),
                                          r"both when splitting and when merging"),
    "heads concatenated in reverse": (_layer(merge=MERGE_BUGS["heads in reverse order"][0]),
                                      r"reverse order"),
    "scale forgotten": (_layer(scale=lambda d_model: 1.0), r"not scaled"),
    "scaled by d_model": (_layer(scale=lambda d_model: d_model ** -0.5), r"√d_model = √12"),
    "no output projection": (_layer(project=False), r"output projection is missing"),
    "one big head": (_layer(n_heads=1), r"single head of size d_model"),
    "transposed weights": (_layer(transpose=True), r"transposed weights"),
    "float32 upcast": (_layer(dtype=np.float64), r"returned float64 for float32"),
}

test_check_multi_head_names_each_bug = names_each_bug(check_multi_head, MULTI_HEAD_BUGS)


def test_check_multi_head_says_which_attributes_it_needs():
    class Fused:
        def __init__(self, d_model, n_heads):
            self.W_qkv = np.zeros((d_model, 3 * d_model))

        def __call__(self, x):
            return x

    with pytest.raises(CheckFailed, match=r"needs arrays W_q, W_k, W_v, W_o.*no such attribute"):
        check_multi_head(Fused)


def test_the_diagnosis_pipeline_without_a_mistake_is_the_package_layer():
    # The mistakes are recomputed with _layer_output; with no step changed it must equal the layer.
    from mha.checks.multi_head import _layer_output, _random_weights, _reference

    rng = np.random.default_rng(3)
    weights = _random_weights(rng, biases=True)
    x = rng.normal(size=(2, 5, 12))
    np.testing.assert_allclose(_layer_output(x, weights, 3), _reference(x, weights)[0], rtol=1e-12)


# ------------------------------------------------------------------------ the chapter's exercises

RIGHT = {
    checks.check_einsum_layer: mha_einsum,
    checks.check_parameter_formula: lambda d, h: 4 * d * d + 4 * d,
}

WRONG = [
    (checks.check_parameter_formula, lambda d, h: 4 * d * d, "bias vectors"),
    (checks.check_parameter_formula, lambda d, h: h * (4 * d * d + 4 * d), "do not add"),
    (checks.check_einsum_layer, lambda x, layer: mha_einsum(x, layer) - layer.b_o, "b_o is missing"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
