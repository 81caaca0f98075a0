"""Weigh a first visit to the built book, and time its first text on a throttled phone.

A first visit is one page opened with an empty cache, until the network is idle: the HTML and every
script, stylesheet, font and image it pulls in. For each page this reports the bytes as stored
(raw) and as a web server sends them compressed (gzip, level 6, for text types: what static hosts
do), and, with ``--time``, the first contentful paint on a phone profile (390x844, touch) with
Chrome's network and CPU throttling (``PHONE_NETWORK``, ``PHONE_CPU_SLOWDOWN``). The local server
compresses as a static host does, so the throttled link carries the gzip bytes.

The browser tests assert the byte budget (``tests/browser/test_phone.py``); times are only
reported, never asserted (they depend on the machine).

Usage: ``python -m book.site_weight [--time] [docname ...]`` after ``make book``.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import threading
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True,
         "has_touch": True}  # fmt: skip
#: "Slow 4G" as Chrome applies it per request (DevTools' preset, and Lighthouse's devtools
#: throttling of its mobile profile): the 150 ms round trip and 1.6 Mbit/s of the network model,
#: times 3.75 and 0.9 (Lighthouse's adjustment factors), since a request-level throttle sees no
#: TCP handshakes or slow start: 562.5 ms per request, 1.44 Mbit/s down, 675 kbit/s up.
PHONE_NETWORK = {"offline": False, "latency": 150 * 3.75, "downloadThroughput": 1.6 * 1024 * 0.9 * 1024 / 8,
                 "uploadThroughput": 750 * 0.9 * 1024 / 8}  # fmt: skip
PHONE_CPU_SLOWDOWN = 4
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]  # fmt: skip

#: Content types a static host compresses.
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")


def gzip_size(body: bytes, content_type: str) -> int:
    """Bytes on the wire for ``body``: gzip level 6 for text types, as is otherwise."""
    if content_type.startswith(COMPRESSIBLE):
        return len(gzip.compress(body, compresslevel=6, mtime=0))
    return len(body)


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder quietly, gzip-compressing text types when the browser accepts it."""

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        content_type = self.guess_type(str(path))
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.is_file() and content_type.startswith(COMPRESSIBLE)):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def serve(folder: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    """Serve ``folder`` on 127.0.0.1 (a free port) in a daemon thread; return its URL and server."""
    handler = functools.partial(GzipHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server


@dataclass
class Visit:
    """What a first visit to one page downloaded."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)  # url -> (raw, gzip)
    first_text_ms: float | None = None

    @property
    def raw(self) -> int:
        return sum(raw for raw, _ in self.files.values())

    @property
    def gzip(self) -> int:
        return sum(packed for _, packed in self.files.values())

    def largest(self, n: int = 5) -> list[tuple[str, int, int]]:
        ranked = sorted(self.files.items(), key=lambda item: -item[1][1])[:n]
        return [(url.rsplit("/", 1)[-1], raw, packed) for url, (raw, packed) in ranked]


def first_visit(browser, url: str, *, throttle: bool = False, **context_args) -> Visit:
    """Open ``url`` in a fresh context (empty cache) and weigh everything it loads."""
    context = browser.new_context(**(context_args or PHONE))
    page = context.new_page()
    visit = Visit()

    def weigh(response):
        try:
            body = response.body()
        except Exception:  # redirects and aborted requests have no body
            return
        content_type = response.headers.get("content-type", "")
        visit.files[response.url] = (len(body), gzip_size(body, content_type))

    page.on("response", weigh)
    if throttle:
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", PHONE_NETWORK)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": PHONE_CPU_SLOWDOWN})
    page.goto(url, wait_until="load", timeout=300_000)
    page.wait_for_load_state("networkidle", timeout=300_000)
    visit.first_text_ms = page.evaluate(
        "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null"
    )
    context.close()
    return visit


def main() -> int:
    from playwright.sync_api import sync_playwright

    from book.toc import toc_docnames

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("docnames", nargs="*", help="pages to weigh (default: every toc page)")
    parser.add_argument("--time", action="store_true", help="also time first text, throttled")
    args = parser.parse_args()
    docnames = args.docnames or toc_docnames(ROOT)
    url, server = serve(SITE)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        print(f"{'page':32} {'raw kB':>8} {'gzip kB':>8} {'first text ms':>14}  largest (gzip kB)")
        for docname in docnames:
            visit = first_visit(browser, f"{url}/{docname}.html")
            if args.time:
                visit.first_text_ms = first_visit(
                    browser, f"{url}/{docname}.html", throttle=True
                ).first_text_ms
            first_text = f"{visit.first_text_ms:.0f}" if args.time and visit.first_text_ms else "-"
            largest = ", ".join(f"{name} {packed / 1e3:.0f}" for name, _, packed in visit.largest(3))
            print(f"{docname:32} {visit.raw / 1e3:8.0f} {visit.gzip / 1e3:8.0f} {first_text:>14}  "
                  f"{largest}")  # fmt: skip
        browser.close()
    server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
