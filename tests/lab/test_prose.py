"""mha.lab.prose.glue: a number a cell computed, handed to the page's prose."""

from __future__ import annotations

import numpy as np
import pytest

from mha.lab.prose import glue


@pytest.fixture
def displays(monkeypatch):
    """What myst-nb's glue displays, captured instead of sent to a kernel."""
    import myst_nb.ext.glue as myst_glue

    shown = []
    monkeypatch.setattr(myst_glue, "ipy_display", lambda data, raw, metadata: shown.append((data, metadata)))
    return shown


@pytest.mark.parametrize("value", [np.float32(0.921875), np.float64(1 / 3), np.int64(49_012), 7, 0.5, "ace"])
def test_numbers_reach_the_prose_as_python_values_that_every_format_accepts(displays, value):
    from myst_nb.core.variables import format_plain_text

    assert glue("x", value) is value
    (data, metadata), = displays
    assert metadata["scrapbook"]["name"] == "x"
    text = data["application/papermill.record/text/plain"]
    assert "np." not in text  # NumPy 2's repr (np.float32(...)) would defeat every numeric format
    if not isinstance(value, str):
        assert format_plain_text(text, ".3f") == f"{float(value):.3f}"


@pytest.mark.parametrize("value", [np.array([0.1, 0.2]), [1, 2], None, True, np.bool_(True), {"a": 1}])
def test_anything_but_one_number_or_string_is_refused_with_what_to_do(displays, value):
    with pytest.raises(TypeError, match="one number or string.*compute the scalar first"):
        glue("x", value)
    assert displays == []


def test_without_myst_nb_nothing_is_displayed_and_the_value_comes_back(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_myst(name, *args, **kwargs):
        if name.startswith("myst_nb"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_myst)
    assert glue("x", 0.25) == 0.25
