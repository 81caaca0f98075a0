"""The claims ledger: every assert of every chapter and assignment, run over seeds × BLAS kernels × threads.

A chapter asserts what it teaches (``assert r["exact"] > 0.95``). On another CPU, OpenBLAS sums in
another order, a trained model ends elsewhere, and a claim that held at its margin on one machine fails
on the next. This script runs every notebook page of the book (``_toc.yml``) and every assignment (its
solutions, then its hidden tests) with each assert *recorded* instead of raised
(``ledger_instrument.py``), once per seed and per BLAS configuration, and writes:

- ``results/claims_ledger.json``: for every claim, each run's margin (how far the measured side was
  from failing, in its own units) and the summary below;
- ``results/claims_ledger.md``: one row per claim: runs, worst margin, spread, and whether it passes
  the rule.

**The rule.** A claim holds in every run, and its threshold clears the worst run by at least half the
spread of all runs: ``worst margin >= 0.5 * (best margin - worst margin)``. The runs here sample what
another machine may do (another kernel sums in another order; another seed draws other data and other
initial weights); a threshold within that spread of the worst case is a claim at its margin, and its
experiment or its statement changes. Comparisons without a size (a ranking, an identity, a string
key) must hold in every run; ``==`` must hold exactly; a non-strict bound may be met with equality.

Seed 0 is the chapter as the book runs it; seed *s* re-seeds every ``default_rng`` the chapter and the
package create (``ledger_instrument.Recorder``). A configuration is ``KERNEL/THREADS``: the kernel is
forced with ``OPENBLAS_CORETYPE`` (``native``: the variable removed) and checked with threadpoolctl;
a kernel the CPU cannot run (SkylakeX needs AVX-512) is reported and skipped.

Run from the repository root (about 5 minutes of CPU per configuration and seed)::

    python benchmarks/claims_ledger.py --configs Haswell/1 Haswell/2 Sandybridge/1 Sandybridge/2 \\
        SkylakeX/1 --seeds 0 1 2 3 4
    python benchmarks/claims_ledger.py --pages chapters/encoder_decoder --seeds 0 1   # one page
    python benchmarks/claims_ledger.py --report-only      # re-summarise the runs already on disk
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
RAW = Path(os.environ.get("MHA_LEDGER_RAW", Path(tempfile.gettempdir()) / "mha-claims-ledger"))
#: The rule: the worst run must clear its threshold by this fraction of the spread of all runs.
SPREAD_FRACTION = 0.5
CELL_TIMEOUT = 600


def pages(root: Path = ROOT) -> dict[str, Path]:
    """Every notebook page of the book, then every assignment, as ``name -> source``."""
    sys.path.insert(0, str(root))
    from book.toc import notebook_pages

    found = dict(notebook_pages(root))
    for path in sorted((root / "assignments").glob("*.md")):
        found[f"assignments/{path.stem}"] = path
    return found


def instrumented_notebook(path: Path, record: Path, seed: int):
    """The page as a notebook whose asserts are recorded; its claims (key -> source) alongside."""
    import jupytext
    import nbformat
    from ledger_instrument import instrument, setup_source

    nb = jupytext.read(path, fmt="md:myst")
    claims = {}
    code_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    for index, cell in enumerate(code_cells):
        source = assignment_source(cell.source) if "assignments" in path.parts else cell.source
        cell.source, found = instrument(source, index)
        claims.update({claim["key"]: claim["source"] for claim in found})
    chdir = f"\nimport os\nos.chdir({str(path.parent)!r})"  # as the build: each page in its own folder
    first = nbformat.v4.new_code_cell(setup_source(record, seed) + chdir)
    nb.cells = [first, *code_cells]
    return nb, claims


def assignment_source(source: str) -> str:
    """An assignment cell as the teacher's solution runs it: markers dropped, hidden tests kept."""
    keep = ("### BEGIN SOLUTION", "### END SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
    return "\n".join(line for line in source.splitlines() if line.strip() not in keep)


def run_worker(names: list[str], seed: int, folder: Path) -> None:
    """Execute each page instrumented, in a fresh kernel; write ``<page>.json`` per page into ``folder``."""
    from nbclient import NotebookClient

    folder.mkdir(parents=True, exist_ok=True)
    found = pages()
    for name in names:
        record = folder / f"{name.replace('/', '__')}.json"
        for attempt in range(2):  # a kernel that dies (killed from outside) gets one more try
            nb, claims = instrumented_notebook(found[name], record, seed)
            started = time.perf_counter()
            client = NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT, allow_errors=True)
            try:
                client.execute()
            except Exception as error:  # a dead kernel or a timeout: the page's claims count as failed
                errors = [{"cell": None, "error": f"{type(error).__name__}: {error}"}]
                if attempt == 0:
                    print(f"  {name}: {errors[0]['error'][:200]}; once more", flush=True)
                    continue
            else:
                errors = [{"cell": index - 1, "error": f"{out['ename']}: {out['evalue']}"[:300]}
                          for index, cell in enumerate(nb.cells) for out in cell.get("outputs", [])
                          if out.get("output_type") == "error"]
            break
        data = json.loads(record.read_text(encoding="utf8")) if record.is_file() else {}
        data.update(page=name, sources=claims, errors=errors, seconds=time.perf_counter() - started)
        record.write_text(json.dumps(data, indent=1), encoding="utf8")
        print(f"  {name}: {len(claims)} claims, {len(errors)} errors, {data['seconds']:.0f} s", flush=True)


def environment(config: str) -> dict[str, str]:
    kernel, threads = config.split("/")
    env = {k: v for k, v in os.environ.items() if k not in {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}}
    if kernel != "native":
        env["OPENBLAS_CORETYPE"] = kernel
    env.update(OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, TQDM_DISABLE="1", MPLBACKEND="Agg")
    return env


def kernel_of(config: str) -> str | None:
    """The kernel OpenBLAS really picks under ``config``, or None when the CPU cannot run it."""
    probe = ("import numpy as np, threadpoolctl; np.ones((8, 8)) @ np.ones((8, 8)); print([i['architecture'] "
             "for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'][0])")
    done = subprocess.run([sys.executable, "-c", probe], env=environment(config), capture_output=True,
                          text=True)
    if done.returncode != 0:  # an illegal instruction: the CPU lacks what the kernel needs
        return None
    return done.stdout.strip() or None


def run(configs: list[str], seeds: list[int], names: list[str], *, checks: bool = False) -> None:
    """Each page under each configuration and seed; with ``checks``, the learner checks' tests too."""
    RAW.mkdir(parents=True, exist_ok=True)
    for config in configs:
        kernel = kernel_of(config)
        wanted = config.split("/")[0]
        if kernel is None or (wanted != "native" and kernel.lower() != wanted.lower()):
            print(f"{config}: not runnable on this CPU (OpenBLAS picks {kernel}); skipped", flush=True)
            skipped = RAW / "skipped.json"
            known = json.loads(skipped.read_text(encoding="utf8")) if skipped.is_file() else {}
            picked = kernel or "nothing (illegal instruction)"
            known[config] = f"not runnable on this CPU: OpenBLAS picks {picked}"
            skipped.write_text(json.dumps(known, indent=1), encoding="utf8")
            continue
        if checks:
            run_checks(config, kernel)
        for seed in seeds:
            folder = RAW / f"{config.replace('/', '-')}-seed{seed}"
            print(f"{config} ({kernel}), seed {seed}:", flush=True)
            subprocess.run([sys.executable, __file__, "--worker", "--seed", str(seed), "--out", str(folder),
                            "--pages", *names], env=environment(config), check=True, cwd=ROOT)


def run_checks(config: str, kernel: str) -> None:
    """The learner checks' own tests (tests/checks) under ``config``: correct learner-style answers must
    pass and every named bug must be caught with the checks' tolerances on this kernel too."""
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/checks", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "--no-header"], env=environment(config), cwd=ROOT,
                          capture_output=True, text=True)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    print(f"{config} ({kernel}) learner checks: {last}", flush=True)
    (RAW / f"checks-{config.replace('/', '-')}.json").write_text(
        json.dumps({"config": config, "kernel": kernel, "passed": done.returncode == 0, "summary": last}),
        encoding="utf8")


# --- the summary ---------------------------------------------------------------------------------------


def load_runs(raw: Path = RAW) -> list[dict[str, Any]]:
    """Every page record under ``raw``, each with the configuration its folder names."""
    records = []
    for path in sorted(raw.glob("*-seed*/*.json")):
        data = json.loads(path.read_text(encoding="utf8"))
        if "page" not in data:  # a run that never finished its page
            continue
        config, seed = path.parent.name.rsplit("-seed", 1)
        data["config"] = config.replace("-", "/")
        data.setdefault("seed", int(seed))  # a page whose kernel died before its first cell recorded
        data.setdefault("machine", {"kernel": config.split("-")[0]})
        records.append(data)
    return records


def judge(margins: list[float], op: str) -> dict[str, Any]:
    """Worst and best margin, spread, and whether the worst clears the rule.

    An equality has no margin to keep: it passes when every run gave exactly the value claimed. A
    non-strict bound (``<=``, ``>=``) may be met with equality (a count at its limit, a bound that
    saturates); a strict one must be cleared.
    """
    worst, best = min(margins), max(margins)
    spread = best - worst
    if op == "==":
        passes = worst == 0
    else:
        cleared = worst >= 0 if op in {"<=", ">="} else worst > 0
        passes = cleared and worst >= SPREAD_FRACTION * spread
    return {"worst": worst, "best": best, "spread": spread, "passes": passes}


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per page and claim: how many runs reached it, held it, and each comparison's margins."""
    by_page: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_page[record["page"]].append(record)
    summary: dict[str, Any] = {}
    for page, runs in sorted(by_page.items()):
        claims: dict[str, Any] = {}
        sources = {key: text for run in runs for key, text in run["sources"].items()}
        for key, text in sources.items():
            reached = [run for run in runs if key in run.get("claims", {})]
            held = [run for run in reached if run["claims"][key]["held"]]
            comparisons: dict[str, Any] = {}
            for run in reached:
                for ckey, entry in run.get("comparisons", {}).items():
                    if not ckey.startswith(key + ","):
                        continue
                    slot = comparisons.setdefault(
                        ckey, {"text": entry["text"], "op": entry["op"], "margins": [], "values": []})
                    if entry.get("margin") is not None:
                        slot["margins"].append(entry["margin"])
                        slot["values"].append(entry.get("measured"))
                    else:
                        slot["values"].append(entry.get("values"))
            for slot in comparisons.values():
                if slot["margins"]:
                    slot.update(judge(slot["margins"], slot["op"]))
                else:  # a ranking, an identity, a key: it must hold in every run (the claim's own count)
                    slot["passes"] = True
            status = "holds"
            if len(reached) < len(runs):
                status = f"not reached in {len(runs) - len(reached)} of {len(runs)} runs"
            elif len(held) < len(reached):
                status = f"fails in {len(reached) - len(held)} of {len(runs)} runs"
            elif not all(slot["passes"] for slot in comparisons.values()):
                status = "at its margin"
            claims[key] = {"source": text, "runs": len(runs), "held": len(held), "status": status,
                           "comparisons": comparisons}
        errors = sorted({f"{run['config']} seed {run['seed']}: cell {e['cell']}: {e['error']}"
                         for run in runs for e in run["errors"]})
        summary[page] = {"claims": claims, "errors": errors,
                         "runs": sorted({f"{run['config']} ({run['machine']['kernel']}) seed {run['seed']}"
                                         for run in runs})}
    return summary


def _number(x: float) -> str:
    return f"{x:.3g}" if x != 0 else "0"


def markdown(ledger: dict[str, Any]) -> str:
    """The ledger as a table per page: every claim, its worst margin and spread, and the verdict."""
    lines = ["# Claims ledger", "",
             "Every assert of every chapter and assignment, run once per seed and BLAS configuration "
             "(`benchmarks/claims_ledger.py`). *Margin*: how far the measured side was from failing, in its "
             f"own units. *Rule*: {ledger['rule']}; an equality must hold exactly, a non-strict bound may be "
             "met with equality.", ""]
    for config, why in ledger["skipped"].items():
        lines.append(f"- {config}: {why}.")
    for checks in ledger["learner_checks"]:
        verdict = "pass" if checks.get("passed") else "FAIL"
        lines.append(f"- Learner checks' tests (`tests/checks`: right answers accepted, named bugs caught, "
                     f"with the checks' tolerances) under {checks.get('config')} ({checks.get('kernel')}): "
                     f"{verdict}, {checks.get('summary')}.")
    lines.append("")
    for page, data in ledger["pages"].items():
        counts = defaultdict(int)
        for claim in data["claims"].values():
            counts[claim["status"].split(" in ")[0]] += 1
        lines += [f"## {page}", "", f"{len(data['runs'])} runs: " + "; ".join(data["runs"]), "",
                  "Claims: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())), ""]
        for error in data["errors"]:
            lines.append(f"- error: {error}")
        lines += ["", "| claim | comparison | worst margin | spread | status |", "|---|---|---|---|---|"]
        for claim in data["claims"].values():
            source = claim["source"].replace("\n", " ").replace("|", "\\|")
            rows = list(claim["comparisons"].values()) or [{}]
            for i, slot in enumerate(rows):
                text = slot.get("text", "").replace("|", "\\|")
                worst = _number(slot["worst"]) if "worst" in slot else "-"
                spread = _number(slot["spread"]) if "spread" in slot else "-"
                passes = "ok" if slot.get("passes", True) else "at its margin"
                status = claim["status"] if i == 0 else passes
                lines.append(f"| {'`' + source[:90] + '`' if i == 0 else ''} | `{text[:70]}` | {worst} | "
                             f"{spread} | {status} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", nargs="*", default=["native/2"], help="KERNEL/THREADS, e.g. Haswell/1")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0])
    parser.add_argument("--pages", nargs="*", help="page names (chapters/encoder_decoder); default: all")
    parser.add_argument("--report-only", action="store_true", help="summarise the runs already on disk")
    parser.add_argument("--checks", action="store_true", help="also run the learner checks' tests per config")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    if args.worker:
        run_worker(args.pages, args.seed, args.out)
        return
    if not args.report_only:
        run(args.configs, args.seeds, args.pages or list(pages()), checks=args.checks)
    ledger = {"rule": f"held in every run, and worst margin >= {SPREAD_FRACTION} x spread of the margins",
              "skipped": _read(RAW / "skipped.json", {}),
              "learner_checks": [_read(path, {}) for path in sorted(RAW.glob("checks-*.json"))],
              "pages": summarise(load_runs())}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "claims_ledger.json").write_text(json.dumps(ledger, indent=1) + "\n", encoding="utf8")
    (RESULTS / "claims_ledger.md").write_text(markdown(ledger), encoding="utf8")
    weak = [(page, claim["source"], claim["status"]) for page, data in ledger["pages"].items()
            for claim in data["claims"].values() if claim["status"] != "holds"]
    for page, source, status in weak:
        print(f"{page}: {status}: {source.splitlines()[0][:100]}")
    claims = sum(len(d["claims"]) for d in ledger["pages"].values())
    print(f"{claims} claims, {len(weak)} not holding by the rule")


def _read(path: Path, default: Any) -> Any:
    return json.loads(path.read_text(encoding="utf8")) if path.is_file() else default


if __name__ == "__main__":
    main()
