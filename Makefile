# Two commands for a fresh clone:  `make book`  and  `make test`.
# Both create the virtual environment .venv on first use (pip, PyPI builds of torch).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
LOCK   := requirements.lock
# Leave PROFILE empty to run each chapter at its embedded default (cpu).
PROFILE ?=
# Two test processes (pytest-xdist, of the test extra), each test file kept in one of them:
# 8 min 17 s on 2 cores against 14 min serially (2026-11-28); PYTEST_ARGS= runs them in one.
PYTEST_ARGS ?= -n 2 --dist loadfile
# make publish pushes the built book to this branch of this git remote (GitHub Pages).
REMOTE ?= origin
PAGES_BRANCH ?= gh-pages

.PHONY: book test check-html publish setup lock dist clean-book clean help gpu-job gpu-job-check gpu-job-check-chapter gpu-job-restore gpu-job-twin

help:
	@echo "make book        set up .venv, execute every chapter (default profile cpu), build the HTML book"
	@echo "make test        set up .venv, run unit tests, chapter smoke runs, a book build and its HTML check"
	@echo "make check-html  load every page of the built book in headless Chromium, offline (needs chromium)"
	@echo "make publish     build the book and push _build/html to the $(PAGES_BRANCH) branch of $(REMOTE)"
	@echo "make lock        rewrite requirements.lock from pyproject.toml (UPGRADE=1: newest allowed versions)"
	@echo "make dist        build the sdist and the wheel into dist/ (python -m build) and check them with twine"
	@echo "make gpu-job-check  put the data the GPU queue needs and the wheels the job needs (jupytext) into .gpu-carry/, keep the committed logits off the device, say what would travel"
	@echo "make gpu-job-check-chapter  the same, plus the wheels and runs' logits with which the job executes the Mukhoti chapter at gpu on the machine"
	@echo "make gpu-job-restore  after the device call: the logits gpu-job-check kept off the device back in the index"
	@echo "make gpu-job-twin  after gpu-job-check: rehearse the device call here, on what would travel, with a Python 3.12 holding only the GPU image's packages (smoke, CPU)"
	@echo "make gpu-job     (on a lent GPU machine) train the GPU queue's next runs, pack them into \$$OUT; execute the Mukhoti chapter at gpu once its runs are finished and its wheels carried"

# make book and make test install the exact versions of $(LOCK) (every extra, hashes
# checked), then the package itself; `make lock` rewrites the lock from pyproject.toml.
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r $(LOCK)
	$(PY) -m pip uninstall --yes --quiet replicate 2>/dev/null || true  # this package's former distribution name
	$(PY) -m pip install --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3"
	touch $(STAMP)

setup: $(STAMP)

book: $(STAMP)
	$(PY) -m replicate book $(if $(PROFILE),--profile $(PROFILE))

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# The lock: exact versions and hashes of every dependency and extra, for every platform and
# Python >= 3.11 (uv's universal resolution). Without UPGRADE the versions already in the lock
# are kept where they still satisfy pyproject.toml.
lock: $(STAMP)
	$(PY) -m pip install --quiet "uv>=0.5"
	$(VENV)/bin/uv pip compile pyproject.toml --all-extras --universal --generate-hashes --python-version 3.11 \
	  --custom-compile-command "make lock" $(if $(UPGRADE),--upgrade) --output-file $(LOCK)

# The sdist and the wheel of the distribution focal-calibration, checked by twine (metadata,
# README rendering). tests/test_wheel.py checks what the wheel holds.
dist: $(STAMP)
	rm -rf dist build
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

# Checks the book as built by `make book`: math typeset with no network, internal links,
# images, JavaScript errors. Uses the system Chromium (Debian/Ubuntu: apt-get install chromium).
check-html: $(STAMP)
	$(PY) -m replicate.book.check _build/html

# Manual deploy to GitHub Pages (the workflow .github/workflows/book.yml does it on every
# push to main). The book's repository and launch buttons point at origin when it is on GitHub
# (or at REPLICATE_REPOSITORY; README, "The HTML book: offline math, checks, publishing").
publish: book
	$(PY) -m pip install --quiet -e ".[publish]"
	$(VENV)/bin/ghp-import --no-jekyll --force --push --remote $(REMOTE) --branch $(PAGES_BRANCH) \
	  --message "Publish the book from $$(git rev-parse --short HEAD)" _build/html

clean-book:
	rm -rf _build book/chapters

clean: clean-book
	rm -rf $(VENV) .pytest_cache dist build

# The GPU job (issue #20; CONTRIBUTING.md "GPU loans"). On the GPU machine there is no
# virtual environment and no network: the machine's python3 runs the package from the
# checkout, with the data carried in .gpu-carry/data. GPU_JOB_ARGS passes options
# (e.g. GPU_JOB_ARGS="--budget 300" for a second command on a warm machine: CONTRIBUTING, GPU loans).
GPU_JOB_ARGS ?=
gpu-job:
	REPLICATE_DATA=$${REPLICATE_DATA:-$(CURDIR)/.gpu-carry/data} PYTHONUNBUFFERED=1 \
	  $(PYTHON) -m replicate gpu-job --out $${OUT:-gpu-out} $(GPU_JOB_ARGS)

gpu-job-check: $(STAMP)
	$(PY) -m replicate gpu-job --check-travel $(GPU_JOB_ARGS)

gpu-job-check-chapter: $(STAMP)
	$(PY) -m replicate gpu-job --check-travel --with-chapter $(GPU_JOB_ARGS)

# Rehearse the next device call here (issue #20): stage exactly what would travel (after
# `make gpu-job-check`) into a fresh folder and run the job's own command there with a
# Python 3.12 that has only the GPU image's packages (benchmarks/image_twin.txt; built once
# into $(TWIN), about 3 GB with PyPI's CUDA torch), at the smoke profile on the CPU.
TWIN_PYTHON ?= python3.12
TWIN        ?= $(CURDIR)/.twin
gpu-job-twin: $(STAMP)
	test -x $(TWIN)/bin/python3 || { $(TWIN_PYTHON) -m venv $(TWIN) && $(TWIN)/bin/pip install -q -r benchmarks/image_twin.txt; }
	dest=$$(mktemp -d)/checkout && $(PY) -m replicate gpu-job --stage $$dest && cd $$dest && \
	  env -i PATH=$(TWIN)/bin:/usr/bin:/bin HOME=$$dest OUT=$$dest/out \
	    make gpu-job GPU_JOB_ARGS="--profile smoke --device cpu --workers 2 $(GPU_JOB_ARGS)" && \
	  echo "gpu-job-twin: the staged checkout and its output are in $$dest"

gpu-job-restore: $(STAMP)
	$(PY) -m replicate gpu-job --restore
