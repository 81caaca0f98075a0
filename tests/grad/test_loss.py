"""mha.grad.loss: cross-entropy against a loop and finite differences, and the embedding's backward."""

import math

import numpy as np
import pytest

from mha.grad import cross_entropy, embedding_backward
from tests.gradcheck import assert_gradients_match, numerical_gradient


def test_cross_entropy_equals_a_loop_and_its_gradient_matches_finite_differences():
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((2, 3, 5)) * 2
    targets = rng.integers(0, 5, size=(2, 3))
    loss_mask = np.array([[True, False, True], [True, True, False]])
    expected, count = 0.0, 0
    for b in range(2):
        for t in range(3):
            if loss_mask[b, t]:
                row = logits[b, t]
                expected -= row[targets[b, t]] - math.log(sum(math.exp(x) for x in row))
                count += 1
    loss, d_logits = cross_entropy(logits, targets, loss_mask)
    assert loss == pytest.approx(expected / count, rel=1e-12)
    numeric = numerical_gradient(lambda: cross_entropy(logits, targets, loss_mask)[0], logits)
    assert_gradients_match(d_logits, numeric, "logits")
    assert np.all(d_logits[0, 1] == 0)  # an unselected position gets no gradient


def test_cross_entropy_is_stable_for_huge_logits():
    loss, d = cross_entropy(np.array([[1e4, 0.0, -1e4]]), np.array([0]))
    assert loss == pytest.approx(0.0, abs=1e-12)
    assert np.isfinite(d).all()


@pytest.mark.parametrize(
    ("targets", "loss_mask", "message"),
    [
        (np.array([0.0, 1.0]), None, "targets must be integers"),
        (np.array([0, 4]), None, r"targets must lie in \[0, 4\)"),
        (np.array([0, 1]), np.array([False, False]), "selects no position"),
        (np.array([0, 1]), np.array([1, 0]), "boolean"),
    ],
)
def test_cross_entropy_rejects_bad_targets(targets, loss_mask, message):
    with pytest.raises((ValueError, TypeError), match=message):
        cross_entropy(np.zeros((2, 4)), targets, loss_mask)


def test_embedding_backward_sums_repeated_tokens_like_finite_differences():
    rng = np.random.default_rng(3)
    table, tokens = rng.standard_normal((5, 3)), np.array([[0, 4, 0, 2]])
    upstream = rng.standard_normal((1, 4, 3))
    analytic = embedding_backward(upstream, tokens, 5)
    numeric = numerical_gradient(lambda: float(np.sum(table[tokens] * upstream)), table)
    assert_gradients_match(analytic, numeric, "table")
    assert np.all(analytic[[1, 3]] == 0)  # unused tokens get nothing


@pytest.mark.parametrize(("d_out", "tokens", "words"), [
    (np.ones((1, 2, 2)), np.array([[-1, 0]]), r"tokens must lie in \[0, 3\), got values from -1"),
    (np.ones((1, 2, 2)), np.array([[5, 0]]), r"tokens must lie in \[0, 3\), got values from 0 to 5"),
    (np.ones((1, 2, 2)), np.array([[0.0, 1.0]]), "expected integer tokens of shape"),
    (np.ones((1, 2, 2)), np.array([0, 1, 2]), r"expected integer tokens of shape \(1, 2\)"),
])
def test_embedding_backward_names_tokens_it_cannot_place(d_out, tokens, words):
    with pytest.raises(ValueError, match=words):
        embedding_backward(d_out, tokens, 3)
