"""Copy the browser files the built book loads into ``_vendor/vendored/`` (git-ignored).

Run after ``npm ci``. Sphinx copies ``_vendor/`` into ``_build/html/_static/`` (see
``html_static_path`` in ``_config.yml``), so pages load KaTeX's stylesheet and fonts from the site
itself instead of a CDN. Only the files pages actually request
are copied, to keep the published site lean.

The folder is deliberately not called ``_static``: Jupyter Book 1 adds a ``<script>`` tag for
every ``.js`` file under a ``_static/`` folder.

Usage: ``python book/vendor_js.py`` from the repository root.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"
TARGET = ROOT / "_vendor" / "vendored"

# (package folder, glob patterns relative to it, destination folder under TARGET)
MANIFEST = [
    (
        "katex",
        # Only the stylesheet and its woff2 fonts: the math itself is typeset at build time
        # (sphinxcontrib-katex runs KaTeX in Node), so pages load no KaTeX script. Every browser
        # that runs the site reads woff2; rewrite_katex_css drops the woff/ttf fallbacks.
        ["dist/katex.min.css", "dist/fonts/*.woff2", "LICENSE"],
        "katex",
    ),
]


def copy_package(package: str, patterns: list[str], destination: str) -> int:
    """Copy the files of one npm package matching ``patterns``; return how many were copied."""
    source = NODE_MODULES / package
    if not source.is_dir():
        raise SystemExit(f"{source} is missing: run `npm ci` first (see Makefile target `book`)")
    count = 0
    for pattern in patterns:
        matches = sorted(p for p in source.glob(pattern) if p.is_file())
        if not matches:
            raise SystemExit(f"no file in {source} matches {pattern!r}: did the package change?")
        for path in matches:
            relative = path.relative_to(source)
            # dist/ and es5/ are build folders: flatten them away so URLs stay short
            if relative.parts[0] in {"dist", "es5"}:
                relative = Path(*relative.parts[1:])
            target = TARGET / destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            count += 1
    return count


def rewrite_katex_css(path: Path) -> None:
    """Keep only the woff2 source of each ``@font-face`` (the only fonts copied), read with tinycss2."""
    import tinycss2

    rules = tinycss2.parse_stylesheet(path.read_text(encoding="utf8"))
    dropped = 0
    for rule in rules:
        if rule.type != "at-rule" or rule.lower_at_keyword != "font-face":
            continue
        declarations = tinycss2.parse_declaration_list(rule.content)
        for declaration in declarations:
            if declaration.type == "declaration" and declaration.lower_name == "src":
                sources = [""]
                for token in declaration.value:  # the sources, split at their commas
                    if token == ",":
                        sources.append("")
                    else:
                        sources[-1] += tinycss2.serialize([token])
                kept = [source for source in sources if 'format("woff2")' in source]
                dropped += len(sources) - len(kept)
                declaration.value = tinycss2.parse_component_value_list(",".join(kept))
        rule.content = tinycss2.parse_component_value_list(tinycss2.serialize(declarations))
    if dropped == 0:
        raise SystemExit(f"{path}: no woff/ttf fallback to drop: did KaTeX's stylesheet change?")
    path.write_text(tinycss2.serialize(rules), encoding="utf8")


def main() -> int:
    if TARGET.exists():
        shutil.rmtree(TARGET)
    total = sum(copy_package(*entry) for entry in MANIFEST)
    rewrite_katex_css(TARGET / "katex" / "katex.min.css")
    size = sum(p.stat().st_size for p in TARGET.rglob("*") if p.is_file())
    print(f"vendored {total} files ({size / 1e6:.1f} MB) into {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
