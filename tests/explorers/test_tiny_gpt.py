"""mha.explorers.tiny_gpt: text samples by temperature and top-k, one escaped frame per setting."""

import pytest

pytest.importorskip("matplotlib")

from mha.explorers.tiny_gpt import sampling_explorer  # noqa: E402


def test_sampling_explorer_has_one_escaped_frame_per_setting():
    samples = {(t, k): f"<{t}|{k}>" for t in (0.5, 1.0) for k in (None, 3)}
    explorer = sampling_explorer(samples)
    assert len(explorer.frames) == 4
    assert [o[1] for o in explorer.sliders["top_k"].options] == ["3", "all"]  # no cut-off last
    html = explorer.frames[(1.0, "all")]
    assert "&lt;1.0|None&gt;" in html and "<1.0" not in html  # sampled text is escaped, not markup
    assert explorer.frames[(0.5, "3")].endswith(">&lt;0.5|3&gt;</div>")


def test_sampling_explorer_names_missing_settings():
    with pytest.raises(ValueError, match=r"\(1.0, 3\)"):
        sampling_explorer({(0.5, None): "a", (1.0, None): "b", (0.5, 3): "c"})
