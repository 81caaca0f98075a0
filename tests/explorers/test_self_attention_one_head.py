"""mha.explorers.self_attention_one_head: one frame per step and traced query, each drawing the package's
numbers."""

import matplotlib
import pytest

matplotlib.use("Agg")

from mha.explorers import head_steps_explorer  # noqa: E402
from mha.explorers.self_attention_one_head import render_head_step  # noqa: E402
from mha.lab.self_attention_one_head import STEPS  # noqa: E402


def test_one_frame_per_step_and_query_each_tracing_its_query():
    explorer = head_steps_explorer("the cat sat")
    assert list(explorer.sliders) == ["step", "query"]
    assert set(explorer.frames) == {(s, t) for s in STEPS for t in ("the", "cat", "sat")}
    assert explorer.sliders["query"].value == "cat"
    assert all(frame[:4] == b"\x89PNG" for frame in explorer.frames.values())
    assert len(set(explorer.frames.values())) == 15  # no two frames alike


def test_a_readers_sentence_without_the_traced_word_traces_its_last_word():
    fig = render_head_step("softmax", "cat", text="dogs bark loudly")
    assert "\u201cloudly\u201d" in fig.describe()
    with pytest.raises(ValueError, match="once"):
        head_steps_explorer("the cat saw the dog")
    with pytest.raises(TypeError, match="sentence"):
        render_head_step("softmax", "cat", text=3)


def test_the_lookup_explorer_has_one_frame_per_temperature_and_a_live_slider():
    import numpy as np

    from mha.explorers import lookup_explorer

    keys = np.eye(3)  # (seq_k, d_k)
    explorer = lookup_explorer(["a", "b", "c"], [3.0, 1.0, 0.0], keys, 2 * keys, query_token="a",
                               temperatures=[0.1, 1.0, 10.0])
    assert set(explorer.frames) == {(0.1,), (1.0,), (10.0,)} and len(set(explorer.frames.values())) == 3
    assert explorer.sliders["temperature"].value == 1.0 and explorer.live is not None
    assert explorer.live.controls["temperature"].min == pytest.approx(-1.0)  # log10 of 0.1


@pytest.mark.parametrize(("args", "error", "message"), [
    (dict(temperatures=[]), ValueError, "empty"), (dict(temperatures=[0.0, 1.0]), ValueError, "positive"),
    (dict(temperatures=[1.0, True]), ValueError, "positive"),
    (dict(tokens=["a", "b"]), ValueError, "token per key"),
    (dict(initial=3.0), ValueError, "not one of its values"), (dict(query=[1.0, 2.0]), ValueError, "one d_k"),
])
def test_the_lookup_explorer_refuses_bad_settings(args, error, message):
    import numpy as np

    from mha.explorers import lookup_explorer

    given = {"tokens": ["a", "b", "c"], "query": [1.0, 0.0, 0.0], "keys": np.eye(3), "values": np.eye(3),
             "temperatures": [0.5, 1.0], **args}
    with pytest.raises(error, match=message):
        lookup_explorer(**given)
