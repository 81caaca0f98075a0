"""Every mistake a check names is caught by a deliberately buggy implementation written here,
and correct learner-style implementations (NumPy only) get the success line."""

import math

import numpy as np
import pytest

import mha
from mha.checks import (
    CheckFailed,
    check_attention,
    check_causal_mask,
    check_merge_heads,
    check_multi_head,
    check_softmax,
    check_split_heads,
)

# ---------------------------------------------------------------- learner-style implementations


def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is None:
        return softmax(scores) @ v
    scores = np.where(mask, scores, -np.inf)
    row_max = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0))
    total = np.sum(e, axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return weights @ v


def causal_mask(seq_q, seq_k=None):
    seq_k = seq_q if seq_k is None else seq_k
    return np.tril(np.ones((seq_q, seq_k), dtype=bool), k=seq_k - seq_q)


def split_heads(x, n_heads):
    batch, seq, d_model = x.shape
    # (batch, seq, n_heads, d_head) -> (batch, n_heads, seq, d_head)
    return x.reshape(batch, seq, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    batch, n_heads, seq, d_head = x.shape
    # (batch, seq, n_heads, d_head) -> (batch, seq, d_model)
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, n_heads * d_head)


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


@pytest.mark.parametrize(("check", "fn", "success"), [
    (check_softmax, softmax, "✔ check_softmax passed"),
    (check_attention, attention, "float32 and masks."),
    (check_attention, lambda q, k, v: attention(q, k, v), "masks not checked"),
    (check_causal_mask, causal_mask, "square and end-aligned"),
    (check_causal_mask, lambda seq: causal_mask(seq), "give it a seq_k parameter"),
    (check_split_heads, split_heads, "✔ check_split_heads passed"),
    (check_merge_heads, merge_heads, "✔ check_merge_heads passed"),
    (check_multi_head, multi_head, "✔ check_multi_head passed"),
    (check_multi_head, Layer, "✔ check_multi_head passed"),
    (check_multi_head, Layer(12, 3), "✔ check_multi_head passed"),
    (check_multi_head, LayerWithoutBias, "✔ check_multi_head passed"),
])
def test_a_correct_implementation_prints_one_success_line(check, fn, success, capsys):
    check(fn)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("✔") and success in lines[0]


def test_quiet_prints_nothing(capsys):
    check_softmax(softmax, quiet=True)
    assert capsys.readouterr().out == ""


def test_the_package_passes_its_own_checks():
    check_softmax(mha.softmax, quiet=True)
    check_attention(mha.scaled_dot_product_attention, quiet=True)
    check_causal_mask(mha.causal_mask, quiet=True)
    check_split_heads(mha.split_heads, quiet=True)
    check_merge_heads(mha.merge_heads, quiet=True)


@pytest.mark.parametrize("layer", [
    mha.MultiHeadAttention,  # a class taking dtype=: built once per precision
    mha.MultiHeadAttention(12, 3, rng=0),  # a float64 object, whose float32 answers may be float64
    mha.MultiHeadAttention(12, 3, rng=0, dtype=np.float32),  # a float32 object: checked in float32
], ids=["class", "float64 object", "float32 object"])
def test_the_package_layer_passes_check_multi_head(layer, capsys):
    check_multi_head(layer)
    assert capsys.readouterr().out.startswith("✔ check_multi_head passed")


# ------------------------------------------------------------------------ buggy softmaxes

def _exp_over(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


SOFTMAX_BUGS = {
    "wrong axis": (lambda x: _exp_over(x, 0), r"wrong axis"),
    "no keepdims on the sum": (lambda x: np.exp(x) / np.exp(x).sum(axis=-1), r"keepdims=True"),
    "no keepdims on the max": (lambda x: softmax(x - x.max(axis=-1)), r"keepdims=True"),
    "overflow, no max": (lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True),
                         r"^[^:]+: overflow"),
    "global max": (lambda x: softmax(x, axis=-1) if x.max() - x.min() < 100 else
                   np.exp(x - x.max()) / np.exp(x - x.max()).sum(-1, keepdims=True),
                   r"max of the whole array"),
    "not normalised": (lambda x: np.exp(x - x.max(-1, keepdims=True)), r"do not sum to 1"),
    "whole-array sum": (lambda x: np.exp(x) / np.exp(x).sum(), r"sum over the whole array"),
    "no exp": (lambda x: x / x.sum(-1, keepdims=True), r"np\.exp is missing"),
    "float32 upcast": (lambda x: softmax(x).astype(np.float64), r"float64 for float32.*NEP 50"),
    "ignores axis": (lambda x, axis=-1: softmax(x), r"ignores its axis argument"),
    "raises": (lambda x: 1 / 0, r"your softmax raised ZeroDivisionError"),
    "returns a list": (lambda x: [1, 2], r"shape \(2,\), expected \(3, 5\)"),
    "plain wrong": (lambda x: softmax(x) + 0.01, r"values differ, the first at index \(0, 0\)"),
    "edits its input": (lambda x: softmax(np.subtract(x, x.max(-1, keepdims=True), out=x)),
                        r"changed its input array number 1 in place"),
}


@pytest.mark.parametrize("bug", SOFTMAX_BUGS)
def test_check_softmax_names_each_bug(bug):
    fn, message = SOFTMAX_BUGS[bug]
    with pytest.raises(CheckFailed, match=message):
        check_softmax(fn)


# ---------------------------------------------------------------------- buggy attentions

def _scaled(scale, axis=-1):
    def attend(q, k, v):
        return softmax(q @ np.swapaxes(k, -1, -2) * scale(q.shape[-1]), axis=axis) @ v
    return attend


def _with_mask(fill=-np.inf, invert=False, after=False):
    def attend(q, k, v, mask=None):
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
        mask = True if mask is None else (~mask if invert else mask)
        if after:
            return softmax(scores) * mask @ v
        return softmax(np.where(mask, scores, fill)) @ v
    return attend


def _upcast(q, k, v):
    return softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(np.float64(q.shape[-1]))) @ v


def _naive_exp(q, k, v):
    e = np.exp(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]))
    return e / e.sum(-1, keepdims=True) @ v


ATTENTION_BUGS = {
    "scale forgotten": (_scaled(lambda d: 1.0), r"not scaled: divide q @ kᵀ by √d_k = √4"),
    "scaled by d_k": (_scaled(lambda d: 1.0 / d), r"divided the scores by d_k"),
    "softmax over queries": (_scaled(lambda d: d ** -0.5, axis=-2), r"wrong axis \(axis=-2"),
    ".T on a batch": (lambda q, k, v: softmax(q @ k.T / math.sqrt(q.shape[-1])) @ v,
                      r"np\.swapaxes\(k, -1, -2\)"),
    "float32 upcast": (_upcast, r"returned float64 for float32.*math\.sqrt"),
    "overflow": (_naive_exp, r"^[^:]+: overflow"),
    "returns the weights": (lambda q, k, v: softmax(q @ np.swapaxes(k, -1, -2) / 2.0),
                            r"returned the attention weights"),
    "mask inverted": (_with_mask(invert=True), r"polarity is inverted"),
    "masked scores set to 0": (_with_mask(fill=0.0), r"set to 0, but exp\(0\) = 1"),
    "mask after softmax": (_with_mask(after=True), r"after the softmax"),
    "-1e9 mask": (_with_mask(fill=-1e9), r"uniform weights over all keys"),
    "NaN on a fully masked row": (_with_mask(), r"gave NaN"),
}


@pytest.mark.parametrize("bug", ATTENTION_BUGS)
def test_check_attention_names_each_bug(bug):
    fn, message = ATTENTION_BUGS[bug]
    with pytest.raises(CheckFailed, match=message):
        check_attention(fn)


def test_check_attention_checks_returned_weights_too():
    def wrong_weights(q, k, v):
        return attention(q, k, v), np.zeros((q.shape[-2], k.shape[-2]))

    with pytest.raises(CheckFailed, match=r"the weights"):
        check_attention(wrong_weights)


# -------------------------------------------------------------------- buggy causal masks

CAUSAL_BUGS = {
    "inverted": (lambda s: ~causal_mask(s), r"the mask is inverted"),
    "upper triangle": (lambda s: np.triu(np.ones((s, s), dtype=bool)), r"see future keys"),
    "diagonal excluded": (lambda s: np.tril(np.ones((s, s), dtype=bool), k=-1),
                          r"attend to itself"),
    "float dtype": (lambda s: np.tril(np.ones((s, s))), r"dtype is float64"),
    "additive": (lambda s: np.where(causal_mask(s), 0.0, -np.inf), r"additive mask"),
    "nothing masked": (lambda s: np.ones((s, s), dtype=bool), r"nothing is masked"),
    "start-aligned": (lambda seq_q, seq_k=None: np.tri(seq_q, seq_k, dtype=bool), r"end-aligned"),
}


@pytest.mark.parametrize("bug", CAUSAL_BUGS)
def test_check_causal_mask_names_each_bug(bug):
    fn, message = CAUSAL_BUGS[bug]
    with pytest.raises(CheckFailed, match=message):
        check_causal_mask(fn)


# ------------------------------------------------------------------ buggy split / merge

SPLIT_BUGS = {
    "reshape without transpose": (
        lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1), r"without transposing"),
    "transpose forgotten": (
        lambda x, h: x.reshape(x.shape[0], x.shape[1], h, -1), r"did not move the heads axis"),
    "features interleaved": (
        lambda x, h: x.reshape(x.shape[0], x.shape[1], -1, h).transpose(0, 3, 1, 2),
        r"\(d_head, n_heads\)"),
    "axes in the wrong order": (
        lambda x, h: x.reshape(x.shape[0], x.shape[1], h, -1).transpose(0, 2, 3, 1),
        r"shape \(2, 3, 4, 5\) = \(batch, n_heads, d_head, seq\)"),
}
MERGE_BUGS = {
    "reshape without transpose": (lambda x: x.reshape(x.shape[0], x.shape[2], -1),
                                  r"without transposing"),
    "heads in reverse order": (lambda x: merge_heads(x[:, ::-1]), r"reverse order"),
    "heads interleaved": (lambda x: x.transpose(0, 2, 3, 1).reshape(x.shape[0], x.shape[2], -1),
                          r"interleaved"),
}


@pytest.mark.parametrize("bug", SPLIT_BUGS)
def test_check_split_heads_names_each_bug(bug):
    fn, message = SPLIT_BUGS[bug]
    with pytest.raises(CheckFailed, match=message):
        check_split_heads(fn)


@pytest.mark.parametrize("bug", MERGE_BUGS)
def test_check_merge_heads_names_each_bug(bug):
    fn, message = MERGE_BUGS[bug]
    with pytest.raises(CheckFailed, match=message):
        check_merge_heads(fn)


# -------------------------------------------------------------------- buggy multi-head layers

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


@pytest.mark.parametrize("bug", MULTI_HEAD_BUGS)
def test_check_multi_head_names_each_bug(bug):
    fn, message = MULTI_HEAD_BUGS[bug]
    with pytest.raises(CheckFailed, match=message):
        check_multi_head(fn)


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


@pytest.mark.parametrize("check", [check_softmax, check_attention, check_split_heads])
def test_checks_refuse_bad_arguments(check):
    with pytest.raises(TypeError, match="expects your function"):
        check("softmax")
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        check(softmax, rng=0)
