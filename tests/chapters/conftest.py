"""Fixtures of the notebook tests: a ``notebook_page`` per notebook in ``_toc.yml``, ``run_notebook``."""

from __future__ import annotations

import pytest

from tests.chapters.harness import NotebookPage, NotebookRun, convert_page, run_converted, toc_notebooks


def pytest_generate_tests(metafunc):
    if "notebook_page" in metafunc.fixturenames:
        pages = toc_notebooks()
        metafunc.parametrize("notebook_page", pages, ids=[page.docname for page in pages])


@pytest.fixture
def run_notebook(tmp_path):
    """``run_notebook(page) -> NotebookRun``: convert a page and run it under nbval."""

    def run(page: NotebookPage) -> NotebookRun:
        return run_converted(convert_page(page, tmp_path))

    return run
