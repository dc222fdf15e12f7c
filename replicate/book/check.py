"""Check the built HTML book as a reader's browser sees it, with no network.

Every ``*.html`` page of a built book (``_build/html``) is served from a local HTTP server
on 127.0.0.1 and loaded in headless Chromium, driven by Playwright. Requests to any other
host are refused, so a page that needs the network (a CDN script, a web font) fails. A
page fails on:

``math``       math left as TeX source: a Sphinx math node (``.math``) that MathJax did
               not typeset, or ``$$``, ``\\(``, ``\\)``, ``\\[``, ``\\]`` text outside code;
``math-error`` a TeX error typeset by MathJax (``mjx-merror``);
``link``       an internal link to a page or file that does not exist, or to an anchor
               (``#id``) that the target page does not have;
``image``      an image that did not load (``naturalWidth == 0``);
``alt``        an image of the article with no alt text that describes it (none, a file
               name, matplotlib's ``<Figure size ...>``, a word or two);
``solution``   an exercise solution (sphinx-exercise ``.solution``) shown open when the page
               loads, instead of folded;
``truncated``  a table cell cut short: its text ends in "..." or "…" (pandas' cut of a long
               cell, or a row or column left out) or CSS cuts it with an ellipsis;
``overflow``   a table wider than the page's content column (the article; the window for a
               full-width cell), or running under the side panel on the right, that does
               not sit in a scroll box of its own (an element with ``overflow-x: auto`` or
               ``scroll`` that fits the column);
``crowded``    two numbers in neighbouring cells of a table row closer than 4 px, which a
               reader takes for one ("10.826.47");
``overlap``    two text boxes of the page drawn over each other;
``javascript`` an uncaught exception or a console error;
``resource``   a local file the page loads that answers an HTTP error;
``network``    a request to a host other than the local server.

Pages are loaded in a window of 1280 x 800 CSS px (the desktop layout, with the side
panel); :mod:`replicate.book.page_layout` holds what is measured of the layout. The browser is the system's Chromium (Debian package ``chromium``; ``$REPLICATE_CHROMIUM``
names another binary); Playwright never downloads a browser of its own. Command line::

    python -m replicate.book.check [_build/html]      # exit 1 when a page fails

This module imports no torch and no replicate submodule but :mod:`replicate.book.page_layout`.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from .page_layout import LAYOUT_JS as _LAYOUT_JS, VIEWPORT

CHROMIUM_ENV = "REPLICATE_CHROMIUM"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LAUNCH_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync")
SKIP_DIRS = ("_static", "_sources", "_images", "_sphinx_design_static", ".doctrees", "jupyter_execute")
KINDS = ("math", "math-error", "link", "image", "alt", "solution", "truncated", "overflow", "crowded", "overlap",
         "javascript", "resource", "network")

# Runs in the page after it loaded (and after MathJax finished typesetting).
_INSPECT_JS = r"""
async () => {
  await Promise.all([...document.images].map(img => {
    img.loading = 'eager';
    return img.complete ? null : new Promise(r => { img.onload = img.onerror = r; setTimeout(r, 5000); });
  }));
  const CODE = 'pre, code, script, style, textarea, .highlight, mjx-container, mjx-assistive-mml';
  const snippet = s => s.replace(/\s+/g, ' ').trim().slice(0, 80);
  const untypeset = [...document.querySelectorAll('.math')]
    .filter(e => !e.querySelector('mjx-container') && !e.closest(CODE)).map(e => snippet(e.textContent));
  const texText = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement;
    if (!p || p.closest(CODE) || p.closest('.math')) continue;
    if (/\$\$|\\\(|\\\)|\\\[|\\\]/.test(n.textContent)) texText.push(snippet(n.textContent));
  }
  const errors = [...document.querySelectorAll('mjx-merror')]
    .map(e => e.getAttribute('data-mjx-error') || snippet(e.textContent));
  const images = [...document.images].filter(i => !i.naturalWidth)
    .map(i => i.getAttribute('src') || '(no src)');
  const shown = e => e.getBoundingClientRect().height > 0 && getComputedStyle(e).visibility !== 'hidden'
    && (!e.checkVisibility || e.checkVisibility({opacityProperty: true, visibilityProperty: true}));
  const openSolutions = [...document.querySelectorAll('.solution')]
    .filter(s => [...s.children].some(c => !c.classList.contains('admonition-title') && shown(c)))
    .map(s => s.id || snippet(s.textContent));
  const ids = [...document.querySelectorAll('[id]')].map(e => e.id)
    .concat([...document.querySelectorAll('a[name]')].map(e => e.getAttribute('name')));
  const links = [...document.querySelectorAll('a[href]')].map(a => a.href);
  return {untypeset, texText, errors, images, openSolutions, ids, links};
}
"""
_MATHJAX_READY_JS = """
async () => {
  if (!document.querySelector('script[src*="mathjax" i], script[id="MathJax-script"]')) return 'absent';
  for (let i = 0; i < 200 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 50));
  if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return 'not loaded';
  await MathJax.startup.promise;
  return 'typeset';
}
"""
_REDIRECT = re.compile(r"""<meta\s+http-equiv=["']refresh["']\s+content=["']\d+;\s*url=([^"']+)["']""", re.I)


@dataclass(frozen=True)
class Problem:
    """One thing wrong on one page: ``page`` (relative path), ``kind`` (see :data:`KINDS`), ``detail``."""

    page: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.page}: [{self.kind}] {self.detail}"


def find_chromium() -> str | None:
    """Path of the Chromium binary: ``$REPLICATE_CHROMIUM``, else the first of :data:`CHROMIUM_NAMES` on PATH."""
    env = os.environ.get(CHROMIUM_ENV)
    if env:
        return env if Path(env).is_file() else shutil.which(env)
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def unavailable_reason() -> str | None:
    """Why the check cannot run here (no Playwright, no Chromium), or None when it can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package 'playwright' is not installed (pip install playwright)"
    if find_chromium() is None:
        return (f"no Chromium found (tried {', '.join(CHROMIUM_NAMES)} on PATH and ${CHROMIUM_ENV}); "
                "on Debian/Ubuntu: apt-get install chromium")
    return None


def pages_of(html_dir: Path) -> list[str]:
    """The HTML pages of a built book, as paths relative to ``html_dir`` (support folders left out)."""
    html_dir = Path(html_dir)
    return sorted(p.relative_to(html_dir).as_posix() for p in html_dir.rglob("*.html")
                  if not any(part in SKIP_DIRS for part in p.relative_to(html_dir).parts))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no access log on stderr
        pass


class _HTTPServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a tab closed mid-transfer is no error
            super().handle_error(request, client_address)


class _Server:
    """``http.server`` serving ``root`` on 127.0.0.1 (a free port) in a daemon thread."""

    def __init__(self, root: Path):
        self.httpd = _HTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _local_file(html_dir: Path, path: str) -> Path:
    """The file a URL path (``/a/b.html``, ``/a/``) names under ``html_dir``."""
    rel = unquote(path).lstrip("/")
    target = html_dir / rel
    return target / "index.html" if rel == "" or rel.endswith("/") or target.is_dir() else target


def _redirect_target(path: Path) -> str | None:
    """The URL of a page that is only a ``<meta http-equiv="refresh">`` redirect, else None."""
    text = path.read_text(errors="replace")
    m = _REDIRECT.search(text)
    return m.group(1) if m and len(text) < 1000 else None


def _check_page(browser, origin: str, rel: str, timeout_s: float) -> tuple[list[Problem], dict]:
    """Load one page as a first-time reader would (fresh browser context: no storage, no cache).

    Return the page's problems and what link checking needs (its ids and links).
    """
    problems: list[Problem] = []
    add = lambda kind, detail: problems.append(Problem(rel, kind, detail))  # noqa: E731

    def route(r):
        if r.request.url.startswith(origin) or r.request.url.startswith("data:"):
            return r.continue_()
        add("network", f"requests {r.request.url} (blocked: the book must work offline)")
        return r.abort("blockedbyclient")

    def on_console(msg):
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
            add("javascript", f"console error: {msg.text}")

    def on_response(resp):
        if resp.url.startswith(origin) and resp.status >= 400:
            add("resource", f"HTTP {resp.status} for {resp.url[len(origin):]}")

    def on_failed(req):
        if req.url.startswith(origin):
            add("resource", f"{req.failure} for {req.url[len(origin):]}")

    context = browser.new_context(service_workers="block", viewport=VIEWPORT)
    context.set_default_timeout(timeout_s * 1000)
    page = context.new_page()
    try:
        page.route("**/*", route)
        page.on("console", on_console)
        page.on("pageerror", lambda err: add("javascript", f"uncaught {err.name}: {err.message}"))
        page.on("response", on_response)
        page.on("requestfailed", on_failed)
        page.goto(f"{origin}/{rel}", wait_until="load")
        if page.evaluate(_MATHJAX_READY_JS) == "not loaded":
            add("math", "the page includes MathJax but MathJax did not load")
        found = page.evaluate(_INSPECT_JS)
        layout = page.evaluate(_LAYOUT_JS)
    finally:
        context.close()
    for text in found["untypeset"]:
        add("math", f"math not typeset: {text!r}")
    for text in found["texText"]:
        add("math", f"TeX source left in the text: {text!r}")
    for err in found["errors"]:
        add("math-error", f"TeX error: {err}")
    for src in found["images"]:
        add("image", f"image did not load: {src}")
    for sol in found["openSolutions"]:
        add("solution", f"exercise solution shown open on load (give it :class: dropdown): {sol}")
    for text in layout["truncated"]:
        add("truncated", f"table cell cut short: {text!r}")
    for text in layout["overflow"]:
        add("overflow", f"table wider than the column, with no scroll box of its own: {text}")
    for text in layout["crowded"]:
        add("crowded", f"numbers of neighbouring cells run together: {text}")
    for text in layout["overlap"]:
        add("overlap", f"two text boxes overlap: {text}")
    for text in layout["alt"]:
        add("alt", f"image without alt text that describes it ({text})")
    return problems, found


def check_book(html_dir: str | os.PathLike, pages: list[str] | None = None, timeout_s: float = 30.0,
               log=None) -> list[Problem]:
    """Load every page of the built book ``html_dir`` in headless Chromium; return the problems found.

    ``pages`` (paths relative to ``html_dir``) restricts the pages loaded; links are still
    checked against every page and file of the book. Raises RuntimeError naming the reason
    when Playwright or Chromium is missing (see :func:`unavailable_reason`).
    """
    html_dir = Path(html_dir).resolve()
    if not (html_dir / "index.html").is_file():
        raise FileNotFoundError(f"no built book at {html_dir} (index.html missing); build it first: make book")
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(f"cannot check the HTML book: {reason}")
    all_pages = pages_of(html_dir)
    pages = all_pages if pages is None else list(pages)
    unknown = sorted(set(pages) - set(all_pages))
    if unknown:
        raise ValueError(f"pages not in the book: {', '.join(unknown)}; pages: {', '.join(all_pages)}")
    from playwright.sync_api import sync_playwright

    problems: list[Problem] = []
    found: dict[str, dict] = {}
    with _Server(html_dir) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=list(LAUNCH_ARGS))
        try:
            for rel in pages:
                target = _redirect_target(html_dir / rel)
                if target is not None:  # a bare redirect (the book's index.html): check where it points
                    found[rel] = {"ids": [], "links": [urljoin(f"{server.origin}/{rel}", target)]}
                    continue
                got, found[rel] = _check_page(browser, server.origin, rel, timeout_s)
                problems += got
                if log:
                    log(f"[htmlcheck] {rel}: {len(got)} problem(s)")
        finally:
            browser.close()
        problems += _link_problems(html_dir, server.origin, found, all_pages)
    return sorted(set(problems), key=lambda p: (p.page, KINDS.index(p.kind), p.detail))


def _link_problems(html_dir: Path, origin: str, found: dict[str, dict], all_pages: list[str]) -> list[Problem]:
    """Internal links whose target file is missing, or whose ``#anchor`` the target page lacks."""
    ids = {rel: set(f["ids"]) for rel, f in found.items()}
    problems = []
    for rel, f in found.items():
        for href in set(f["links"]):
            if not href.startswith(origin + "/"):
                continue  # external, mailto:, javascript: ... not checked offline
            base, frag = urldefrag(href)
            target = _local_file(html_dir, urlsplit(base).path)
            if not target.is_file():
                problems.append(Problem(rel, "link", f"broken link to {href[len(origin):]} (no such file)"))
                continue
            target_rel = target.relative_to(html_dir).as_posix()
            if frag and target_rel.endswith(".html"):
                if target_rel not in ids and target_rel in all_pages:
                    continue  # a page not loaded in this run: its anchors are unknown
                if unquote(frag) not in ids.get(target_rel, set()):
                    problems.append(Problem(rel, "link", f"broken anchor {href[len(origin):]} "
                                                         f"(no id {unquote(frag)!r} in {target_rel})"))
    return problems


def main(argv: list[str] | None = None) -> int:
    """``python -m replicate.book.check [HTML_DIR] [--page P]...``; exit 0 clean, 1 problems, 2 cannot run."""
    parser = argparse.ArgumentParser(prog="python -m replicate.book.check", description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", nargs="?", default="_build/html", help="the built book (default: _build/html)")
    parser.add_argument("--page", action="append", help="check only this page (relative path; repeatable)")
    args = parser.parse_args(argv)
    reason = unavailable_reason()
    if reason:
        print(f"check-html: cannot run: {reason}", file=sys.stderr)
        return 2
    try:
        problems = check_book(args.html_dir, pages=args.page, log=print)
    except (FileNotFoundError, ValueError) as err:
        print(f"check-html: {err}", file=sys.stderr)
        return 2
    n_pages = len(args.page or pages_of(Path(args.html_dir)))
    for p in problems:
        print(p)
    print(f"check-html: {n_pages} pages, {len(problems)} problem(s)"
          f"{'' if problems else ': math typeset offline, links, images and scripts fine'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
