# Two commands for a fresh clone:  `make book`  and  `make test`.
# Both create the virtual environment .venv on first use (pip, PyPI builds of torch).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# Leave PROFILE empty to run each chapter at its embedded default (cpu).
PROFILE ?=
PYTEST_ARGS ?=

.PHONY: book test setup clean-book clean help

help:
	@echo "make book   set up .venv, execute every chapter (default profile cpu), build the HTML book"
	@echo "make test   set up .venv, run unit tests, chapter smoke runs and a book-build check"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e ".[test]"
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3"
	touch $(STAMP)

setup: $(STAMP)

book: $(STAMP)
	$(PY) -m replicate book $(if $(PROFILE),--profile $(PROFILE))

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

clean-book:
	rm -rf _build book/chapters

clean: clean-book
	rm -rf $(VENV) .pytest_cache
