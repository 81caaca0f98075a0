"""How long the course takes: the core path and the whole course, by one stated model.

The model
---------
- prose is read at :data:`WORDS_PER_MINUTE` words a minute;
- a line of code (a code cell's line, an included listing's line, a line of a ``$$`` equation) is read
  and run at :data:`CODE_LINES_PER_MINUTE` lines a minute;
- a figure (a ``plot_*(...)`` call in a code cell) takes :data:`FIGURE_MINUTES` to read: its axes, its
  legend, what it shows; a view the reader moves (``*_explorer(...)``, ``*_view(...)``) takes
  :data:`VIEW_MINUTES`: a few settings tried and compared;
- an exercise takes the minutes its box states (``**★★☆ · 20 min.**``), starter cell, questions
  and solution included: none of its lines is counted again.

That is a fluent reader's time: someone who reads technical prose quickly and whose code runs the first
time. A newcomer to the topic re-reads, reruns and gets stuck: every time is stated twice, the second
:data:`NEWCOMER_FACTOR` times the first.

What the reader does not see costs nothing: cells tagged ``remove-cell`` or ``remove-input`` (a
figure or view a ``remove-input`` cell shows still counts).

The core path
-------------
A chapter is on the core path when its "Before you start" box says so (its ``**Time:**`` line starts
"on the core path"). On that path a reader skips what the page folds away, ``{deep-dive-start}`` …
``{deep-dive-end}`` blocks and cells tagged ``hide-input`` or ``hide-cell``, and does only the exercises
whose box says ``core`` (``**core · ★★☆ · 20 min.**``). The whole course counts everything.

The intro states the totals and each chapter's box states its own; ``python -m book.reading_time``
prints them, ``--write`` rewrites those sentences in place, and ``tests/book/test_reading_time.py``
fails when a page and the model disagree or the core path passes :data:`CORE_LIMIT_MINUTES`.

Pure text in, numbers out: no Sphinx build needed (a ``{literalinclude}`` is resolved with Sphinx's
own reader, so the lines counted are the lines shown).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from book.plain_markdown import fenced_body

ROOT = Path(__file__).resolve().parents[1]

WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 12
FIGURE_MINUTES = 0.5
VIEW_MINUTES = 2.0
#: A newcomer's time against a fluent reader's, everywhere a time is stated.
NEWCOMER_FACTOR = 1.5
#: The longest the core path may take: 8 hours.
CORE_LIMIT_MINUTES = 8 * 60

FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,}|:{3,})\s*"
                   r"(?:\{(?P<name>[a-z][\w:-]*)\}\s*(?P<arg>.*)|(?P<lang>[^`\s]*))\s*$")
OPTION = re.compile(r"^\s*:[\w-]+:")
EXERCISE_BOX = re.compile(r"\*\*(?P<core>core · )?[★☆]{3} · (?P<minutes>\d+) min\.\*\*")
ROLE = re.compile(r"\{[a-z][\w:-]*\}`(?P<content>[^`]*)`")
FIGURE_CALL = re.compile(r"\bplot_\w+\(")
VIEW_CALL = re.compile(r"\b\w+_(?:explorer|view)\(")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<[^<>]+>$", re.S)
WORD = re.compile(r"[^\W_]", re.UNICODE)
TIME_LINE = re.compile(r"^- \*\*Time:\*\* (?P<text>.*?)(?=\n- \*\*|\n```|\Z)", re.M | re.S)
HIDDEN_TAGS = {"remove-cell", "remove-input"}
FOLDED_TAGS = {"hide-input", "hide-cell"}
INTRO_BEGIN = "% reading-time: begin (written by `python -m book.reading_time --write`)"
INTRO_END = "% reading-time: end"
GUIDE = Path("chapters/teaching_guide.md")
GUIDE_BEGIN = "% reading-time-guide: begin (written by `python -m book.reading_time --write`)"
GUIDE_END = "% reading-time-guide: end"


@dataclass
class Exercise:
    """One exercise: its label, its stated minutes and whether it is on the core path."""

    label: str
    minutes: int
    core: bool


@dataclass
class PageTime:
    """What one page costs, split the way the core path splits it.

    ``core_*`` count what a core-path reader meets on a core page (nothing on an off-path page);
    ``all_*`` count everything.
    """

    docname: str
    title: str
    on_core_path: bool
    core_words: int = 0
    core_code_lines: int = 0
    core_figures: int = 0
    core_views: int = 0
    all_words: int = 0
    all_code_lines: int = 0
    all_figures: int = 0
    all_views: int = 0
    deep_dives: list[str] = field(default_factory=list)
    deep_dive_minutes: list[float] = field(default_factory=list)
    exercises: list[Exercise] = field(default_factory=list)

    @property
    def core_reading_minutes(self) -> float:
        return minutes_for(self.core_words, self.core_code_lines, self.core_figures, self.core_views)

    @property
    def core_exercise_minutes(self) -> int:
        return sum(e.minutes for e in self.exercises if e.core) if self.on_core_path else 0

    @property
    def core_minutes(self) -> float:
        return self.core_reading_minutes + self.core_exercise_minutes

    @property
    def all_minutes(self) -> float:
        return (minutes_for(self.all_words, self.all_code_lines, self.all_figures, self.all_views)
                + sum(e.minutes for e in self.exercises))


def minutes_for(words: int, code_lines: int, figures: int = 0, views: int = 0) -> float:
    """The model: words at 200 a minute, code lines at 12 a minute, half a minute a figure, two a view.

    Examples
    --------
    >>> minutes_for(2000, 120)
    20.0
    >>> minutes_for(2000, 120, figures=4, views=1)
    24.0
    """
    return (words / WORDS_PER_MINUTE + code_lines / CODE_LINES_PER_MINUTE + figures * FIGURE_MINUTES
            + views * VIEW_MINUTES)


def newcomer(minutes: float) -> float:
    """A newcomer's time for what takes a fluent reader ``minutes``.

    Examples
    --------
    >>> newcomer(40)
    60.0
    """
    return minutes * NEWCOMER_FACTOR


def count_words(text: str) -> int:
    """Words a reader reads in a line of MyST prose: roles count as their text, markup as nothing.

    Examples
    --------
    >>> count_words("Each {term}`head <attention head>` reads **all** of $X$ (see `x @ W`).")
    9
    """
    text = ROLE.sub(lambda m: _role_text(m["content"]), text)
    return sum(1 for token in text.split() if WORD.search(token))


def _role_text(content: str) -> str:
    explicit = EXPLICIT.match(content)
    return explicit["text"] if explicit and explicit["text"] else content


def included_lines(argument: str, options: dict[str, str], page: Path) -> int:
    """Lines a ``{literalinclude}`` shows, read with Sphinx's own reader (same options, same lines)."""
    import yaml
    from sphinx.directives.code import LiteralIncludeReader

    class _Config:
        source_encoding = "utf-8-sig"

    path = (page.parent / argument.strip()).resolve()
    selecting = {"pyobject", "start-at", "start-after", "end-at", "end-before", "lines"}
    # MyST reads directive options as YAML: quoted values may hold escapes (\"pre\")
    chosen = {key: str(yaml.safe_load(f"v: {value}")["v"]) for key, value in options.items()
              if key in selecting}
    text, _ = LiteralIncludeReader(str(path), chosen, _Config()).read()
    return sum(1 for line in text.splitlines() if line.strip())


def _cell_tags(options: dict[str, str], yaml_lines: list[str]) -> set[str]:
    raw = options.get("tags", "")
    for line in yaml_lines:
        if line.strip().startswith("tags:"):
            raw = line.split(":", 1)[1]
    return {tag.strip(" '\"") for tag in raw.strip().strip("[]").split(",") if tag.strip()}


def page_time(path: Path, docname: str) -> PageTime:
    """Count one MyST page by the model (see the module docstring)."""
    text = path.read_text(encoding="utf8")
    if text.startswith("---"):
        text = text.split("---", 2)[2]
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), docname)
    box = TIME_LINE.search(text)
    page = PageTime(docname, title, bool(box) and box["text"].startswith("on the core path"))
    lines = text.splitlines()
    state = _Walker(page, path)
    i = 0
    while i < len(lines):
        i = state.step(lines, i)
    if state.deep_dive is not None:
        raise ValueError(f"{path.name}: {{deep-dive-start}} {state.deep_dive!r} has no {{deep-dive-end}}")
    return page


def _opens_block(fence: str):
    """Whether a line opens a directive or a code block closed by ``fence`` (a nested one)."""
    def opens(line: str) -> bool:
        nested = FENCE.match(line)
        return bool(nested and nested["fence"] == fence and (nested["name"] or nested["lang"]))
    return opens


class _Walker:
    """Walks a page's lines once, adding each line to the right counters."""

    def __init__(self, page: PageTime, path: Path):
        self.page, self.path = page, path
        self.deep_dive: str | None = None
        self.deep_dive_start = (0, 0)
        self.exercise: Exercise | None = None  # inside an exercise: its box pays for every line
        self.waiting_solution = False

    def add(self, words: int = 0, code: int = 0, figures: int = 0, views: int = 0, *,
            folded: bool = False) -> None:
        if self.exercise is not None:
            return
        page = self.page
        page.all_words += words
        page.all_code_lines += code
        page.all_figures += figures
        page.all_views += views
        if page.on_core_path and self.deep_dive is None and not folded:
            page.core_words += words
            page.core_code_lines += code
            page.core_figures += figures
            page.core_views += views

    def step(self, lines: list[str], i: int) -> int:
        line = lines[i]
        opening = FENCE.match(line)
        if opening is None:
            return self._prose(lines, i)
        name, fence = opening["name"], opening["fence"]
        i += 1
        options: dict[str, str] = {}
        yaml: list[str] = []
        if name == "code-cell" and i < len(lines) and lines[i].strip() == "---":
            i += 1
            while i < len(lines) and lines[i].strip() != "---":
                yaml.append(lines[i])
                i += 1
            i += 1
        while i < len(lines) and OPTION.match(lines[i]):
            key, _, value = lines[i].strip()[1:].partition(":")
            options[key] = value.strip()
            i += 1
        body, i = fenced_body(lines, i, fence, _opens_block(fence))
        self._block(name, opening["arg"] or "", opening["lang"], options, yaml, body)
        return i

    def _prose(self, lines: list[str], i: int) -> int:
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("$$"):  # a display equation: its lines read like code
            end = i if stripped.count("$$") >= 2 and stripped != "$$" else next(
                (j for j in range(i + 1, len(lines)) if lines[j].strip().endswith("$$")), len(lines) - 1)
            self.add(code=sum(1 for j in range(i, end + 1) if lines[j].strip() not in ("$$", "")))
            return end + 1
        if stripped.startswith("#") and self.exercise is not None:
            self.exercise = None  # an exercise with no solution ends at the next heading
        if stripped.startswith("%") or re.match(r"^\(\S+\)=\s*$", stripped):
            return i + 1  # a comment or a target: not shown
        self.add(words=count_words(line))
        return i + 1

    def _block(self, name, argument, lang, options, yaml, body) -> None:
        page = self.page
        if name == "deep-dive-start":
            if self.deep_dive is not None:
                raise ValueError(f"{self.path.name}: deep dive {argument!r} starts inside {self.deep_dive!r}")
            self.deep_dive = argument.strip()
            self.deep_dive_start = (page.all_words, page.all_code_lines, page.all_figures, page.all_views)
            self.add(words=count_words(argument) + sum(count_words(b) for b in body))
            return
        if name == "deep-dive-end":
            if self.deep_dive is None:
                raise ValueError(f"{self.path.name}: {{deep-dive-end}} without a {{deep-dive-start}}")
            start = self.deep_dive_start
            page.deep_dives.append(self.deep_dive)
            counts = (page.all_words, page.all_code_lines, page.all_figures, page.all_views)
            page.deep_dive_minutes.append(minutes_for(*(now - then for now, then in zip(counts, start,
                                                                                         strict=True))))
            self.deep_dive = None
            return
        if name == "exercise":
            found = EXERCISE_BOX.search("\n".join(body))
            if found is None:
                raise ValueError(f"{self.path.name}: exercise {options.get('label', argument)!r} states no "
                                 "time: start its text with **★★☆ · 15 min.** (or **core · ★★☆ · 15 min.**)")
            self.exercise = Exercise(options.get("label", argument.strip()), int(found["minutes"]),
                                     bool(found["core"]))
            page.exercises.append(self.exercise)
            self.waiting_solution = True
            return
        if name in ("solution", "solution-end"):
            self.exercise = None
            self.waiting_solution = False
            return
        if name == "solution-start" or self.exercise is not None:
            return
        if name == "code-cell":
            tags = _cell_tags(options, yaml)
            if "remove-cell" in tags or "remove-output" in tags and "remove-input" in tags:
                return
            source = "\n".join(line for line in body if not line.lstrip().startswith(("from ", "import ")))
            figures, views = len(FIGURE_CALL.findall(source)), len(VIEW_CALL.findall(source))
            code = 0 if tags & HIDDEN_TAGS else sum(1 for line in body if line.strip())
            self.add(code=code, figures=figures, views=views, folded=bool(tags & FOLDED_TAGS))
            return
        if name == "literalinclude":
            self.add(code=included_lines(argument, options, self.path))
            return
        if name in ("math",):
            self.add(code=sum(1 for line in body if line.strip()))
            return
        if name in ("tableofcontents", "glossary", "bibliography"):
            return
        if name is None:  # a plain fenced block: ```python, ```text ...
            self.add(code=sum(1 for line in body if line.strip()))
            return
        # any other directive (admonition, note, figure ...): its title and body are prose
        words = count_words(argument)
        inner = "\n".join(body)
        for nested_line in inner.splitlines():
            words += count_words(nested_line) if not FENCE.match(nested_line) else 0
        self.add(words=words)


@dataclass
class CourseTime:
    """Every page of the course, and the totals the intro states."""

    pages: list[PageTime]

    @property
    def core_minutes(self) -> float:
        return sum(p.core_minutes for p in self.pages)

    @property
    def all_minutes(self) -> float:
        return sum(p.all_minutes for p in self.pages)

    @property
    def core_pages(self) -> list[PageTime]:
        return [p for p in self.pages if p.on_core_path]


def course_pages(root: Path = ROOT) -> dict[str, Path]:
    """The pages a learner works through: the intro and every chapter notebook in ``_toc.yml``."""
    from book.toc import notebook_pages

    return dict(notebook_pages(Path(root)))


def course_time(root: Path = ROOT) -> CourseTime:
    """Count every course page of ``root`` by the model."""
    return CourseTime([page_time(path, docname) for docname, path in course_pages(root).items()])


def round_minutes(minutes: float, step: int = 5) -> int:
    """Minutes rounded up to a multiple of ``step`` (a reader plans with round numbers, never short).

    Examples
    --------
    >>> round_minutes(41.2), round_minutes(40.0), round_minutes(0.4)
    (45, 40, 5)
    """
    return max(step, step * math.ceil(minutes / step - 1e-9))


def format_duration(minutes: float) -> str:
    """``95`` → ``"1 h 35 min"``; ``40`` → ``"40 min"``; ``120`` → ``"2 h"``.

    Examples
    --------
    >>> format_duration(95), format_duration(40), format_duration(120)
    ('1 h 35 min', '40 min', '2 h')
    """
    hours, rest = divmod(int(round(minutes)), 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h" + (f" {rest} min" if rest else "")


def both(minutes: int) -> str:
    """A fluent reader's time and a newcomer's: ``"40 min (a newcomer: 1 h)"``.

    Examples
    --------
    >>> both(40), both(95)
    ('40 min (a newcomer: 1 h)', '1 h 35 min (a newcomer: 2 h 25 min)')
    """
    return f"{format_duration(minutes)} (a newcomer: {newcomer_duration(minutes)})"


def newcomer_duration(minutes: int) -> str:
    """A newcomer's time for a fluent reader's rounded ``minutes``, rounded and written out."""
    return format_duration(round_minutes(newcomer(minutes)))


def time_sentence(page: PageTime) -> str:
    """The ``**Time:**`` line a chapter's "Before you start" box must carry."""
    everything = both(round_minutes(page.all_minutes))
    if not page.on_core_path:
        return f"off the core path (an optional chapter); about {everything} with everything in it."
    reading = round_minutes(page.core_reading_minutes)
    exercises = page.core_exercise_minutes
    parts = f"{format_duration(reading)} of reading and running" + (
        f", {exercises} min of core exercises" if exercises else "")
    return (f"on the core path, about {both(reading + exercises)}: {parts}; about {everything} with "
            "everything in it (the deep dives and every exercise).")


def intro_block(course: CourseTime) -> str:
    """The totals and the table the intro shows between its reading-time markers."""
    core_total, all_total = stated_totals(course)
    chapters = [p for p in course.pages if p.docname != "intro"]
    on_path = sum(p.on_core_path for p in chapters)
    rows = [f"**The core path: about {format_duration(core_total)} for a fluent reader, about "
            f"{newcomer_duration(core_total)} for a newcomer, through {on_path} of the {len(chapters)} "
            f"chapters. Everything: about {format_duration(all_total)} (a newcomer: "
            f"{newcomer_duration(all_total)}).**", "",
            "| chapter | core path | a newcomer | everything | a newcomer |",
            "| --- | --- | --- | --- | --- |"]
    for page in course.pages:
        if page.docname == "intro":
            continue
        core = _core_rounded(page)
        every = round_minutes(page.all_minutes)
        shown = (format_duration(core), newcomer_duration(core)) if page.on_core_path else ("optional", "")
        rows.append(f"| {{doc}}`{page.docname}` | {shown[0]} | {shown[1]} | {format_duration(every)} | "
                    f"{newcomer_duration(every)} |")
    rows.append(f"| **total** | **{format_duration(core_total)}** | **{newcomer_duration(core_total)}** | "
                f"**{format_duration(all_total)}** | **{newcomer_duration(all_total)}** |")
    return "\n".join(rows)


def guide_block(course: CourseTime) -> str:
    """The teaching guide's sentence on time: the same totals as the intro, both readers."""
    core_total, all_total = stated_totals(course)
    chapters = [p for p in course.pages if p.docname != "intro"]
    return (f"By that model the core path takes about {format_duration(core_total)} for a fluent reader and "
            f"{newcomer_duration(core_total)} for a newcomer; all {len(chapters)} chapters with every deep "
            f"dive and exercise, about {format_duration(all_total)} and {newcomer_duration(all_total)}.")


def _replace_between(text: str, begin: str, end: str, block: str, name: str) -> str:
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"{name} has no {begin!r} … {end!r} block")
    return text[:start + len(begin)] + "\n\n" + block + "\n\n" + text[stop:]


def _core_rounded(page: PageTime) -> int:
    return round_minutes(page.core_reading_minutes) + page.core_exercise_minutes if page.on_core_path else 0


def stated_totals(course: CourseTime) -> tuple[int, int]:
    """(core path, whole course) in minutes, as the intro states them: the sums of the rounded rows."""
    chapters = [p for p in course.pages if p.docname != "intro"]
    return (sum(_core_rounded(p) for p in chapters), sum(round_minutes(p.all_minutes) for p in chapters))


def write(root: Path = ROOT) -> list[Path]:
    """Rewrite every chapter's ``**Time:**`` sentence, the intro's table and the teaching guide's totals;
    return the files changed."""
    course = course_time(root)
    changed = []
    targets = [*zip(course.pages, course_pages(root).values(), strict=True), (None, Path(root) / GUIDE)]
    for page, path in targets:
        text = path.read_text(encoding="utf8")
        if page is None:
            new = _replace_between(text, GUIDE_BEGIN, GUIDE_END, guide_block(course), path.name)
        elif page.docname == "intro":
            new = _replace_between(text, INTRO_BEGIN, INTRO_END, intro_block(course), path.name)
        else:
            sentence = "- **Time:** " + _wrap(time_sentence(page))
            new = TIME_LINE.sub(sentence.replace("\\", "\\\\"), text, count=1)
        if new != text:
            path.write_text(new, encoding="utf8")
            changed.append(path)
    return changed


def _wrap(sentence: str, width: int = 110, indent: str = "  ") -> str:
    """The sentence wrapped like the chapters' Markdown (110 columns, continuation lines indented)."""
    words, lines, line = sentence.split(), [], "- **Time:**"
    for word in words:
        if len(line) + 1 + len(word) > width:
            lines.append(line)
            line = indent + word
        else:
            line += " " + word
    lines.append(line)
    return "\n".join(lines)[len("- **Time:** "):]


def report(course: CourseTime) -> str:
    """A table of every page: core path and everything, with the parts they are made of."""
    rows = [f"{'page':<32} {'core':>6} {'read':>6} {'ex':>4} {'all':>6}  words  code  deep dives"]
    for p in course.pages:
        rows.append(f"{p.docname:<32} {p.core_minutes:6.0f} {p.core_reading_minutes:6.0f} "
                    f"{p.core_exercise_minutes:4d} {p.all_minutes:6.0f} {p.all_words:6d} "
                    f"{p.all_code_lines:5d}  "
                    + ", ".join(f"{name} ({m:.0f})" for name, m in zip(p.deep_dives, p.deep_dive_minutes,
                                                                      strict=True)))
    core, everything = stated_totals(course)
    rows.append(f"core path: {format_duration(core)} (limit {format_duration(CORE_LIMIT_MINUTES)}); "
                f"everything: {format_duration(everything)}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the stated times in the pages")
    args = parser.parse_args(argv)
    if args.write:
        for path in write():
            print(f"updated {path.relative_to(ROOT)}")
    print(report(course_time()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
