"""Building and checking the HTML book: the Sphinx extensions and the checks of the built pages.

- :mod:`.html` -- the book's Sphinx extension: MathJax served from the book, sortable and
  laid-out tables, section slugs as ids, exercises numbered per chapter, glossary links;
- :mod:`.api` -- the Sphinx extension behind the API reference (citations and numpy-style
  sections in docstrings, references to package objects without a page of their own);
- :mod:`.tables` -- sortable (and filterable) HTML tables with the vendored scripts;
- :mod:`.layout` -- the reader's table layout (padded cells, wrapped long cells, scroll boxes);
- :mod:`.glossary` -- the glossary's terms, linked from their first use on every page;
- :mod:`.check` -- the headless-Chromium check of every built page (``python -m replicate.book.check``);
- :mod:`.notebook_checks` -- warnings in executed chapters;
- :mod:`.scale` -- the scale box atop every experiment chapter (its numbers come from
  :func:`replicate.comparison.scale.describe`; a chapter's report makes the box):
  the runs' size and the noise floor of their ECE.

Nothing here imports the chapters: the book machinery sits below the package's analyses.
"""
