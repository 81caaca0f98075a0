"""book.reading_time: the stated model on small pages, and the book's stated times against the model.

The intro's table and totals and every chapter's "Time" line must be what ``python -m book.reading_time``
computes from the pages (``--write`` rewrites them), and the core path must fit in 8 hours.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from book.reading_time import (
    CODE_LINES_PER_MINUTE,
    CORE_LIMIT_MINUTES,
    FIGURE_MINUTES,
    GUIDE,
    GUIDE_BEGIN,
    GUIDE_END,
    INTRO_BEGIN,
    INTRO_END,
    NEWCOMER_FACTOR,
    TIME_LINE,
    VIEW_MINUTES,
    WORDS_PER_MINUTE,
    count_words,
    course_time,
    guide_block,
    intro_block,
    page_time,
    stated_totals,
    time_sentence,
    write,
)

ROOT = Path(__file__).resolve().parents[2]

HEADER = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n"
BOX = "```{{admonition}} Before you start\n:class: tip\n\n- **Time:** {time}\n```\n\n"


def words(n: int) -> str:
    return " ".join(["word"] * n) + "\n\n"


def cell(lines: int, tags: str = "") -> str:
    meta = f":tags: [{tags}]\n\n" if tags else ""
    return "```{code-cell} ipython3\n" + meta + "".join(f"x{i} = {i}\n" for i in range(lines)) + "```\n\n"


def exercise(label: str, minutes: int, core: bool) -> str:
    mark = "core · " if core else ""
    return (f"```{{exercise}} An exercise\n:label: {label}\n\n**{mark}★☆☆ · {minutes} min.** "
            + "Do this and that.\n```\n\n" + cell(6)
            + f"````{{solution-start}} {label}\n:class: dropdown\n````\n\n" + words(300) + cell(30)
            + "````{solution-end}\n````\n\n")


def page(tmp_path: Path, body: str, *, core: bool = True) -> Path:
    path = tmp_path / "page.md"
    time = "on the core path" if core else "off the core path"
    path.write_text(HEADER + "# A page\n\n" + BOX.format(time=time) + body, encoding="utf8")
    return path


def test_the_model_counts_words_at_200_and_code_lines_at_12_a_minute(tmp_path):
    result = page_time(page(tmp_path, words(400) + cell(24)), "page")
    box_words = count_words("# A page") + count_words("Before you start") + count_words(
        "- **Time:** on the core path")
    assert result.all_words == 400 + box_words and result.all_code_lines == 24
    assert result.core_minutes == pytest.approx((400 + box_words) / 200 + 24 / 12)


def test_deep_dives_and_folded_cells_cost_nothing_on_the_core_path_and_hidden_cells_nothing_at_all(tmp_path):
    body = (words(200) + "```{deep-dive-start} Under the hood\nWhy it works.\n```\n\n" + words(600) + cell(36)
            + "```{deep-dive-end}\n```\n\n" + cell(12, "hide-input") + cell(50, "remove-cell")
            + cell(50, "remove-input"))
    plain = page_time(page(tmp_path, words(200)), "page")
    result = page_time(page(tmp_path, body), "page")
    assert result.core_words == plain.core_words and result.core_code_lines == 0
    assert result.all_words == plain.all_words + 600 + count_words("Under the hood Why it works.")
    assert result.all_code_lines == 36 + 12  # the hidden cells are never read
    assert result.deep_dives == ["Under the hood"]
    title_and_teaser = count_words("Under the hood Why it works.")
    assert result.deep_dive_minutes == [pytest.approx((600 + title_and_teaser) / 200 + 36 / 12)]


def test_figures_and_views_cost_their_minutes_where_the_reader_sees_them(tmp_path):
    figures = ("```{code-cell} ipython3\nfrom mha.plotting import plot_heads\nplot_heads(w, tokens)\n```\n\n"
               "```{code-cell} ipython3\n:tags: [remove-input]\nscaling_explorer(); plot_a(x)\n```\n\n"
               "```{code-cell} ipython3\n:tags: [remove-cell]\nplot_b(x)\n```\n\n")
    folded = ("```{deep-dive-start} Inside\n```\n\n```{code-cell} ipython3\nhead_view(m)\n```\n\n"
              "```{deep-dive-end}\n```\n\n")
    result = page_time(page(tmp_path, words(100) + figures + folded), "page")
    plain = page_time(page(tmp_path, words(100)), "page")
    assert (result.all_figures, result.all_views) == (2, 2)  # the removed cell shows nothing
    assert (result.core_figures, result.core_views) == (2, 1)  # the deep dive's view is folded away
    assert result.all_code_lines == plain.all_code_lines + 2 + 1  # a remove-input cell's code is not read
    core_extra = result.core_minutes - plain.core_minutes - 2 / CODE_LINES_PER_MINUTE
    assert core_extra == pytest.approx(2 * FIGURE_MINUTES + VIEW_MINUTES)


def test_every_stated_time_comes_twice_a_newcomer_s_the_stated_factor_longer(tmp_path):
    result = page_time(page(tmp_path, words(3800) + cell(120)), "page")  # 19 + 10 min, and the title
    sentence = time_sentence(result)
    assert "about 30 min (a newcomer: 45 min)" in sentence and NEWCOMER_FACTOR == 1.5


def test_the_intro_states_the_model_s_rates_in_words():
    text = " ".join((ROOT / "intro.md").read_text(encoding="utf8").split())
    rates = f"prose at {WORDS_PER_MINUTE} words a minute, code at {CODE_LINES_PER_MINUTE} lines a minute"
    assert rates in text
    assert FIGURE_MINUTES == 0.5 and "half a minute for each figure" in text
    assert VIEW_MINUTES == 2 and "two minutes for each view you move" in text
    assert NEWCOMER_FACTOR == 1.5 and "one and a half times as long" in text


def test_an_exercise_costs_its_box_and_only_core_exercises_count_on_the_core_path(tmp_path):
    body = exercise("ex-a", 20, core=True) + exercise("ex-b", 15, core=False) + words(100)
    result = page_time(page(tmp_path, body), "page")
    plain = page_time(page(tmp_path, words(100)), "page")
    found = [(e.label, e.minutes, e.core) for e in result.exercises]
    assert found == [("ex-a", 20, True), ("ex-b", 15, False)]
    assert result.all_words == plain.all_words  # the starter cells and solutions are in the boxes' minutes
    assert result.all_code_lines == plain.all_code_lines
    assert result.core_exercise_minutes == 20
    assert result.all_minutes == pytest.approx(plain.all_minutes + 35)


def test_a_page_off_the_core_path_adds_nothing_to_it(tmp_path):
    result = page_time(page(tmp_path, words(400) + exercise("ex-a", 20, core=True), core=False), "page")
    assert not result.on_core_path and result.core_minutes == 0 and result.all_minutes > 20


@pytest.mark.parametrize(("body", "message"), [
    ("```{exercise} No time\n:label: ex-x\n\nDo it.\n```\n", "states no time"),
    ("```{deep-dive-start} Open\n```\n\ntext\n", "has no {deep-dive-end}"),
    ("```{deep-dive-end}\n```\n", "without a {deep-dive-start}"),
])
def test_pages_the_model_cannot_read_are_refused_by_name(tmp_path, body, message):
    with pytest.raises(ValueError, match=message):
        page_time(page(tmp_path, body), "page")


def test_roles_count_as_the_words_a_reader_sees():
    assert count_words("{term}`queries <query>` and {doc}`shapes` and {cite:t}`v17`") == 5
    assert count_words("**bold** `code` $x$ — 3") == 4


# --- the book itself ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def course():
    return course_time(ROOT)


def test_the_core_path_fits_in_eight_hours_and_is_most_of_the_book_it_covers(course):
    core, everything = stated_totals(course)
    assert core <= CORE_LIMIT_MINUTES, f"the core path takes {core} min, more than {CORE_LIMIT_MINUTES}"
    assert everything > 1.5 * core  # the optional parts are real
    assert course.core_minutes <= core  # the stated total rounds up, never down


def test_the_intro_states_what_the_model_computes(course):
    text = (ROOT / "intro.md").read_text(encoding="utf8")
    stated = text[text.index(INTRO_BEGIN) + len(INTRO_BEGIN):text.index(INTRO_END)].strip()
    assert stated == intro_block(course), "run `python -m book.reading_time --write` and commit the intro"


def test_the_teaching_guide_states_the_same_totals(course):
    text = (ROOT / GUIDE).read_text(encoding="utf8")
    stated = text[text.index(GUIDE_BEGIN) + len(GUIDE_BEGIN):text.index(GUIDE_END)].strip()
    assert stated == guide_block(course), "run `python -m book.reading_time --write` and commit the guide"


def test_every_chapter_states_its_own_time_as_the_model_computes_it(course):
    for page_result, path in zip(course.pages, [ROOT / f"{p.docname}.md" for p in course.pages], strict=True):
        if page_result.docname == "intro":
            continue
        found = TIME_LINE.search(path.read_text(encoding="utf8"))
        assert found, f"{path.name} has no '- **Time:**' line in its 'Before you start' box"
        assert " ".join(found["text"].split()) == time_sentence(page_result), (
            f"{path.name}: run `python -m book.reading_time --write`")


def test_core_chapters_mark_core_exercises_and_optional_chapters_none(course):
    for page_result in course.pages:
        core_exercises = [e.label for e in page_result.exercises if e.core]
        if page_result.on_core_path and page_result.exercises:
            assert core_exercises, f"{page_result.docname} is on the core path but marks no exercise core"
        if not page_result.on_core_path:
            assert core_exercises == [], f"{page_result.docname} is optional but marks {core_exercises} core"


def test_the_first_chapter_keeps_only_its_spine_on_the_core_path(course):
    first = next(p for p in course.pages if p.docname == "chapters/self_attention")
    assert first.on_core_path and first.deep_dives  # derivations and package details are folded
    closer = next(p for p in course.pages if p.docname == "chapters/attention_up_close")
    assert not closer.on_core_path


def test_write_changes_nothing_in_a_book_that_states_the_model(tmp_path):
    import shutil

    for name in ("_toc.yml", "intro.md", "glossary.md", "references.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "chapters", tmp_path / "chapters")
    shutil.copytree(ROOT / "mha", tmp_path / "mha")  # the chapters' literalincludes
    assert write(tmp_path) == []
    chapter = tmp_path / "chapters" / "shapes.md"
    stated = "- **Time:** on the core path, about"
    chapter.write_text(chapter.read_text(encoding="utf8").replace(stated, stated + " 9 h"))
    assert write(tmp_path) == [chapter]
    assert write(tmp_path) == []
