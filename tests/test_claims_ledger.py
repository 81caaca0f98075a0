"""The claims ledger: asserts recorded with their margins, judged by the stated rule, and the committed
ledger up to date with every chapter's and assignment's asserts (benchmarks/claims_ledger.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.bench_loader import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
LEDGER = ROOT / "benchmarks" / "results" / "claims_ledger.json"


@pytest.fixture(scope="module")
def instrument():
    return load_benchmark("ledger_instrument")


@pytest.fixture(scope="module")
def ledger():
    return load_benchmark("claims_ledger")


def run_cell(instrument, source, tmp_path, namespace=None, seed=0):
    """Execute one instrumented cell; the recorder's record."""
    code, claims = instrument.instrument(source, 0)
    namespace = {"np": np, **(namespace or {})}
    namespace[instrument.RECORDER] = instrument.Recorder(str(tmp_path / "record.json"), seed=seed)
    exec(compile(code, "<cell>", "exec"), namespace)  # noqa: S102 - the test's own source
    return json.loads((tmp_path / "record.json").read_text()), claims


def test_a_failing_assert_is_recorded_not_raised_with_its_margin(instrument, tmp_path):
    record, claims = run_cell(instrument, "x = 0.92\nassert x > 0.95\nassert x < 1.5", tmp_path)
    assert [c["source"] for c in claims] == ["assert x > 0.95", "assert x < 1.5"]
    held = [entry["held"] for entry in record["claims"].values()]
    assert held == [False, True]
    margins = [entry["margin"] for entry in record["comparisons"].values()]
    np.testing.assert_allclose(margins, [-0.03, 0.58])


def test_chained_and_array_comparisons_record_their_worst_element(instrument, tmp_path):
    source = "w = np.array([0.6, 0.7, 0.85])\nassert 0.5 < w.min() < 0.9\nassert np.all(w < 0.9)"
    record, _ = run_cell(instrument, source, tmp_path)
    margins = {entry["text"]: entry["margin"] for entry in record["comparisons"].values()}
    assert margins["0.5 < w.min()"] == pytest.approx(0.1)
    assert margins["w.min() < 0.9"] == pytest.approx(0.3)
    assert margins["w < 0.9"] == pytest.approx(0.05)  # the worst element, 0.85


def test_a_comparison_used_as_a_mask_is_not_a_claim(instrument, tmp_path):
    source = "s = np.array([0.1, 0.3, 0.5])\nassert np.mean(s > 0.2) > 0.6"
    record, _ = run_cell(instrument, source, tmp_path)
    texts = [entry["text"] for entry in record["comparisons"].values()]
    assert texts == ["np.mean(s > 0.2) > 0.6"]
    assert next(iter(record["comparisons"].values()))["margin"] == pytest.approx(2 / 3 - 0.6)


def test_every_iteration_of_a_loop_counts_and_the_worst_is_kept(instrument, tmp_path):
    source = "for x in [0.99, 0.96, 0.98]:\n    assert x > 0.95, x"
    record, _ = run_cell(instrument, source, tmp_path)
    (entry,) = record["comparisons"].values()
    assert entry["runs"] == 3 and entry["margin"] == pytest.approx(0.01)


def test_asserts_inside_a_helper_the_chapter_defines_still_raise(instrument, tmp_path):
    source = "def check(x):\n    assert x > 1\ncheck(2)\ncheck(0)"
    with pytest.raises(AssertionError):
        run_cell(instrument, source, tmp_path)


def test_ipython_syntax_is_translated_first(instrument, tmp_path):
    record, _ = run_cell(instrument, "%matplotlib agg\nassert 1 < 2", tmp_path,
                         namespace={"get_ipython": lambda: type("I", (), {"run_line_magic": print})()})
    assert all(entry["held"] for entry in record["claims"].values())


def test_a_ledger_seed_reseeds_every_generator_and_seed_0_keeps_the_chapter(instrument, tmp_path):
    original = np.random.default_rng
    try:
        chapter = np.random.default_rng(7).standard_normal(3)
        instrument.Recorder(str(tmp_path / "a.json"), seed=0)
        np.testing.assert_array_equal(np.random.default_rng(7).standard_normal(3), chapter)
        instrument.Recorder(str(tmp_path / "b.json"), seed=3)
        other = np.random.default_rng(7).standard_normal(3)
        assert not np.allclose(other, chapter)
        np.testing.assert_array_equal(np.random.default_rng(7).standard_normal(3), other)  # still seeded
        generator = original(1)
        assert np.random.default_rng(generator) is generator  # a Generator passed in stays itself
    finally:
        np.random.default_rng = original


@pytest.mark.parametrize(("margins", "op", "passes"), [
    ([0.05, 0.04, 0.05], ">", True),    # worst 0.04 clears half the spread (0.005)
    ([0.05, 0.01, 0.09], ">", False),   # worst 0.01 < half the spread (0.04): at its margin
    ([0.05, -0.01], ">", False),        # failed in one run
    ([0.0, 0.0], "<=", True),           # a count at its limit: a non-strict bound may be met
    ([0.0, 0.1], "<", False),           # a strict bound must be cleared
    ([0.0, 0.0], "==", True),
    ([0.0, -1e-9], "==", False),        # an equality must hold exactly in every run
])
def test_the_rule(ledger, margins, op, passes):
    assert ledger.judge(margins, op)["passes"] is passes


def test_an_assignment_cell_runs_as_the_teachers_solution_with_its_hidden_tests(ledger):
    source = ("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n"
              "### BEGIN HIDDEN TESTS\nassert x == 1\n### END HIDDEN TESTS")
    assert ledger.assignment_source(source) == "x = 1\nassert x == 1"


# --- the committed ledger ---------------------------------------------------------------------------


def current_claims(ledger, instrument):
    """page -> {key: source} of every assert in the sources as they are now."""
    import jupytext

    found = {}
    for name, path in ledger.pages(ROOT).items():
        nb = jupytext.read(path, fmt="md:myst")
        cells = [cell for cell in nb.cells if cell.cell_type == "code"]
        claims = {}
        for index, cell in enumerate(cells):
            source = cell.source
            if name.startswith("assignments/"):
                source = ledger.assignment_source(source)
            claims.update({c["key"]: c["source"] for c in instrument.instrument(source, index)[1]})
        if claims:
            found[name] = claims
    return found


def test_the_committed_ledger_lists_every_assert_as_the_sources_have_it(ledger, instrument):
    """Change an assert, and the ledger must be run again for its page (--pages)."""
    committed = json.loads(LEDGER.read_text(encoding="utf8"))["pages"]
    for page, claims in current_claims(ledger, instrument).items():
        assert page in committed, f"{page} is not in the ledger: benchmarks/claims_ledger.py --pages {page}"
        recorded = {key: entry["source"] for key, entry in committed[page]["claims"].items()}
        assert recorded == claims, (f"{page}'s asserts changed since its ledger run: "
                                    f"python benchmarks/claims_ledger.py --pages {page} ...")


def test_every_claim_holds_by_the_rule_in_every_run(ledger):
    committed = json.loads(LEDGER.read_text(encoding="utf8"))["pages"]
    weak = [f"{page}: {claim['status']}: {claim['source']}" for page, data in committed.items()
            for claim in data["claims"].values() if claim["status"] != "holds"]
    assert weak == []
    errors = [f"{page}: {error}" for page, data in committed.items() for error in data["errors"]]
    assert errors == []


def test_the_ledger_ran_each_page_under_two_kernels_two_thread_counts_and_five_seeds():
    committed = json.loads(LEDGER.read_text(encoding="utf8"))
    for page, data in committed["pages"].items():
        kernels = {run.split("(")[1].split(")")[0] for run in data["runs"]}
        threads = {run.split("/")[1].split(" ")[0] for run in data["runs"]}
        seeds = {run.rsplit("seed ", 1)[1] for run in data["runs"]}
        assert len(kernels) >= 2 and threads >= {"1", "2"} and len(seeds) >= 5, (page, data["runs"])
    checks = committed["learner_checks"]
    assert len({c["kernel"] for c in checks}) >= 2 and all(c["passed"] for c in checks), checks
