"""Tests of mha/checks/shapes.py. Every wrong reshape the split and merge checks name is caught by a
buggy implementation written here, learner-style ones and the package's get the success line, and
the chapter's shape prediction passes when right and names the first wrong shape."""

import pytest

import mha
from mha import checks
from mha.checks import check_merge_heads, check_split_heads
from tests.checks.answers import names_each_bug, right_answers_pass, wrong_answers_fail

# ------------------------------------------------------------------ learner-style implementations

def split_heads(x, n_heads):
    batch, seq, d_model = x.shape
    # (batch, seq, n_heads, d_head) -> (batch, n_heads, seq, d_head)
    return x.reshape(batch, seq, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    batch, n_heads, seq, d_head = x.shape
    # (batch, seq, n_heads, d_head) -> (batch, seq, d_model)
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, n_heads * d_head)


@pytest.mark.parametrize(("check", "fn", "success"), [
    (check_split_heads, split_heads, "✔ check_split_heads passed"),
    (check_merge_heads, merge_heads, "✔ check_merge_heads passed"),
])
def test_a_correct_implementation_prints_one_success_line(check, fn, success, capsys):
    check(fn)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("✔") and success in lines[0]


def test_the_package_passes_its_own_checks():
    check_split_heads(mha.split_heads, quiet=True)
    check_merge_heads(mha.merge_heads, quiet=True)


# ---------------------------------------------------------------------------- buggy split / merge

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

test_check_split_heads_names_each_bug = names_each_bug(check_split_heads, SPLIT_BUGS)
test_check_merge_heads_names_each_bug = names_each_bug(check_merge_heads, MERGE_BUGS)


# ------------------------------------------------------------------------ the chapter's exercises

RIGHT = {
    checks.check_head_shapes: {
        "q_heads": (2, 4, 5, 8), "k_heads": (2, 4, 9, 8), "v_heads": (2, 4, 9, 8),
        "scores": (2, 4, 5, 9), "heads_out": (2, 4, 5, 8), "output": (2, 5, 32)},
}

WRONG = [
    (checks.check_head_shapes, {
        "q_heads": (2, 4, 5, 8), "k_heads": (2, 4, 5, 8), "v_heads": (2, 4, 9, 8),
        "scores": (2, 4, 5, 9), "heads_out": (2, 4, 5, 8), "output": (2, 5, 32)},
     r"k_heads: expected \(2, 4, 9, 8\), got \(2, 4, 5, 8\) \(keys carry seq_k = 9\)"),
]

test_right_answers_pass = right_answers_pass(RIGHT)
test_wrong_answers_name_what_was_expected = wrong_answers_fail(WRONG)
