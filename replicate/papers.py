"""The five papers the book replicates, by key (used by the claims registry, the paper
tables and the chapters): short name, what it proposes, citation key in
``book/references.bib``. Torch-free and dependency-free."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    key: str
    short: str
    topic: str
    citation: str


PAPERS: dict[str, Paper] = {p.key: p for p in (
    Paper("mukhoti2020", "Mukhoti et al. (2020)", "focal loss, FLSD-53", "mukhoti2020focal"),
    Paper("ghosh2022", "Ghosh et al. (2022)", "AdaFocal", "ghosh2022adafocal"),
    Paper("tao2023", "Tao et al. (2023)", "Dual Focal Loss", "tao2023dual"),
    Paper("liang2024", "Liang et al. (2024)", "Focal Calibration Loss", "liang2024fcl"),
    Paper("komisarenko2024", "Komisarenko & Kull (2024)", "focal temperature scaling", "komisarenko2024fts"),
)}


def get_paper(key: str) -> Paper:
    """The paper ``key``; ValueError lists the keys."""
    if key not in PAPERS:
        raise ValueError(f"unknown paper {key!r}; allowed papers: {', '.join(PAPERS)}")
    return PAPERS[key]
