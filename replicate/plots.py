"""Figures: one seaborn-based style for every chapter, reliability diagrams, histograms."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg") if matplotlib.get_backend().lower() in {"", "tkagg"} else None

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

PALETTE = "colorblind"


def use_style() -> None:
    """Apply the book's figure style (seaborn ``whitegrid``, colour-blind palette)."""
    sns.set_theme(style="whitegrid", palette=PALETTE, context="notebook")
    plt.rcParams.update({"figure.figsize": (6.4, 4.0), "figure.dpi": 100,
                         "savefig.bbox": "tight", "axes.titlesize": "medium"})
