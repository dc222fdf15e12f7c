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


# ----------------------------------------------------------------------------- evidence types
THEORY, PAPER_TABLES = "theory", "the paper's tables"
#: The profiles of our runs, smallest first (the order of the "our runs" evidence types).
RUN_PROFILES = ("smoke", "cpu", "gpu", "paper")
#: Every evidence type, in the order the count tables show them.
EVIDENCE_TYPES = (THEORY, PAPER_TABLES, *(f"our runs ({p})" for p in RUN_PROFILES))


def evidence_type(kind: str, evidence: str) -> str:
    """What a verdict rests on: ``theory`` (a computation), ``the paper's tables`` (the
    paper's own printed numbers) or ``our runs (PROFILE)`` (our trained models at that
    profile, read from evidence labels such as "ours: cpu, cifar10, tiny_cnn, seed 1" or
    "ours (AdaFocal Eq. 4): ours: gpu, ..."). ValueError for an experiment row whose
    evidence names neither."""
    import re

    if kind == "theory":
        return THEORY
    m = re.search(r"\bours: (\w+)", evidence or "")
    if m:
        if m.group(1) not in RUN_PROFILES:
            raise ValueError(f"evidence {evidence!r} names profile {m.group(1)!r}; profiles: {', '.join(RUN_PROFILES)}")
        return f"our runs ({m.group(1)})"
    if (evidence or "").startswith("paper"):
        return PAPER_TABLES
    raise ValueError(f"evidence of an experiment claim must start with 'ours' or 'paper'; got {evidence!r}")


def evidence_types(frame):
    """The :func:`evidence_type` of every row of a claims frame, as an ordered categorical
    (categories :data:`EVIDENCE_TYPES`)."""
    import pandas as pd

    values = [evidence_type(k, e) for k, e in zip(frame["kind"], frame["evidence"])]
    return pd.Series(pd.Categorical(values, categories=EVIDENCE_TYPES), index=frame.index, name="evidence type")


def counts_by_evidence(frame, by_paper: bool = False):
    """Verdict counts split by what they rest on (:func:`evidence_type`: theory, the paper's
    tables, our runs at each profile), one row per evidence type present (per paper and
    evidence type with ``by_paper``, papers by their short names in registry order), plus
    an "all" row; the columns of :func:`replicate.claims.counts_frame`."""
    import pandas as pd

    from .log import counts_frame

    f = frame.assign(**{"evidence type": evidence_types(frame).astype(str)})
    if not by_paper:
        out = counts_frame(f, by="evidence type")
        out = out.loc[[t for t in EVIDENCE_TYPES if t in out.index]]
        out.loc["all"] = out.sum()
        return out
    parts = {}
    for paper, g in f.groupby("paper", sort=False):
        sub = counts_frame(g, by="evidence type")
        parts[PAPERS[paper].short] = sub.loc[[t for t in EVIDENCE_TYPES if t in sub.index]]
    return pd.concat(parts, names=["paper", "evidence type"])


def split_summary(frame) -> str:
    """One sentence of the verdicts per evidence type, for prose: "theory: 120 claims (100
    holds, 8 fails, ...); the paper's tables: ...; our runs (cpu): ..."."""
    c = counts_by_evidence(frame).drop(index="all")
    parts = []
    for kind, row in c.iterrows():
        verdicts = ", ".join(f"{int(n)} {v}" for v, n in row.drop("total").items() if n)
        parts.append(f"{kind}: {int(row['total'])} verdict{'s' if row['total'] != 1 else ''} ({verdicts})")
    return "; ".join(parts)


# ----------------------------------------------------------------------------- the filterable table
LEDGER_COLUMNS = ("paper", "claim", "where", "evidence", "verdict", "note", "noise", "decided in")
FILTERS = ("paper", "kind", "evidence type", "verdict")


def ledger_table(frame, caption: str = ""):
    """A claims frame as the ledger's HTML table (:func:`replicate.book.tables.sortable_table`):
    one row per verdict, columns :data:`LEDGER_COLUMNS` (the last links to the deciding
    section of the chapter, at the anchor MyST gives it), sortable by any column, and
    filtered in the browser by paper, kind, evidence type (:func:`evidence_type`) and
    verdict (:data:`FILTERS`). Without JavaScript the whole table shows."""
    import pandas as pd

    from ..book.tables import sortable_table
    from .vocabulary import VERDICTS

    if frame.empty:
        raise ValueError("frame must hold at least one claim")
    frame = frame.reset_index(drop=True)
    cells = pd.DataFrame({
        "paper": [PAPERS[p].short for p in frame.paper], "claim": frame.claim, "where": frame["where"],
        "evidence": frame.evidence.where(frame.evidence.astype(bool), "(theory)"), "verdict": frame.verdict,
        "note": frame.note, "noise": frame["noise"].where(frame["noise"].astype(bool), "–") if "noise" in frame
        else "–", "decided in": [f"{c} › {s}" for c, s in zip(frame.chapter, frame.section)]})
    links = pd.DataFrame({"decided in": [link(c, s).replace(".ipynb#", ".html#")
                                         for c, s in zip(frame.chapter, frame.section)]})
    papers = list(dict.fromkeys(PAPERS[p].short for p in frame.paper))
    filters = pd.DataFrame({
        "paper": pd.Categorical(cells.paper, categories=papers),
        "kind": pd.Categorical(frame.kind, categories=["theory", "experiment"]),
        "evidence type": evidence_types(frame).values,
        "verdict": pd.Categorical(frame.verdict, categories=VERDICTS)})
    return sortable_table(cells[list(LEDGER_COLUMNS)], notes=None, caption=caption,
                          text_columns=LEDGER_COLUMNS, filters=filters, links=links, wrap=True,
                          table_id="claims-ledger-table")
