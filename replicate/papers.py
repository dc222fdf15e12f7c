"""The five papers the book replicates, by key (used by the claims registry, the paper
tables and the chapters): short name, what it proposes, citation key in
``book/references.bib``, and the name of its chapters. Torch-free and dependency-free.

The key (``mukhoti2020``) names the paper in data: the claims ledger's ``paper`` column, the
paper tables' rows, ``replicate claims --paper``. The chapter name (``focal_loss``) names it
in code and in the book: the notebooks ``theory_<chapter>`` and ``exp_<chapter>``, the
folders ``replicate/theory/<chapter>/`` and ``replicate/experiments/<chapter>/``, the
module ``replicate/paper_tables/<chapter>.py``. This table is the one place the two meet.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    key: str
    short: str
    topic: str
    citation: str
    chapter: str


PAPERS: dict[str, Paper] = {p.key: p for p in (
    Paper("mukhoti2020", "Mukhoti et al. (2020)", "focal loss, FLSD-53", "mukhoti2020focal", "focal_loss"),
    Paper("ghosh2022", "Ghosh et al. (2022)", "AdaFocal", "ghosh2022adafocal", "adafocal"),
    Paper("tao2023", "Tao et al. (2023)", "Dual Focal Loss", "tao2023dual", "dual_focal"),
    Paper("liang2024", "Liang et al. (2024)", "Focal Calibration Loss", "liang2024fcl", "fcl"),
    Paper("komisarenko2024", "Komisarenko & Kull (2024)", "focal temperature scaling", "komisarenko2024fts", "fts"),
)}


def get_paper(key: str) -> Paper:
    """The paper ``key``; ValueError lists the keys."""
    if key not in PAPERS:
        raise ValueError(f"unknown paper {key!r}; allowed papers: {', '.join(PAPERS)}")
    return PAPERS[key]
