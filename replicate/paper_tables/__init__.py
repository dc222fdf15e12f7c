"""The papers' reported numbers as data: one tidy table per paper table, with its source.

    >>> import replicate as rp
    >>> df = rp.paper_tables.get("mukhoti2020", "table1")
    >>> df.attrs["caption"], df.attrs["source_lines"]

Each row of a table is one printed number, in long form with the columns :data:`COLUMNS`:

``paper, table, dataset, model, dataset_key, model_key, setting, method, method_label,
metric, temperature_scaled, value, optimal_T, spread, printed, note``

``value`` is the number as printed (in the paper's units, usually percent), or our reading
of it where the extraction garbled it (``printed`` then holds the garbled source text and
``note`` says so); ``optimal_T`` the temperature printed beside it; ``spread`` the printed
``±`` term (its kind - standard deviation or standard error, over how many seeds - is in
``df.attrs["spread"]``); ``setting`` the row's setting in an ablation table (e.g.
``"bins=5"``, empty elsewhere); ``dataset_key``/``model_key`` our names of the data set and
network (``cifar10``, ``resnet50``; :mod:`.labels`) so that tables of different papers can
be joined. A missing cell is printed ``–`` (value NaN) and carries a note. ``df.attrs``
holds the source: paper key, citation key, table number, caption, metric, units, the text
file and its line range, the spread kind, and notes. Paper numbers are labelled as such by
the ``paper`` column, so a chapter never mixes them with ours silently.

Each paper is a module of this package holding ``PAPER`` (metadata, including which tables
report which metric for the comparison machinery) and ``TABLES`` (one spec per table):

``number``, ``metric``, ``lines`` (first data row to end of caption, 1-based), ``caption``,
``columns`` (``[(method, label, metric, temperature_scaled), ...]``), ``rows`` (one line per
printed row: ``dataset | model | numbers`` or ``dataset | model | setting | numbers``, the
numbers typed as printed: ``17.52``, ``3.42(2.10)``, ``1.23±0.05``, ``–``), and optionally
``units``, ``notes`` (the table's defects), ``spread``, and ``cells``: a list of
``{"row": (dataset, model[, setting]), "column": i or None, "printed": text, "note": text}``
for cells whose printed text differs from our reading (``column`` None: the whole row).
Add a paper by adding a module named by its chapter (``focal_loss.py`` holds Mukhoti et
al.'s tables; :data:`replicate.papers.PAPERS` pairs each paper key with its chapter): it is
found without registering it anywhere else. Functions take the paper key.
"""
from __future__ import annotations

import importlib
import importlib.util
import math
import os
import re
from pathlib import Path

import pandas as pd

from ..papers import PAPERS as _ALL_PAPERS
from .labels import dataset_key, model_key

#: paper key -> module of this package holding its tables, named by the paper's chapter (every
#: paper of the book that has one)
PAPERS = {k: p.chapter for k, p in _ALL_PAPERS.items()
          if importlib.util.find_spec(f"{__name__}.{p.chapter}") is not None}
PAPERS_ENV = "REPLICATE_PAPERS"
COLUMNS = ["paper", "table", "dataset", "model", "dataset_key", "model_key", "setting", "method", "method_label",
           "metric", "temperature_scaled", "value", "optimal_T", "spread", "printed", "note"]
_NUM = r"-?\d+(?:\.\d+)?"
_TOKEN = re.compile(rf"^({_NUM})(?:\(({_NUM})\))?(?:±({_NUM}))?$")
MISSING = ("–", "-", "—")


def list_papers() -> list[str]:
    """Keys of the papers whose tables are stored."""
    return list(PAPERS)


def _module(paper: str):
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; available: {', '.join(PAPERS)}")
    return importlib.import_module(f"{__name__}.{PAPERS[paper]}")


def paper_info(paper: str) -> dict:
    """The paper's metadata (title, citation key, source text file, version, comparison
    metadata such as ``metric_tables``)."""
    return dict(_module(paper).PAPER)


def _spec(paper: str, table: str) -> dict:
    tables = _module(paper).TABLES
    if table not in tables:
        raise ValueError(f"paper {paper!r} has no table {table!r}; available: {', '.join(tables)}")
    return tables[table]


def pre_post_columns(methods, metric: str) -> list[tuple]:
    """Columns of a "Pre T / Post T(T)" table: ``[(method, label, metric, scaled), ...]``."""
    return [(m, lab, metric, s) for m, lab in methods for s in (False, True)]


def parse_cell(tok: str) -> tuple[float, float, float]:
    """A printed cell as ``(value, T, spread)``: ``"3.42(2.10)" -> (3.42, 2.10, nan)``,
    ``"1.23±0.05" -> (1.23, nan, 0.05)``, ``"17.52" -> (17.52, nan, nan)``, ``"–"`` (missing)
    ``-> (nan, nan, nan)``."""
    if tok in MISSING:
        return math.nan, math.nan, math.nan
    m = _TOKEN.match(tok)
    if not m:
        raise ValueError(f"not a printed number: {tok!r}")
    return tuple(float(g) if g is not None else math.nan for g in m.groups())


def parse_token(tok: str) -> tuple[float, float]:
    """``"3.42(2.10)" -> (3.42, 2.10)``; ``"17.52" -> (17.52, nan)`` (see :func:`parse_cell`)."""
    value, temp, _ = parse_cell(tok)
    return value, temp


def _rows(spec: dict) -> list[tuple[str, str, str, list[str]]]:
    out = []
    for line in spec["rows"].strip().splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) == 3:
            parts.insert(2, "")
        if len(parts) != 4:
            raise ValueError(f"row {line!r}: expected 'dataset | model | numbers' or 'dataset | model | setting | "
                             f"numbers'")
        dataset, model, setting, values = parts
        out.append((dataset, model, setting, values.split()))
    return out


def _cell_notes(paper: str, table: str, spec: dict, rows) -> dict:
    """``{(dataset, model, setting, column or None): (printed, note)}``, each checked against the layout."""
    out, known = {}, {(d, m, s) for d, m, s, _ in rows}
    for c in spec.get("cells", ()):
        row = tuple(c["row"]) + (("",) if len(c["row"]) == 2 else ())
        col = c.get("column")
        if row not in known:
            raise ValueError(f"{paper} {table}: cell note for unknown row {c['row']!r}")
        if col is not None and not 0 <= col < len(spec["columns"]):
            raise ValueError(f"{paper} {table}: cell note column {col} outside the layout's "
                             f"{len(spec['columns'])} columns")
        if not c.get("note"):
            raise ValueError(f"{paper} {table}: every cell note needs a 'note'")
        out[row + (col,)] = (c.get("printed"), c["note"])
    return out


def get(paper: str, table: str) -> pd.DataFrame:
    """The stored table ``table`` (e.g. ``"table1"``) of ``paper`` as a tidy DataFrame."""
    spec, info = _spec(paper, table), paper_info(paper)
    cols, rows = spec["columns"], _rows(spec)
    notes = _cell_notes(paper, table, spec, rows)
    records = []
    for dataset, model, setting, toks in rows:
        if len(toks) != len(cols):
            raise ValueError(f"{paper} {table}: row {dataset} / {model}{f' / {setting}' if setting else ''} has "
                             f"{len(toks)} numbers, the layout has {len(cols)} columns")
        dk, mk = dataset_key(dataset, info.get("dataset_keys")), model_key(model, info.get("model_keys"))
        for i, (tok, (method, label, metric, scaled)) in enumerate(zip(toks, cols)):
            value, temp, spread = parse_cell(tok)
            printed, note = notes.get((dataset, model, setting, i)) or notes.get((dataset, model, setting, None)) \
                or (None, "")
            if tok in MISSING and not note:
                raise ValueError(f"{paper} {table}: missing cell {dataset} / {model} column {i} needs a cell note")
            records.append((paper, table, dataset, model, dk, mk, setting, method, label, metric, scaled, value, temp,
                            spread, printed if printed is not None else tok, note))
    df = pd.DataFrame.from_records(records, columns=COLUMNS)
    df.attrs.update({
        "paper": paper, "citation": info.get("citation"), "table": table, "number": spec["number"],
        "caption": spec["caption"], "metric": spec["metric"], "units": spec.get("units", "percent"),
        "source_file": info["source_file"], "source_lines": list(spec["lines"]), "notes": spec.get("notes", ""),
        "spread": spec.get("spread", ""),
    })
    return df


def cell(paper: str, table: str, dataset: str, model: str, method: str, metric: str,
         temperature_scaled: bool = False, setting: str = "") -> pd.Series:
    """The one row of :func:`get` for these keys (``dataset``/``model`` as keys, e.g.
    ``"cifar10"``, ``"resnet50"``); ``value`` is the number, ``printed`` the text as printed.

    >>> cell("mukhoti2020", "table3", "cifar10", "resnet50", "cross_entropy", "error").printed
    '4.95'
    """
    t = get(paper, table)
    hit = t[(t.dataset_key == dataset) & (t.model_key == model) & (t.method == method) & (t.metric == metric)
            & (t.temperature_scaled == temperature_scaled) & (t.setting == setting)]
    if len(hit) != 1:
        raise ValueError(f"{paper} {table}: {len(hit)} cells for {dataset} / {model} / {method} / {metric}"
                         f"{' after TS' if temperature_scaled else ''}{f' / {setting}' if setting else ''}; "
                         f"expected one")
    return hit.iloc[0]


def list_tables(paper: str | None = None) -> pd.DataFrame:
    """One row per stored table: paper, table, number, metric, units, caption, lines, n_values, notes."""
    rows = []
    for p in ([paper] if paper is not None else list(PAPERS)):
        for key, spec in _module(p).TABLES.items():
            n = sum(len(t) for *_, t in _rows(spec))
            rows.append((p, key, spec["number"], spec["metric"], spec.get("units", "percent"), spec["caption"],
                         tuple(spec["lines"]), n, spec.get("notes", "")))
    return pd.DataFrame(rows, columns=["paper", "table", "number", "metric", "units", "caption", "lines",
                                       "n_values", "notes"])


def get_all(paper: str) -> pd.DataFrame:
    """Every stored table of ``paper`` in one frame (the ``table`` column tells them apart)."""
    return pd.concat([get(paper, t) for t in _module(paper).TABLES], ignore_index=True)


def papers_dirs() -> list[Path]:
    """The folders where the papers' text files are looked for, in order: ``$REPLICATE_PAPERS``
    when it is set, else ``<data_dir>/papers`` (:func:`replicate.config.data_dir`). (The test
    suite also looks beside its checkout: ``tests/needs.py``.)"""
    env = os.environ.get(PAPERS_ENV)
    if env:
        return [Path(env).expanduser().resolve()]
    from ..config import data_dir
    return [data_dir() / "papers"]


def papers_dir() -> Path:
    """The folder of the papers' text files: the first of :func:`papers_dirs` that exists (the
    first of them when none does, so that a message can name it)."""
    dirs = papers_dirs()
    return next((d for d in dirs if d.is_dir()), dirs[0])


def source_path(paper: str, directory: str | os.PathLike | None = None) -> Path:
    """Path of the text file the paper's numbers were read from (it may not exist locally)."""
    return Path(directory or papers_dir()) / paper_info(paper)["source_file"]


def source_lines(paper: str) -> list[str] | None:
    """The lines of the paper's source text, or None when it is not found (tests skip then)."""
    path = source_path(paper)
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else None
