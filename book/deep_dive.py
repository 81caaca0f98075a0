"""Sphinx extension: deep dives, the parts of a chapter a reader on the core path can skip, folded away.

A deep dive may hold prose and code cells alike, so it is written as a pair of markers around them
(a directive cannot contain a MyST notebook's code cells)::

    ```{deep-dive-start} The package's softmax, line by line
    An optional first paragraph, shown inside the box.
    ```

    ...prose, code cells, figures...

    ```{deep-dive-end}
    ```

The transform gathers everything between the two markers into one admonition with the classes
``deep-dive dropdown``: sphinx-togglebutton folds it like a solution, its title says it is optional and
how long it takes by the course's reading model (:mod:`book.reading_time`), and it prints unfolded.
The markers must be siblings (same section, no heading inside): a heading in a folded box would
still show in the page's table of contents, so the build fails with a message instead.

In the notebooks readers download, :mod:`book.plain_markdown` turns the markers into a quote that
opens and a line that closes the deep dive.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective

__all__ = ["setup"]


class deep_dive_start(nodes.Element):  # noqa: N801 (docutils names nodes in lower case)
    """Where a deep dive begins; replaced by the folded admonition."""


class deep_dive_end(nodes.Element):  # noqa: N801
    """Where a deep dive ends; removed."""


class DeepDiveStart(SphinxDirective):
    has_content = True
    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"label": lambda value: value.strip()}

    def run(self):
        node = deep_dive_start(title=self.arguments[0], label=self.options.get("label", ""))
        node.source, node.line = self.get_source_info()
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class DeepDiveEnd(SphinxDirective):
    def run(self):
        node = deep_dive_end()
        node.source, node.line = self.get_source_info()
        return [node]


def _minutes(env, docname: str) -> list[tuple[str, float]]:
    """(title, minutes) of the page's deep dives, in order, by the course's reading model."""
    from book.reading_time import page_time

    cache = env.temp_data.setdefault("mha_deep_dive_minutes", {})
    if docname not in cache:
        page = page_time(Path(env.doc2path(docname)), docname)
        cache[docname] = list(zip(page.deep_dives, page.deep_dive_minutes, strict=True))
    return cache[docname]


class FoldDeepDives(SphinxTransform):
    """Move what lies between each start and end marker into one folded admonition."""

    default_priority = 10  # with sphinx-exercise's merges: before references are resolved

    def apply(self):
        starts = list(self.document.findall(deep_dive_start))
        timings = _minutes(self.env, self.env.docname) if starts else []
        if len(timings) != len(starts):
            raise ExtensionError(f"{self.env.docname}: {len(starts)} deep dives, but the reading model "
                                 f"found {len(timings)} (is a marker inside another directive?)")
        for start, (title, minutes) in zip(starts, timings, strict=True):
            self._fold(start, title, minutes)
        stray = list(self.document.findall(deep_dive_end))
        if stray:
            where = f"{stray[0].source}:{stray[0].line}"
            raise ExtensionError(f"{where}: deep-dive-end without a deep-dive-start "
                                 "in the same section")

    def _fold(self, start: deep_dive_start, title: str, minutes: float) -> None:
        parent = start.parent
        first = parent.index(start)
        end = next((i for i in range(first + 1, len(parent)) if isinstance(parent[i], deep_dive_end)), None)
        if end is None:
            raise ExtensionError(f"{start.source}:{start.line}: deep dive {title!r} has no deep-dive-end "
                                 "in the same section (deep dives hold no headings)")
        inside = parent.children[first + 1:end]
        for child in inside:
            if isinstance(child, (nodes.section, deep_dive_start)):
                raise ExtensionError(f"{start.source}:{start.line}: deep dive {title!r} holds a heading or "
                                     "another deep dive; end it before")
        box = nodes.admonition(classes=["deep-dive", "dropdown"])
        box.source, box.line = start.source, start.line
        if start["label"]:
            box["ids"].append(nodes.make_id(start["label"]))
        heading = f"Deep dive, about {max(1, round(minutes))} min: {title}"
        box += nodes.title(heading, heading)
        box.extend(list(start.children))
        for child in list(inside):
            parent.remove(child)
            box += child
        parent.remove(parent[first + 1])  # the end marker, now right after the start
        start.replace_self(box)


def setup(app):
    app.add_node(deep_dive_start)
    app.add_node(deep_dive_end)
    app.add_directive("deep-dive-start", DeepDiveStart)
    app.add_directive("deep-dive-end", DeepDiveEnd)
    app.add_transform(FoldDeepDives)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
