"""How fast the built book reaches a phone reader: Lighthouse, first text, first widget, bytes.

For each page (default: the four the site's targets name), served with gzip as a static host does
(``book.site_weight.serve``), in alternating rounds (every page once per round):

- **Lighthouse** 12.2.3 (npm, pinned in ``benchmarks/site/package.json``) in its default mobile
  mode (simulated Slow 4G, 4x CPU slowdown), run with Debian's Chromium: the Performance score and
  its metrics (FCP, LCP, TBT, Speed Index, CLS);
- **first text** and **first widget** in a real Chromium on a phone (390x844, touch) with Chrome's
  own throttling (Slow 4G, 4x CPU; ``book.site_weight``), empty cache: the first contentful paint,
  and the time until the page's first interactive view (an explorer, an attention or softmax
  view) can take input, for a reader who scrolls to it as soon as the text shows;
- **first visit** bytes (raw and gzip) of the page and everything it loads, unthrottled.

Targets (issue 38): Performance >= 90; first text <= 2 s; first widget <= 6 s; a first visit
<= 1.5 MB gzip on a widget page and <= 0.5 MB on a text page. Times depend on the machine: every run
prints the machine line (its matmul rate, now) first, and the load average.

Usage, from the repository root after ``make book``::

    npm ci --prefix benchmarks/site     # once: Lighthouse (needs Node 18+)
    python benchmarks/bench_site.py --runs 3
    python benchmarks/bench_site.py --site /path/to/another/_build/html --no-lighthouse
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import machine_line  # noqa: E402 - benchmarks/ is on sys.path when run

from book.site_weight import (  # noqa: E402 - after the path is set
    CHROMIUM_ARGS,
    PHONE,
    PHONE_CPU_SLOWDOWN,
    PHONE_NETWORK,
    first_visit,
    serve,
)

PAGES = ["intro", "chapters/multi_head", "chapters/real_heads", "glossary"]
CHROMIUM = "/usr/bin/chromium"
LIGHTHOUSE = ROOT / "benchmarks" / "site" / "node_modules" / "lighthouse" / "cli" / "index.js"
METRICS = {
    "first-contentful-paint": "FCP",
    "largest-contentful-paint": "LCP",
    "total-blocking-time": "TBT",
    "speed-index": "SI",
    "cumulative-layout-shift": "CLS",
}

#: The first interactive view in document order: an explorer (HTML from the build, answering once
#: assets/static-widgets.js has run), or an attention / softmax view (mounted by their own scripts).
FIRST_VIEW_JS = """() => {
  const views = document.querySelectorAll('.widget-subarea, .mha-av, .mha-sv, .mha-widget');
  const view = views[0];
  if (!view) return false;
  (view.closest('.cell_output') || view.parentElement).scrollIntoView({block: 'center'});
  return true;
}"""
#: Resolves with the time (ms since navigation) at which that view first has a control.
VIEW_READY_JS = """() => new Promise((resolve) => {
  const controls = '.mha-av button, .mha-av select, .mha-sv input';
  (function check() {
    const frames = document.documentElement.dataset.mhaFrames
      && document.querySelector('.widget-subarea input');
    if (frames || document.querySelector(controls)) resolve(performance.now());
    else setTimeout(check, 20);
  })();
})"""


def throttled_times(browser, url: str) -> tuple[float | None, float | None]:
    """First contentful paint and first interactive view (ms) on a throttled phone, cold cache."""
    context = browser.new_context(**PHONE)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send("Network.emulateNetworkConditions", PHONE_NETWORK)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": PHONE_CPU_SLOWDOWN})
    page.goto(url, wait_until="domcontentloaded", timeout=300_000)
    widget_ms = None
    if page.evaluate(FIRST_VIEW_JS):
        widget_ms = page.evaluate(VIEW_READY_JS)
    page.wait_for_load_state("load", timeout=300_000)
    first_text = page.evaluate(
        "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null")
    context.close()
    return first_text, widget_ms


def lighthouse(url: str) -> dict[str, float]:
    """One Lighthouse mobile run: the Performance score (0-100) and its metrics (ms; CLS unitless)."""
    if not LIGHTHOUSE.is_file():
        raise SystemExit(f"{LIGHTHOUSE} is missing: run `npm ci --prefix benchmarks/site` first")
    command = ["node", str(LIGHTHOUSE), url, "--only-categories=performance", "--output=json",
               "--output-path=stdout", "--quiet",
               "--chrome-flags=--headless=new " + " ".join(CHROMIUM_ARGS)]  # fmt: skip
    env = {**os.environ, "CHROME_PATH": CHROMIUM}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"lighthouse failed on {url}:\n{done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    result = {"score": round(100 * report["categories"]["performance"]["score"])}
    for audit, name in METRICS.items():
        result[name] = report["audits"][audit]["numericValue"]
    return result


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _ms(value):
    return "-" if value is None else f"{value / 1000:.2f} s"


def main() -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", default=PAGES, help=f"docnames (default: {PAGES})")
    parser.add_argument("--site", type=Path, action="append",
                        help="a built site (default _build/html); give two to compare them in alternation")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-lighthouse", action="store_true")
    args = parser.parse_args()
    sites = args.site or [ROOT / "_build" / "html"]
    print(machine_line(), flush=True)
    print(f"Sites: {', '.join(map(str, sites))}; load average at start {os.getloadavg()[0]:.1f}", flush=True)
    served = [serve(site) for site in sites]
    rows: dict[tuple[int, str], list[dict]] = {(s, page): [] for s in range(len(sites))
                                               for page in args.pages}  # fmt: skip
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        weights = {(s, page): first_visit(browser, f"{url}/{page}.html")
                   for s, (url, _) in enumerate(served) for page in args.pages}  # fmt: skip
        for run in range(args.runs):
            for page in args.pages:  # alternating: every page once per round, on each site in turn
                for s, (url, _) in enumerate(served):
                    page_url = f"{url}/{page}.html"
                    row = {}
                    row["first_text"], row["first_widget"] = throttled_times(browser, page_url)
                    if not args.no_lighthouse:
                        row.update(lighthouse(page_url))
                    rows[s, page].append(row)
                    lh = (f"Lighthouse {row['score']:3d} (FCP {_ms(row['FCP'])}, LCP {_ms(row['LCP'])}, "
                          f"TBT {row['TBT']:.0f} ms, SI {_ms(row['SI'])}, CLS {row['CLS']:.3f})"
                          if "score" in row else "")  # fmt: skip
                    print(f"run {run + 1} site {s} {page:22} first text {_ms(row['first_text'])}, "
                          f"first widget {_ms(row['first_widget'])}  {lh}  load {os.getloadavg()[0]:.1f}",
                          flush=True)
        browser.close()
    for _, server in served:
        server.shutdown()
    print("\nsite page                    gzip MB  raw MB  first text (runs)       first widget (runs)"
          "      Lighthouse (runs)")
    for (s, page), runs in rows.items():
        visit = weights[s, page]
        texts = ", ".join(_ms(r["first_text"]) for r in runs)
        widgets = ", ".join(_ms(r["first_widget"]) for r in runs)
        scores = ", ".join(str(r["score"]) for r in runs if "score" in r) or "-"
        print(f"{s:4} {page:22} {visit.gzip / 1e6:8.2f} {visit.raw / 1e6:7.2f}  {texts:23} {widgets:24} "
              f"{scores}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
