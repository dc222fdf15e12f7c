"""The claims ledger: every registered claim in one table, each linked to the chapter section
that decides it.

Links point at the heading anchors that MyST gives a chapter's headings
(``myst_heading_anchors`` in ``_config.yml``). The anchors are computed by myst-parser's
own parser and slug function over the chapter's markdown (so a heading with math, whose
math MyST leaves out of the slug, gets exactly MyST's anchor), and the strict book build
fails on a link whose anchor does not exist.
"""
from __future__ import annotations

import functools

from ..papers import PAPERS
from .vocabulary import MEANINGS, VERDICTS

HEADING_DEPTH = 3


@functools.lru_cache(maxsize=None)
def section_anchors(chapter: str) -> dict:
    """``{heading text: anchor}`` of the chapter's headings (levels 1-3) as MyST slugs them,
    in document order, with MyST's ``-1``, ``-2`` suffixes for repeated slugs."""
    from markdown_it.tree import SyntaxTreeNode
    from myst_parser.config.main import MdParserConfig
    from myst_parser.mdit_to_docutils.base import compute_unique_slug
    from markdown_it.renderer import RendererHTML
    from myst_parser.parsers.mdit import create_md_parser

    import jupytext

    from ..config import repo_root

    source = repo_root() / "notebooks" / f"{chapter}.md"
    if not source.is_file():
        raise ValueError(f"chapter {chapter!r} has no source {source}")
    nb = jupytext.read(source)
    md = create_md_parser(MdParserConfig(enable_extensions={"dollarmath", "amsmath", "colon_fence", "deflist"}),
                          renderer=RendererHTML)
    anchors, slugs = {}, []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        tree = SyntaxTreeNode(md.parse(cell.source))
        for node in tree.walk():
            if node.type == "heading" and int(node.tag[1:]) <= HEADING_DEPTH:
                slug = compute_unique_slug(node, slugs)
                slugs.append(slug)
                text = node.children[0].content if node.children else ""
                anchors.setdefault(text, slug)
    return anchors


def link(chapter: str, section: str) -> str:
    """A MyST link from a page of ``book/chapters/`` to ``section`` of ``chapter``;
    ValueError when the chapter has no such heading."""
    anchors = section_anchors(chapter)
    if section not in anchors:
        raise ValueError(f"chapter {chapter!r} has no heading {section!r}; headings: {', '.join(anchors)}")
    return f"{chapter}.ipynb#{anchors[section]}"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def ledger_markdown(frame, columns=("claim", "where", "evidence", "verdict", "note")) -> str:
    """A claims frame (:func:`replicate.claims.collect`) as a MyST markdown table with a
    link to the deciding section on each row."""
    head = ["paper", *columns, "decided in"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in frame.itertuples(index=False):
        target = link(r.chapter, r.section)
        cells = [PAPERS[r.paper].short, *(_cell(getattr(r, c)) for c in columns),
                 f"[{r.chapter} › {_cell(r.section)}]({target})"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def vocabulary_markdown() -> str:
    """The verdict vocabulary as a markdown table (verdict, meaning)."""
    lines = ["| verdict | meaning |", "|---|---|"]
    lines += [f"| **{v}** | {MEANINGS[v]} |" for v in VERDICTS]
    return "\n".join(lines)
