"""book.deep_dive: what lies between a deep dive's two markers is folded into one titled box, or the build
fails saying why. Built with Sphinx and MyST on a page of its own (a second or two)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from book.reading_time import page_time

ROOT = Path(__file__).resolve().parents[2]

PAGE = """# A page

Before.

```{{deep-dive-start}} Under the hood
Why it works, in one line.
```

Inside, first paragraph.

```python
x = 1
```

Inside, last paragraph.

```{{deep-dive-end}}
```

After.
{extra}
"""


def build(tmp_path: Path, text: str) -> str:
    """Build one page with the extension, warnings as errors, in a Sphinx of its own; return its HTML."""
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    (source / "conf.py").write_text('extensions = ["myst_parser", "book.deep_dive"]\n')
    (source / "index.md").write_text(text, encoding="utf8")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "-q", str(source), str(out)],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        raise BuildFailed(done.stdout + done.stderr)
    return (out / "index.html").read_text(encoding="utf8")


class BuildFailed(Exception):
    """Sphinx stopped; the message is its output."""


def test_the_deep_dive_is_one_folded_box_titled_with_its_time(tmp_path):
    html = build(tmp_path, PAGE.format(extra=""))
    box = re.search(r'<div class="([^"]*)">\s*<p class="admonition-title">Deep dive(.*?)</div>\s*<p>After',
                    html, re.S)
    assert box, html
    assert {"admonition", "deep-dive", "dropdown"} <= set(box[1].split())  # sphinx-togglebutton folds it
    inside = "Deep dive" + box[2]
    minutes = round(page_time(tmp_path / "src" / "index.md", "index").deep_dive_minutes[0])
    assert f"Deep dive, about {max(1, minutes)} min: Under the hood" in inside
    for text in ("Why it works, in one line.", "Inside, first paragraph.", "x", "Inside, last paragraph."):
        assert text in inside
    assert "Before." not in inside and html.index("Before.") < html.index("deep-dive")


def test_a_heading_inside_a_deep_dive_fails_the_build(tmp_path):
    text = PAGE.replace("Inside, last paragraph.", "## A heading\n\nInside, last paragraph.").format(extra="")
    with pytest.raises(BuildFailed, match="deep-dive-end in the same section|holds a heading"):
        build(tmp_path, text)


def test_an_end_marker_without_a_start_fails_the_build(tmp_path):
    with pytest.raises(BuildFailed, match="deep-dive-end"):
        build(tmp_path, "# A page\n\n```{deep-dive-end}\n```\n")
