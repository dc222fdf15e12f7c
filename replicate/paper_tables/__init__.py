"""The papers' reported numbers as data: one tidy table per paper table, with its source.

    >>> import replicate as rp
    >>> df = rp.paper_tables.get("mukhoti2020", "table1")
    >>> df.attrs["caption"], df.attrs["source_lines"]

Each row of a table is one printed number, in long form with the columns

``paper, table, dataset, model, method, method_label, metric, temperature_scaled, value,
optimal_T, printed``

``value`` is the number exactly as printed (in the paper's units, usually percent),
``printed`` the printed text, ``optimal_T`` the temperature printed beside it (NaN where the
paper gives none). ``df.attrs`` holds the source: paper key, citation key, table number,
caption, metric, units, the text file and its line range, and notes. Paper numbers are
labelled as such by the ``paper`` column, so a chapter never mixes them with ours silently.

Each paper is a module of this package holding ``PAPER`` (metadata) and ``TABLES`` (one
spec per table: columns and the rows typed as printed); add a paper by adding a module and
its key to ``PAPERS``.
"""
from __future__ import annotations

import importlib
import math
import os
import re
from pathlib import Path

import pandas as pd

PAPERS = {"mukhoti2020": "mukhoti2020"}
PAPERS_ENV = "REPLICATE_PAPERS"
COLUMNS = ["paper", "table", "dataset", "model", "method", "method_label", "metric", "temperature_scaled",
           "value", "optimal_T", "printed"]
_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)(?:\((\d+(?:\.\d+)?)\))?$")


def list_papers() -> list[str]:
    """Keys of the papers whose tables are stored."""
    return list(PAPERS)


def _module(paper: str):
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; available: {', '.join(PAPERS)}")
    return importlib.import_module(f"{__name__}.{PAPERS[paper]}")


def paper_info(paper: str) -> dict:
    """The paper's metadata (title, citation key, source text file, version)."""
    return dict(_module(paper).PAPER)


def _spec(paper: str, table: str) -> dict:
    tables = _module(paper).TABLES
    if table not in tables:
        raise ValueError(f"paper {paper!r} has no table {table!r}; available: {', '.join(tables)}")
    return tables[table]


def pre_post_columns(methods, metric: str) -> list[tuple]:
    """Columns of a "Pre T / Post T(T)" table: ``[(method, label, metric, scaled), ...]``."""
    return [(m, lab, metric, s) for m, lab in methods for s in (False, True)]


def parse_token(tok: str) -> tuple[float, float]:
    """``"3.42(2.10)" -> (3.42, 2.10)``; ``"17.52" -> (17.52, nan)``."""
    m = _TOKEN.match(tok)
    if not m:
        raise ValueError(f"not a printed number: {tok!r}")
    return float(m.group(1)), float(m.group(2)) if m.group(2) else math.nan


def _rows(spec: dict) -> list[tuple[str, str, list[str]]]:
    out = []
    for line in spec["rows"].strip().splitlines():
        dataset, model, values = (part.strip() for part in line.split("|"))
        out.append((dataset, model, values.split()))
    return out


def get(paper: str, table: str) -> pd.DataFrame:
    """The stored table ``table`` (e.g. ``"table1"``) of ``paper`` as a tidy DataFrame."""
    spec, info = _spec(paper, table), paper_info(paper)
    cols = spec["columns"]
    records = []
    for dataset, model, toks in _rows(spec):
        if len(toks) != len(cols):
            raise ValueError(f"{paper} {table}: row {dataset} / {model} has {len(toks)} numbers, "
                             f"the layout has {len(cols)} columns")
        for tok, (method, label, metric, scaled) in zip(toks, cols):
            value, temp = parse_token(tok)
            records.append((paper, table, dataset, model, method, label, metric, scaled, value, temp, tok))
    df = pd.DataFrame.from_records(records, columns=COLUMNS)
    df.attrs.update({
        "paper": paper, "citation": info.get("citation"), "table": table, "number": spec["number"],
        "caption": spec["caption"], "metric": spec["metric"], "units": spec.get("units", "percent"),
        "source_file": info["source_file"], "source_lines": list(spec["lines"]), "notes": spec.get("notes", ""),
    })
    return df


def list_tables(paper: str | None = None) -> pd.DataFrame:
    """One row per stored table: paper, table, number, metric, units, caption, lines, n_values."""
    rows = []
    for p in ([paper] if paper is not None else list(PAPERS)):
        for key, spec in _module(p).TABLES.items():
            n = sum(len(t) for _, _, t in _rows(spec))
            rows.append((p, key, spec["number"], spec["metric"], spec.get("units", "percent"), spec["caption"],
                         tuple(spec["lines"]), n))
    return pd.DataFrame(rows, columns=["paper", "table", "number", "metric", "units", "caption", "lines",
                                       "n_values"])


def papers_dir() -> Path:
    """Where the papers' text files are looked for: ``$REPLICATE_PAPERS`` or ``<data_dir>/papers``."""
    env = os.environ.get(PAPERS_ENV)
    if env:
        return Path(env).expanduser().resolve()
    from ..config import data_dir
    return data_dir() / "papers"


def source_path(paper: str, directory: str | os.PathLike | None = None) -> Path:
    """Path of the text file the paper's numbers were read from (it may not exist locally)."""
    return Path(directory or papers_dir()) / paper_info(paper)["source_file"]
