# The two quick-start commands: `make book` and `make test` (see README.md).
PYTHON ?= python

.PHONY: install book test lint bench

install:
	$(PYTHON) -m pip install -q -r requirements.txt -e .

book: install
	$(PYTHON) -m jupyter_book build . --warningiserror --keep-going

test: install
	$(PYTHON) -m pip install -q -r requirements-test.txt
	$(PYTHON) -m ruff check mha tests benchmarks
	$(PYTHON) -m pytest

bench: install
	$(PYTHON) benchmarks/bench_forward.py
