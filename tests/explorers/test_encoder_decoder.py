"""mha.explorers.encoder_decoder: learned cross-attention by task and training stage."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from mha.explorers.encoder_decoder import learned_alignment_explorer  # noqa: E402


def test_learned_alignment_explorer_renders_every_task_and_stage():
    w = np.full((2, 3, 4), 0.25)
    maps = {(task, stage): (w, list("abc"), list("wxyz"), np.array([0, 1, 3]))
            for task in ("copy", "reverse") for stage in ("before", "after")}
    explorer = learned_alignment_explorer(maps)
    assert sorted(explorer.frames) == sorted(maps)
    assert list(explorer.sliders) == ["task", "stage"]
