"""Execute chapters with papermill and build the book.

A chapter's source is a MyST-markdown notebook ``notebooks/NAME.md``; the book reads
its executed copy ``book/chapters/NAME.ipynb`` (listed in ``_toc.yml``). Execution:

1. read the ``.md`` with jupytext (papermill cannot read MyST) into a NotebookNode;
2. validate the requested parameters against the chapter's ``parameters`` cell
   (names, types) and the profile against :mod:`replicate.profiles`, *before* any
   kernel starts;
3. execute with papermill, kernel ``python3``, working directory the repository root;
4. tag the injected-parameters cell ``hide-cell``, record provenance in
   ``metadata.replicate`` (commit, package hash, parameters, profile, device,
   versions, wall time, input hash) and write the notebook atomically.

A chapter whose input hash (source, package source, parameters) matches the executed
copy is skipped. The book is then built by ``jupyter-book build`` with execution off
and warnings as errors.

Which profile the book shows (``replicate book`` without ``--profile``, i.e. ``make
book``): an experiment chapter is executed at the largest profile of
:data:`BOOK_PROFILES` whose plan at the chapter's default parameters validates and has
every run in the committed ``results/`` store (:func:`showable_profile`), and at its own
default (``cpu``) otherwise - so the book shows the numbers of the larger networks (``gpu``:
a CIFAR ResNet-18; ``paper``: the papers' networks) wherever they were committed, and never
trains to show them. The choice is logged, and the executed
notebook's provenance (the reproducibility page) records the profile.

The code is in three modules, each importing only the ones above it in this list:

- :mod:`.chapters` -- finding the chapters (``_toc.yml``, :func:`toc_chapters`) and reading and
  validating their parameters (:func:`read_notebook`, :func:`validate_parameters`);
- :mod:`.execution` -- executing one chapter with papermill (:func:`execute`), skipping it when
  its inputs are unchanged, and the data sets it needs (:func:`data_needs`);
- :mod:`.book` -- building the book (:func:`build`): every chapter at the profile the book
  shows (:func:`showable_profile`), then ``jupyter-book build`` (:func:`build_html`). The
  Sphinx extensions and page checks it loads are :mod:`replicate.book`, a package below the
  analyses that imports nothing of this one.

Every name is re-exported here (``runner.execute``, ``from replicate.runner import build``).
A function looks up the functions it calls in its own module, so a test that replaces one
patches the module of the caller: ``monkeypatch.setattr(runner.book, "execute", ...)``
changes what :func:`build` runs; ``monkeypatch.setattr(runner, "execute", ...)`` does not.
"""
from __future__ import annotations

from .chapters import (CHAPTER_DIR, KERNEL, SOURCE_DIR, Chapter, default_parameters, parse_value, read_notebook,
                       resolve_notebook, toc_chapters, validate_parameters)
from .execution import (ChapterError, data_needs, default_output, execute, input_hash, is_up_to_date,
                        quiet_kernel_manager, will_skip)
from .book import (BOOK_DIR_ENV, BOOK_PROFILES, build, build_html, check_data, execute_all, provenance_table,
                   showable_profile)

__all__ = [
    # chapters
    "CHAPTER_DIR", "KERNEL", "SOURCE_DIR", "Chapter", "default_parameters", "parse_value", "read_notebook",
    "resolve_notebook", "toc_chapters", "validate_parameters",
    # execution
    "ChapterError", "data_needs", "default_output", "execute", "input_hash", "is_up_to_date", "quiet_kernel_manager",
    "will_skip",
    # book
    "BOOK_DIR_ENV", "BOOK_PROFILES", "build", "build_html", "check_data", "execute_all", "provenance_table",
    "showable_profile",
]
