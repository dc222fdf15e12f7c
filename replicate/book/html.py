"""Sphinx extension for the HTML book: MathJax served from the book, scripts included once.

``_config.yml`` loads it with ``sphinx: extra_extensions: [replicate.book.html]``.

**MathJax with no network.** Sphinx loads MathJax from a CDN by default
(``sphinx.ext.mathjax.MATHJAX_URL``), so a book opened offline shows raw TeX. Here every
HTML build copies MathJax into ``_build/html/_static/mathjax/`` and points ``mathjax_path``
there; the book then works the same from a local folder (``file://`` too), a machine
without network and GitHub Pages.

The files come from the PyPI package ``django-static-mathjax`` 3.2.2 (import name
``mathjax``; Apache-2.0; it does not need Django), which ships the MathJax team's
``mathjax-full`` 3.2.2 distribution: the source and its ``es5`` build. (Its ``es5`` files
are built from the same 3.2.2 source as the npm package ``mathjax@3.2.2`` but minified
separately, so they are not byte-identical to it.) Nothing is vendored in this repository. Copied: the component Sphinx uses by
default, ``tex-mml-chtml.js``, and the folders it loads from on demand (TeX and MathML
extensions, the CHTML fonts, the accessibility menu and its speech rules); left out: the
other combined components and the SVG output (about 7 MB copied instead of 24 MB).

A ``mathjax_path`` set in ``_config.yml`` other than Sphinx's CDN default is left alone.

**Sortable tables.** Tables written by :func:`replicate.book.tables.sortable_table` (class
``sortable``) are sorted by a click on a column header by the script of the npm package
``sortable-tablesort`` 4.1.7 (the Unlicense; no PyPI package ships it, so its two small
script files and its style sheet are vendored unchanged, with a header naming the source, in
``replicate/static/sortable/``). Tables written with filters are filtered by the project's
own script ``replicate/static/filter/table-filter.js``. ``replicate/static`` is added to
``html_static_path``, so Sphinx copies them into ``_static/``, and every page loads them
(about 7 KB).

**MyST's heading slugs are anchors.** With ``myst_heading_anchors`` MyST computes a slug
for each heading (``#prop-2-the-lambert-w-γ``) and resolves markdown links to it, but the
HTML element keeps docutils' id (``prop-2-the-lambert-w``). A link written as raw HTML (the
claims ledger's table, :func:`replicate.claims.ledger.ledger_table`, links each claim to
its section at the slug :func:`replicate.claims.ledger.link` computes) would miss; so each
section that has a slug other than its ids also gets the slug as an id (an empty anchor
element in the page).

**Tables laid out for reading.** Every page's tables in cell outputs are marked by
:func:`replicate.book.layout.mark_tables` (padded cells, short ones on one line, long ones
wrapped at a readable width, a visible scroll edge for a table wider than the column), styled
by ``replicate/static/reader/tables.css``.

**Exercises numbered per chapter.** Sphinx numbers enumerable nodes across the whole book
when the table of contents is not numbered, so a chapter's first exercise was "Exercise 4".
After Sphinx assigns the numbers (``env-get-updated``), :func:`per_chapter_exercise_numbers`
renumbers the exercises of each page from 1 in page order; references and solution titles
("Solution to Exercise 2") read the same numbers.

**Glossary links.** :mod:`replicate.book.glossary` links the first use of every term of the
glossary page in each page to its definition.

**Figures described.** A chapter's figure is a PNG whose ``Description`` text chunk holds
its alt text, written from the figure (:mod:`replicate.plots.alt_text`); each image without
an alt text of its own gets it (:func:`alt_from_images`), instead of its file name.

**Each script once.** sphinx-thebe 0.3 registers its inline configuration script
(``const THEBE_JS_URL = ...``) after the HTML builder has started, and Sphinx 7 then
writes it twice into every page; the second copy throws "Identifier 'THEBE_JS_URL' has
already been declared". Identical script entries are dropped from each page's context.
"""
from __future__ import annotations

import shutil
from pathlib import Path

COMPONENT = "tex-mml-chtml.js"
TARGET = "mathjax"  # folder under _static
#: folders of the es5 build that ``tex-mml-chtml.js`` may load files from at run time
FOLDERS = ("input", "output/chtml", "a11y", "ui", "sre", "adaptors")


def source_dir() -> Path:
    """The ``es5`` folder of the installed MathJax 3 package; a one-line error if it is missing."""
    try:
        import mathjax
    except ImportError:
        raise ModuleNotFoundError("the book serves MathJax from the package 'django-static-mathjax' "
                                  "(import name 'mathjax'), which is not installed: "
                                  "pip install 'django-static-mathjax>=3.2.2,<4'") from None
    es5 = Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5"
    if not (es5 / COMPONENT).is_file():
        raise FileNotFoundError(f"the installed 'mathjax' package has no {COMPONENT} under {es5}")
    return es5


def version() -> str:
    """The MathJax version of the installed files (``package.json`` beside ``es5``)."""
    import json

    return json.loads((source_dir().parent / "package.json").read_text())["version"]


def copy_mathjax(static_dir: Path) -> Path:
    """Copy the component and its on-demand folders to ``static_dir/mathjax``; return that folder."""
    src, dst = source_dir(), Path(static_dir) / TARGET
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / COMPONENT, dst / COMPONENT)
    for folder in FOLDERS:
        shutil.copytree(src / folder, dst / folder, dirs_exist_ok=True)
    return dst


def _use_local_path(app, config) -> None:
    from sphinx.ext import mathjax as sphinx_mathjax

    if config.mathjax_path in (None, "", sphinx_mathjax.MATHJAX_URL):
        source_dir()  # fail early, before any page is written, when the package is missing
        config.mathjax_path = f"{TARGET}/{COMPONENT}"  # relative paths are taken from _static/


def _copy_after_build(app, exception) -> None:
    if exception is None and app.builder.format == "html" and \
            app.config.mathjax_path == f"{TARGET}/{COMPONENT}":
        copy_mathjax(Path(app.outdir) / "_static")


def _add_sortable_tables(app, config) -> None:
    """Serve the table-sorting script and style sheet of :mod:`replicate.book.tables` from the
    book's ``_static`` folder (``replicate/static`` is added to ``html_static_path``) and load
    them on every page (about 7 KB; they act only on tables of class ``sortable`` and on the
    filter forms written with them)."""
    from .tables import SCRIPTS, STATIC_DIR, STYLESHEETS

    missing = [f for f in (*SCRIPTS, *STYLESHEETS) if not (STATIC_DIR / f).is_file()]
    if missing:
        raise FileNotFoundError(f"the table-sorting files {missing} are missing under {STATIC_DIR}")
    config.html_static_path = [*config.html_static_path, str(STATIC_DIR)]
    for js in SCRIPTS:
        app.add_js_file(js)
    for css in STYLESHEETS:
        app.add_css_file(css)


def add_slug_ids(doctree) -> int:
    """Give every section with a MyST heading slug (``section["slug"]``) that slug as an
    extra id; returns how many sections got one."""
    from docutils import nodes

    added = 0
    for section in doctree.findall(nodes.section):
        slug = section.get("slug")
        if slug and slug not in section["ids"]:
            section["ids"].append(slug)
            added += 1
    return added


def _slug_anchors(app, doctree, docname) -> None:
    add_slug_ids(doctree)


def alt_from_images(doctree, srcdir, docname: str) -> int:
    """Give every image of ``doctree`` that has no alt text of its own (none, or its own
    path, Sphinx's default) the ``Description`` its PNG carries
    (:func:`replicate.plots.alt_text.read_png_description`: the chapters' figures carry the
    text :func:`replicate.plots.alt_text.describe` wrote); returns how many got one."""
    from docutils import nodes

    from ..plots.alt_text import read_png_description

    srcdir = Path(srcdir)
    done = 0
    for node in doctree.findall(nodes.image):
        uri = node.get("uri", "")
        if node.get("alt") and node["alt"] != uri:
            continue
        rel = (node.get("candidates") or {}).get("*", uri)
        for path in (srcdir / rel, srcdir / Path(docname).parent / uri, Path(uri)):
            text = read_png_description(path) if path.is_file() else None
            if text:
                node["alt"] = text
                done += 1
                break
    return done


def _alt_text(app, doctree, docname) -> None:
    alt_from_images(doctree, app.srcdir, docname)


def _add_table_layout(app, config) -> None:
    """Load the style sheet of :mod:`replicate.book.layout` on every page (``replicate/static``
    is on ``html_static_path`` already, see :func:`_add_sortable_tables`)."""
    from .layout import STYLESHEET
    from .tables import STATIC_DIR

    if not (STATIC_DIR / STYLESHEET).is_file():
        raise FileNotFoundError(f"the table style sheet {STYLESHEET} is missing under {STATIC_DIR}")
    app.add_css_file(STYLESHEET)


def _lay_out_tables(app, pagename, templatename, context, doctree) -> None:
    if isinstance(context.get("body"), str):
        from .layout import mark_tables

        context["body"] = mark_tables(context["body"])


def per_chapter_exercise_numbers(fignumbers: dict) -> dict:
    """``env.toc_fignumbers`` (docname -> figure type -> node id -> number tuple) with the
    ``exercise`` numbers of each document replaced by 1, 2, ... in the order of the given
    numbers (the document's order); other types and documents are left as they are."""
    out = {}
    for doc, kinds in fignumbers.items():
        numbers = kinds.get("exercise")
        if numbers:
            order = sorted(numbers, key=lambda node_id: numbers[node_id])
            kinds = {**kinds, "exercise": {node_id: (i,) for i, node_id in enumerate(order, start=1)}}
        out[doc] = kinds
    return out


def _number_exercises_per_chapter(app, env) -> list:
    new = per_chapter_exercise_numbers(env.toc_fignumbers)
    changed = [doc for doc, kinds in new.items() if kinds != env.toc_fignumbers.get(doc)]
    env.toc_fignumbers = new
    return changed


def unique_scripts(scripts: list) -> list:
    """``scripts`` without repeats: an entry with the same file (or inline body) and attributes
    as an earlier one is dropped, whatever its priority (an inline script may come with
    filename ``None`` once and ``""`` the other time)."""
    seen, out = set(), []
    for js in scripts:
        attrs = getattr(js, "attributes", {})
        name = getattr(js, "filename", js) or ""  # an inline script's filename is None or ""
        key = (str(name), tuple(sorted((k, str(v)) for k, v in attrs.items())))
        if key not in seen:
            seen.add(key)
            out.append(js)
    return out


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])


def setup(app):
    """Sphinx entry point."""
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _use_local_path)
    app.connect("config-inited", _add_sortable_tables)
    app.connect("config-inited", _add_table_layout)
    app.connect("html-page-context", _lay_out_tables)
    # after Sphinx's own numbering (TocTreeCollector listens at the default priority 500)
    app.connect("env-get-updated", _number_exercises_per_chapter, priority=900)
    from . import glossary

    glossary.setup(app)                     # the first use of each glossary term links to it
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.connect("doctree-resolved", _slug_anchors)
    app.connect("doctree-resolved", _alt_text)
    app.connect("build-finished", _copy_after_build)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
