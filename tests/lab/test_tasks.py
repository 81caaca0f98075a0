"""The repeated-run task: its structure, its targets and where an induction head should look."""

import numpy as np
import pytest

from mha.lab.tasks import repeated_tokens, token_names


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sequences_are_filler_then_a_repeating_run_of_distinct_tokens(seed):
    batch = repeated_tokens(64, 20, 12, min_period=3, max_period=6, rng=seed)
    for b in range(64):
        tokens, start, period = batch.tokens[b], int(batch.start[b]), int(batch.period[b])
        run = tokens[start:start + period]
        assert 3 <= period <= 6 and 0 <= start <= 20 - 2 * period
        assert len(set(run.tolist())) == period  # distinct
        for t in range(start, 20):
            assert tokens[t] == run[(t - start) % period]
        assert not set(tokens[:start].tolist()) & set(run.tolist())  # filler avoids the run
        assert tokens.min() >= 0 and tokens.max() < 12


def test_targets_are_next_tokens_and_count_once_the_answer_has_been_seen():
    batch = repeated_tokens(32, 16, 10, min_period=2, max_period=7, rng=3)
    np.testing.assert_array_equal(batch.targets[:, :-1], batch.tokens[:, 1:])
    for b in range(32):
        start, period = int(batch.start[b]), int(batch.period[b])
        expected = [start + period <= t < 15 for t in range(16)]
        assert batch.loss_mask[b].tolist() == expected


def test_same_seed_same_batch_and_all_periods_occur():
    a = repeated_tokens(200, 16, 10, min_period=2, max_period=7, rng=5)
    b = repeated_tokens(200, 16, 10, min_period=2, max_period=7, rng=5)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    assert set(a.period.tolist()) == set(range(2, 8))


def test_induction_targets_match_a_slow_search_for_earlier_copies():
    batch = repeated_tokens(16, 14, 9, min_period=2, max_period=6, rng=7)
    targets = batch.induction_targets()
    for b in range(16):
        tok = batch.tokens[b]
        for t in range(14):
            for j in range(14):
                expected = 1 <= j <= t and tok[j - 1] == tok[t]
                assert targets[b, t, j] == expected
    # Copying from any target key gives the right answer wherever the loss counts.
    b, t = np.nonzero(batch.loss_mask)
    for bi, ti in zip(b, t, strict=True):
        keys = np.nonzero(targets[bi, ti])[0]
        assert keys.size and np.all(batch.tokens[bi, keys] == batch.targets[bi, ti])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_period": 5, "max_period": 4},
        {"min_period": 2, "max_period": 8},  # 2 * 8 > seq_len - 1 = 15
        {"min_period": 1, "max_period": 3},
    ],
)
def test_impossible_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        repeated_tokens(4, 16, 10, rng=0, **kwargs)


def test_token_names_are_letters_then_numbered():
    assert token_names(28)[:3] == ["A", "B", "C"]
    assert token_names(28)[26:] == ["t26", "t27"]
