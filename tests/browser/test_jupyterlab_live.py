"""A learner's session in real JupyterLab: run the explorer's cell, then move a control and type a sentence.

The frame explorers switch to live mode when a frontend connected to the kernel draws them (it reports
its views back as ``_view_count``). Kernel-side tests call ``go_live()`` by hand; this test checks the
switch happens in JupyterLab itself, that the live controls take a value no frame was rendered for, and
that the reader's own sentence redraws the figure. Skips without JupyterLab, unless MHA_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager

import pytest

from tests.browser.conftest import missing

pytestmark = pytest.mark.browser

CELL = """\
from mha.explorers import head_explorer

explorer = head_explorer(head_counts=(1, 2), seq_lens=(4, 6))
explorer
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a free port over a folder holding one notebook; yields (url, token)."""
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        missing("JupyterLab is not installed (pip install -r requirements-test.txt)")
    folder = tmp_path_factory.mktemp("lab")
    notebook = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": "explorer", "metadata": {},
                   "outputs": [], "source": CELL}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    (folder / "live.ipynb").write_text(json.dumps(notebook))
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(folder / ".config"),
           "JUPYTER_RUNTIME_DIR": str(folder / ".runtime")}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
         "--allow-root", "--LabApp.news_url="],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.kill()
        pytest.fail("JupyterLab did not start within 60 s")
    yield url, token
    server.terminate()
    server.wait(timeout=20)


def _visible_images(page) -> list[str]:
    return page.eval_on_selector_all(
        ".jp-OutputArea img", "imgs => imgs.filter(i => i.offsetParent !== null).map(i => i.src)")


def test_explorer_goes_live_in_jupyterlab_and_takes_any_value_and_a_sentence(lab, browser):
    url, token = lab
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with _explain_failure(page):
        page.goto(f"{url}/lab/tree/live.ipynb?token={token}", timeout=90_000)
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=90_000)
        page.wait_for_function(  # the kernel has started
            "() => [...document.querySelectorAll('.jp-Notebook-ExecutionIndicator')]"
            ".some(e => e.textContent.includes('Idle'))", timeout=90_000)
        for _attempt in range(3):  # a run sent while the kernel is still connecting can be lost: run again
            page.click(".jp-Notebook .jp-CodeCell .jp-InputArea-editor >> nth=0")
            page.keyboard.press("Control+Enter")
            try:
                page.wait_for_function("() => /\\[[0-9*]+\\]/.test(document.querySelector("
                                       "'.jp-Notebook .jp-CodeCell .jp-InputPrompt').textContent)",
                                       timeout=20_000)
                break
            except Exception:  # noqa: BLE001 - playwright's TimeoutError: try again
                continue
        # Live mode: the text box for the reader's own sentence appears (it never shows on the static site).
        try:
            sentence = page.wait_for_selector("input[placeholder^='Type your own sentence']", state="visible",
                                              timeout=120_000)
        finally:
            page.screenshot(path=str(_artifact("jupyterlab-live-run.png")))
        before = _visible_images(page)
        assert len(before) == 1, f"expected one visible figure, got {len(before)}"

        # Values no frame was rendered for (frames: 1 and 2 heads), by keyboard. 5 heads cannot split
        # d_model = 64: the explorer says why and keeps the last figure on screen; 4 heads redraw it.
        # On the way from 2 to 5 the kernel may or may not draw 4 heads (that depends on how fast it
        # answers each key press), so the figure kept is whichever it drew last, never none.
        heads_label = page.locator(".widget-label", has_text="heads")
        heads = page.locator(".widget-slider:visible", has=heads_label).first
        heads.locator(".noUi-handle").focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        assert heads.locator(".widget-readout").inner_text().strip() == "5"
        page.wait_for_selector("text=d_model=64 is not divisible by n_heads=5", timeout=60_000)
        at_error = _visible_images(page)
        assert len(at_error) == 1, (
            f"the last figure should stay beside the message, got {len(at_error)} figures")
        page.keyboard.press("ArrowLeft")  # 4 heads: a figure unlike the 2 heads one we started from
        page.wait_for_function("(old) => { const imgs = [...document.querySelectorAll('.jp-OutputArea img')]"
                               ".filter(i => i.offsetParent !== null); return imgs.length === 1 &&"
                               " imgs[0].src !== old; }", arg=before[0], timeout=60_000)
        page.wait_for_selector("text=is not divisible", state="detached", timeout=60_000)  # the message goes
        four_heads = _visible_images(page)
        assert len(four_heads) == 1

        sentence.fill("my own words travel through four heads")
        sentence.press("Enter")
        page.wait_for_function("(old) => { const imgs = [...document.querySelectorAll('.jp-OutputArea img')]"
                               ".filter(i => i.offsetParent !== null); return imgs.length === 1 &&"
                               " imgs[0].src !== old; }", arg=four_heads[0], timeout=60_000)
        alt = page.eval_on_selector_all(".jp-OutputArea img",
                                        "imgs => imgs.filter(i => i.offsetParent !== null).map(i => i.alt)")
        page.screenshot(path=str(_artifact("jupyterlab-live.png")))
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        assert errors.count() == 0, errors.first.inner_text()
        page.close()
        assert alt  # the live image keeps an accessible description slot


@contextmanager
def _explain_failure(page):
    """On any failure, save a screenshot and name the JupyterLab dialogs on screen.

    A modal dialog (a kernel restart, a lost server connection ...) blocks the reader's clicks too, and a
    click that times out says only that "a dialog intercepts pointer events": its text says why.
    """
    try:
        yield
    except Exception as error:
        shot = _artifact("jupyterlab-live-failure.png")
        try:
            page.screenshot(path=str(shot))
            dialogs = page.eval_on_selector_all(".jp-Dialog", "ds => ds.map(d => d.innerText.trim())")
        except Exception as unreadable:  # noqa: BLE001 - the page itself may be gone: say so, keep the error
            dialogs = [f"(the page could not be read: {unreadable})"]
        error.add_note(f"JupyterLab dialogs on screen: {dialogs or 'none'}; screenshot: {shot}")
        raise


def _artifact(name: str):
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "test-artifacts"
    folder.mkdir(exist_ok=True)
    return folder / name
