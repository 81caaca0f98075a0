"""Tests of mha/checks/self_attention.py. Every mistake the one-head checks name is caught by a
deliberately buggy implementation written here, correct learner-style implementations (NumPy only)
get the success line, and the chapter's exercise checks pass right answers and name wrong ones."""

import math

import numpy as np
import pytest

import mha
from mha import checks
from mha.checks import CheckFailed, check_attention, check_causal_mask, check_softmax
from tests.checks.answers import names_each_bug, right_answers_pass, wrong_answers_fail

# ------------------------------------------------------------------ learner-style implementations

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


def window_mask(seq, width):
    offset = np.arange(seq)[:, None] - np.arange(seq)[None, :]  # (seq_q, seq_k)
    return (offset >= 0) & (offset < width)


def padding_mask(lengths, seq):
    return (np.arange(seq)[None, :] < np.asarray(lengths)[:, None])[:, None, None, :]


@pytest.mark.parametrize(("check", "fn", "success"), [
    (check_softmax, softmax, "✔ check_softmax passed"),
    (check_attention, attention, "float32 and masks."),
    (check_attention, lambda q, k, v: attention(q, k, v), "masks not checked"),
    (check_causal_mask, causal_mask, "square and end-aligned"),
    (check_causal_mask, lambda seq: causal_mask(seq), "give it a seq_k parameter"),
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


# -------------------------------------------------------------------------------- buggy softmaxes

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

test_check_softmax_names_each_bug = names_each_bug(check_softmax, SOFTMAX_BUGS)


# ------------------------------------------------------------------------------- buggy attentions

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

test_check_attention_names_each_bug = names_each_bug(check_attention, ATTENTION_BUGS)


def test_check_attention_checks_returned_weights_too():
    def wrong_weights(q, k, v):
        return attention(q, k, v), np.zeros((q.shape[-2], k.shape[-2]))

    with pytest.raises(CheckFailed, match=r"the weights"):
        check_attention(wrong_weights)


# ----------------------------------------------------------------------------- buggy causal masks

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

test_check_causal_mask_names_each_bug = names_each_bug(check_causal_mask, CAUSAL_BUGS)


# ------------------------------------------------------------------------ the chapter's exercises

RIGHT = {
    checks.check_dot_variance: 1024,
    checks.check_window_mask: window_mask,
    checks.check_padding_mask: padding_mask,
}

WRONG = [
    (checks.check_window_mask, lambda s, w: np.abs(np.arange(s)[:, None] - np.arange(s)) < w,
     "not causal"),
    (checks.check_window_mask, lambda s, w: window_mask(s, w + 1), r"width \+ 1 tokens"),
    (checks.check_padding_mask, lambda n, s: padding_mask(n, s)[:, 0, 0],
     r"shape \(batch, seq_k\).*\[:, None, None, :\]"),
    (checks.check_padding_mask, lambda n, s: ~padding_mask(n, s), "inverted"),
    (checks.check_padding_mask, lambda n, s: padding_mask(np.asarray(n) + 1, s), "t <= length"),
    (checks.check_dot_variance, 256, r"expected 1024, got 256\. each product"),
    (checks.check_dot_variance, 32, "standard deviation"),
    (checks.check_dot_variance, True, "should be a number, got True"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
