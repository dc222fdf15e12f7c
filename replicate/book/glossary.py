"""Glossary links (issue #24, item 6): the first use of every glossary term in each page links
to its definition on the book's glossary page.

The glossary is an ordinary page, ``book/glossary.md``, written with Sphinx's ``glossary``
directive: each entry has one or more term lines (the names the chapters use for the same
thing) and one definition. Chapters do not mark terms by hand. After Sphinx has resolved a
page (``doctree-resolved``, connected by :mod:`replicate.book.html`), :func:`link_first_uses`
finds, in reading order, the first occurrence of any name of each entry in the page's prose
and turns it into a link to the entry; every later occurrence is left as it is.

Matching (:func:`term_pattern`): a name with a capital letter (ECE, AdaECE, Brier score)
matches exactly, an all-lower-case name (temperature scaling) in any case; a name never
matches inside a longer word or hyphenated name (ECE is not found in AdaECE, classwise-ECE or
ECE-sweep), and at one position the longest name wins (focal temperature scaling before
temperature scaling). Left alone: titles, code, math, links, raw HTML (table outputs),
numbers pasted by ``glue``, the glossary's own terms, citations and admonition titles.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: The docname of the glossary page.
GLOSSARY_DOC = "book/glossary"
#: Node classes (by name) whose text is never linked.
SKIP_NODES = ("title", "subtitle", "literal", "literal_block", "math", "math_block", "reference",
              "pending_xref", "raw", "term", "citation", "citation_reference", "footnote", "footnote_reference",
              "rubric", "caption", "problematic", "comment", "target", "doctest_block", "system_message")
#: Classes of inline nodes whose text is never linked (numbers pasted by glue).
SKIP_CLASSES = ("pasted-text", "pasted-inline", "glossary-link", "admonition-title")

__all__ = ["GLOSSARY_DOC", "Entry", "entries_of", "markdown_entries", "term_pattern", "link_first_uses"]


@dataclass(frozen=True)
class Entry:
    """One glossary entry: its ``names`` (term lines) and the ``anchor`` of its first term."""

    names: tuple[str, ...]
    anchor: str


def entries_of(doctree) -> list[Entry]:
    """The entries of a glossary page's doctree (``definition_list_item`` nodes whose terms
    are ``term`` nodes with ids), in page order."""
    from docutils import nodes

    out = []
    for item in doctree.findall(nodes.definition_list_item):
        terms = [t for t in item.findall(nodes.term) if t.parent is item or t.parent.parent is item]
        ids = [i for t in terms for i in t.get("ids", [])]
        names = tuple(t.astext().strip() for t in terms if t.astext().strip())
        if names and ids:
            out.append(Entry(names, ids[0]))
    return out


def markdown_entries(text: str) -> list[tuple[tuple[str, ...], str]]:
    """The entries of a glossary page's MyST source (``book/glossary.md``) without Sphinx:
    ``(names, definition)`` per entry of every ```` ```{glossary} ```` block, the names its
    unindented term lines, the definition its indented lines joined."""
    out: list[tuple[tuple[str, ...], str]] = []
    for block in re.findall(r"```\{glossary\}\n(.*?)```", text, re.S):
        names: list[str] = []
        body: list[str] = []
        for line in block.splitlines() + [""]:
            if line.strip() and not line[0].isspace():
                if body:
                    out.append((tuple(names), " ".join(body)))
                    names, body = [], []
                names.append(line.strip())
            elif line.strip():
                body.append(line.strip())
        if names:
            out.append((tuple(names), " ".join(body)))
    return out


def _alternative(name: str) -> str:
    body = re.escape(name)
    return body if any(c.isupper() for c in name) else f"(?i:{body})"


def term_pattern(entries) -> tuple[re.Pattern, dict]:
    """One regular expression for every name of ``entries`` (longest first) and the map from
    a matched name's group to its entry."""
    names = sorted({(n, e) for e in entries for n in e.names}, key=lambda ne: -len(ne[0]))
    groups, alts = {}, []
    for i, (name, entry) in enumerate(names):
        groups[f"g{i}"] = entry
        alts.append(f"(?P<g{i}>{_alternative(name)})")
    pattern = r"(?<![\w\-|])(?:" + "|".join(alts) + r")(?![\w\-|])" if alts else r"(?!x)x"
    return re.compile(pattern), groups


def _skipped(node) -> bool:
    parent = node.parent
    while parent is not None:
        if type(parent).__name__ in SKIP_NODES:
            return True
        classes = parent.get("classes", []) if hasattr(parent, "get") else []
        if any(c in SKIP_CLASSES for c in classes):
            return True
        parent = parent.parent
    return False


def link_first_uses(doctree, entries, uri: str) -> int:
    """Link, in ``doctree``, the first occurrence of each entry of ``entries``: the text is
    replaced by a reference to ``uri + "#" + entry.anchor`` (class ``glossary-link``).
    Returns the number of links made."""
    from docutils import nodes

    pattern, groups = term_pattern(entries)
    done: set[str] = set()
    made = 0
    for text in list(doctree.findall(nodes.Text)):
        if len(done) == len({e.anchor for e in groups.values()}):
            break
        if text.parent is None or _skipped(text):
            continue
        value, pieces, last = str(text), [], 0
        for m in pattern.finditer(value):
            entry = groups[m.lastgroup]
            if entry.anchor in done:
                continue
            done.add(entry.anchor)
            pieces.append(nodes.Text(value[last:m.start()]))
            ref = nodes.reference(m.group(0), m.group(0), internal=True, refuri=f"{uri}#{entry.anchor}",
                                  classes=["glossary-link"], reftitle=f"glossary: {entry.names[0]}")
            pieces.append(ref)
            last = m.end()
            made += 1
        if pieces:
            pieces.append(nodes.Text(value[last:]))
            text.parent.replace(text, [p for p in pieces if not (isinstance(p, nodes.Text) and not str(p))])
    return made


def _doctree_resolved(app, doctree, docname) -> None:
    if docname == GLOSSARY_DOC or app.builder.format != "html" or GLOSSARY_DOC not in app.env.all_docs:
        return
    entries = getattr(app, "_replicate_glossary_entries", None)
    if entries is None:
        entries = app._replicate_glossary_entries = entries_of(app.env.get_doctree(GLOSSARY_DOC))
    link_first_uses(doctree, entries, app.builder.get_relative_uri(docname, GLOSSARY_DOC))


def setup(app) -> None:
    """Connect the linker (called by :func:`replicate.book.html.setup`)."""
    app.connect("doctree-resolved", _doctree_resolved)
