"""What an executed chapter must not show a reader (issue #24, item 2): warnings.

:func:`warnings_in` lists the outputs of an executed notebook that print a warning: anything
written to stderr (Python's ``warnings`` module, a library's log line, the book's own
``LegibilityWarning`` from :mod:`replicate.plots.legibility`) and any output text carrying a
``SomethingWarning:`` line. ``tests/test_book.py`` runs it over every chapter of the smoke
book, and ``python -m replicate.book.notebook_checks book/chapters/*.ipynb`` over a built book.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

_WARNING = re.compile(r"\b[A-Z]\w*Warning\b:")

__all__ = ["warnings_in", "main"]


def _texts(output: dict) -> list[str]:
    texts = ["".join(output.get("text", ""))] if output.get("output_type") == "stream" else []
    data = output.get("data", {})
    texts += ["".join(data.get(m, "")) for m in ("text/plain", "text/markdown")]
    if output.get("output_type") == "error":
        texts.append(f"{output.get('ename')}: {output.get('evalue')}")
    return [t for t in texts if t]


def warnings_in(notebook) -> list[tuple[int, str]]:
    """``(cell index, first line)`` for every output of ``notebook`` (a path or a notebook
    dict) that writes to stderr or prints a ``...Warning:`` line."""
    nb = json.loads(Path(notebook).read_text()) if isinstance(notebook, (str, Path)) else notebook
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            stderr = out.get("output_type") == "stream" and out.get("name") == "stderr"
            for text in _texts(out):
                line = next((ln for ln in text.splitlines() if _WARNING.search(ln)), None)
                if stderr or line:
                    found.append((i, (line or text.strip().splitlines()[0] if text.strip() else "(empty)")[:300]))
    return found


def main(argv: list[str] | None = None) -> int:
    """Print every warning of the given executed notebooks; exit 1 when there is one."""
    paths = argv if argv is not None else sys.argv[1:]
    bad = 0
    for path in paths:
        for cell, line in warnings_in(path):
            print(f"{path}: cell {cell}: {line}")
            bad += 1
    print(f"{len(paths)} notebook(s), {bad} warning(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
