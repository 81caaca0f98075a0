"""mha.plotting.heads_that_learn_circuits: both tables are the circuits' numbers, titled with how diagonal
they are."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from mha.lab import AttentionOnlyModel  # noqa: E402
from mha.lab.heads_that_learn_circuits import argmax_share, head_circuits  # noqa: E402
from mha.plotting.heads_that_learn_circuits import plot_circuits  # noqa: E402


@pytest.fixture
def model():
    return AttentionOnlyModel(vocab_size=5, seq_len=7, d_model=8, n_heads=2, rng=0)


def test_the_tables_are_the_circuits(model):
    circuits = head_circuits(model, 1, 1, previous=0)
    fig = plot_circuits(circuits, list("ABCDE"))
    qk_ax, ov_ax = fig.axes[:2]  # the two colour bars come after
    np.testing.assert_allclose(qk_ax.images[0].get_array(), circuits.qk)
    np.testing.assert_allclose(ov_ax.images[0].get_array(), circuits.ov)
    assert f"{argmax_share(circuits.ov):.0%}" in ov_ax.get_title(loc="left")
    assert [t.get_text() for t in ov_ax.get_xticklabels()] == list("ABCDE")
    assert qk_ax.get_xlabel() == "token before the key"
    assert "layer 1 head 1" in fig.describe().lower()


def test_a_layer_0_head_is_drawn_on_positions_with_the_future_blank(model):
    circuits = head_circuits(model, 0, 0)
    fig = plot_circuits(circuits, list("ABCDE"))
    shown = fig.axes[0].images[0].get_array()
    assert np.ma.getmaskarray(shown)[np.triu_indices(7, 1)].all()  # keys after the query: never seen
    assert "one position back" in fig.axes[0].get_title(loc="left")


def test_names_must_cover_the_vocabulary(model):
    with pytest.raises(ValueError, match="5"):
        plot_circuits(head_circuits(model, 0, 0), list("ABC"))
