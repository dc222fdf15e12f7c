"""Every public object of the API reference documents every parameter (issue #31, item 4).

The objects are those of the API pages (:func:`replicate.book.api.api_callables`): every public
function, every class, and every public method of those classes that the package defines
(``__call__`` included; methods inherited from torch or the standard library are not the
package's). Each is checked once, where it is defined, against its signature:

* the names of the docstring's numpydoc ``Parameters`` section equal the signature's
  parameters, in order, without ``self``/``cls``; a class documents its constructor's
  parameters in the class docstring (a dataclass: its fields);
* ``*args`` and ``**kwargs`` are documented under their starred names (``*names``,
  ``**params``: numpydoc's convention), the description saying what they accept;
* several parameters may share one entry (``x, y : float``), as numpydoc allows;
* every entry has a description (its type, allowed values, default, units), never an empty one.

The section is read by numpydoc's own parser (``numpydoc.docscrape``, in the ``test`` extra)
when it is installed, else by :func:`parameters_section` below, a small reader of the same
layout; where numpydoc is installed a test checks that both read every docstring alike.
"""
from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

import pytest

from needs import need
from replicate.book import api as book_api

ROOT = Path(__file__).resolve().parents[1]
_HEADER = re.compile(r"^(\s*)(\S.*?)\s*\n\1(-{3,})\s*$", re.M)


def parameters_section(doc: str) -> list[tuple[list[str], str]]:
    """``[(names, description), ...]`` of the ``Parameters`` section of a numpy-style docstring
    (the small reader used where numpydoc is not installed): an entry is a line at the section's
    indentation, ``name : type`` or ``name``, with ``a, b`` naming several; its description is
    the more-indented lines below it."""
    doc = inspect.cleandoc(doc or "")
    heads = [m for m in _HEADER.finditer(doc) if len(m.group(3)) >= len(m.group(2)) - 1]
    out: list[tuple[list[str], str]] = []
    for i, m in enumerate(heads):
        if m.group(2) != "Parameters":
            continue
        end = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
        base = len(m.group(1))
        for line in doc[m.end():end].splitlines():
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip())
            if indent <= base:
                head = line.strip().split(" : ")[0].rstrip(":").strip()
                out.append(([n.strip() for n in head.split(",") if n.strip()], ""))
            elif out:
                out[-1] = (out[-1][0], (out[-1][1] + " " + line.strip()).strip())
    return out


def numpydoc_section(doc: str) -> list[tuple[list[str], str]] | None:
    """The same, read by numpydoc's parser; None when numpydoc is not installed."""
    try:
        from numpydoc.docscrape import NumpyDocString
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # sections numpydoc does not know ("Example") warn
        parsed = NumpyDocString(doc or "")
    return [([n.strip() for n in p.name.split(",") if n.strip()], " ".join(p.desc).strip())
            for p in parsed["Parameters"]]


def documented(doc: str) -> list[tuple[list[str], str]]:
    parsed = numpydoc_section(doc)
    return parameters_section(doc) if parsed is None else parsed


def _starred(p: inspect.Parameter) -> str:
    return {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name


def signature_names(obj) -> list[str]:
    """The parameters as the docstring must name them: no ``self``/``cls``, ``*args``/``**kwargs`` starred."""
    params = list(inspect.signature(obj).parameters.values())
    if params and params[0].name in ("self", "cls") and not inspect.isclass(obj):
        params = params[1:]
    return [_starred(p) for p in params]


def public_api() -> dict[str, tuple[object, str]]:
    """``{qualified name: (object, its docstring)}`` for every function, class and public method
    of the API pages, each function once, named where it is defined."""
    out, seen = {}, set()
    for qual, obj in book_api.api_callables(ROOT).items():
        if inspect.isclass(obj):
            out[qual] = (obj, inspect.cleandoc(obj.__doc__ or ""))
            for klass in obj.__mro__:
                if not klass.__module__.startswith("replicate"):
                    continue
                for name, member in vars(klass).items():
                    if name.startswith("_") and name != "__call__":
                        continue
                    func = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                    if inspect.isfunction(func) and func not in seen:
                        seen.add(func)
                        bound = getattr(obj, name)
                        out[f"{func.__module__}.{func.__qualname__}"] = (bound, inspect.getdoc(bound) or "")
        elif obj not in seen:
            seen.add(obj)
            out[qual] = (obj, inspect.getdoc(obj) or "")
    return out


API = public_api()


def test_the_api_has_its_functions_classes_and_methods():
    assert len(API) > 100
    assert {"replicate.metrics.ece", "replicate.losses.AdaFocal", "replicate.losses.base.CalibrationLoss.forward",
            "replicate.losses.base.CalibrationLoss.update_from_validation",
            "replicate.posthoc.calibrator.Calibrator.__call__"} <= set(API)


def test_every_parameter_is_documented_in_order_and_nothing_else():
    wrong = []
    for qual, (obj, doc) in API.items():
        want = signature_names(obj)
        got = [n for names, _ in documented(doc) for n in names]
        if got != want:
            wrong.append(f"{qual}: signature {want}, docstring {got}")
    assert not wrong, f"{len(wrong)} docstrings do not document their parameters:\n" + "\n".join(wrong)


def test_every_documented_parameter_has_a_description():
    empty = [f"{qual}: {names}" for qual, (_, doc) in API.items() for names, desc in documented(doc)
             if len(desc) < 8 or desc.lower() in ("todo", "...", "tbd")]
    assert not empty, "parameters without a description:\n" + "\n".join(empty)


@pytest.mark.parametrize("doc, want", [
    ("One line.", []),
    ("Sum.\n\nParameters\n----------\nx, y : float\n    The values.\n**kw\n    Passed on.\n\nReturns\n-------\nfloat\n",
     [(["x", "y"], "The values."), (["**kw"], "Passed on.")]),
    ("""Map.

    Parameters
    ----------
    probs : array_like
        Probabilities, shape ``(N, K)``;
        rows sum to 1.
    gamma : float
        The focal parameter.

    Example
    -------
    >>> 1
    1
    """, [(["probs"], "Probabilities, shape ``(N, K)``; rows sum to 1."), (["gamma"], "The focal parameter.")]),
])
def test_the_small_reader_reads_numpydoc_sections(doc, want):
    assert parameters_section(doc) == want


def test_the_small_reader_agrees_with_numpydoc_on_every_docstring():
    need("numpydoc.docscrape", "numpydoc")
    differ = [qual for qual, (_, doc) in API.items() if parameters_section(doc) != numpydoc_section(doc)]
    assert not differ, differ
