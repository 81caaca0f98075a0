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
