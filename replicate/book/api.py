"""Sphinx extension for the book's API reference (``book/api/*.md``, the "Library" part).

``_config.yml`` loads it with ``sphinx: extra_extensions``. The pages are generated from
the docstrings by ``automodule`` of the package's public entry points (``replicate.losses``,
``replicate.metrics``, ...), which document what each one exports (``__all__``), so the
pages follow the package when modules move inside it. This extension makes those
docstrings build under the book's strict ``-W -n`` build:

* **Citations.** Docstrings cite as the chapters do, with MyST's ``{cite}`key```; autodoc
  reads reStructuredText, so each is rewritten to ``:cite:p:`key``` (sphinxcontrib-bibtex)
  and links to the bibliography like a chapter's citation.
* **References to the rest of the package.** A docstring may name a module or function
  that has no page of its own (``:mod:`replicate.training.steps```, ``:func:`load_data```).
  When the name resolves to a real object of the package - from the documented module,
  the class it is in, or any submodule of that module's package - it is shown as code
  without a link. A name that resolves to nothing still fails the build.
* **Sections.** numpy-style sections (``Parameters``, ``Returns``, ``Example``) are rendered
  by Sphinx's napoleon (its numpy parser, called here for functions, classes and modules;
  not for attributes, whose ``#:`` comments would otherwise read as ``type: description``).
* **Other libraries.** The book builds with no network, so there is no intersphinx:
  references to :data:`EXTERNAL` modules' objects (``torch.Tensor``, ``numpy.ndarray``) are
  shown as code without a link.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

#: Top-level modules of other libraries whose objects docstrings and annotations name.
EXTERNAL = ("torch", "numpy", "np", "pandas", "pd", "scipy", "pathlib", "os", "time", "typing",
            "collections", "dataclasses", "matplotlib", "Module", "Tensor")
PACKAGE = "replicate"
#: The folder of the API pages, relative to the repository root.
API_DIR = Path("book") / "api"
_CITE = re.compile(r"\{cite(?::(p|t|ps|ts))?\}`([^`]+)`")


def myst_citations_to_rst(text: str) -> str:
    """``{cite}`a,b``` (MyST) -> ``:cite:p:`a,b``` (reStructuredText, sphinxcontrib-bibtex);
    ``{cite:t}`` -> ``:cite:t:``."""
    return _CITE.sub(lambda m: f":cite:{m.group(1) or 'p'}:`{m.group(2)}`", text)


def _rewrite_citations(app, what, name, obj, options, lines) -> None:
    for i, line in enumerate(lines):
        if "{cite" in line:
            lines[i] = myst_citations_to_rst(line)


def _numpy_sections(app, what, name, obj, options, lines) -> None:
    if what in ("attribute", "data", "property"):
        return
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import NumpyDocstring

    config = Config(napoleon_use_param=False, napoleon_use_rtype=False)
    lines[:] = NumpyDocstring(lines, config, app, what, name, obj, options).lines()


def _resolve(path: str):
    """The object called ``path`` (``a.b.c``: a module, or attributes of one), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except (ImportError, ValueError):
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _submodules(package: str) -> list[str]:
    mod = importlib.import_module(package)
    if not hasattr(mod, "__path__"):
        return []
    return [f"{package}.{m.name}" for m in pkgutil.iter_modules(mod.__path__) if not m.name.startswith("_")]


def package_object(target: str, module: str | None, cls: str | None):
    """The object of the package that ``target`` names from the context ``module.cls``:
    ``module.cls.target``, ``module.target``, ``target`` itself, or ``target`` in a submodule
    of ``module`` or of the subpackage it is in (never a walk over the whole package);
    None when there is none."""
    target = target.lstrip(".~")
    module = module or PACKAGE
    candidates = [f"{module}.{cls}.{target}"] if cls else []
    candidates += [f"{module}.{target}", target, f"{PACKAGE}.{target}"]
    parent = module.rpartition(".")[0]
    for package in dict.fromkeys([module, parent] if parent and parent != PACKAGE else [module]):
        try:
            candidates += [f"{sub}.{target}" for sub in _submodules(package)]
        except ImportError:
            pass
    for path in candidates:
        if path.split(".")[0] == PACKAGE and _resolve(path) is not None:
            return path
    return None


def _unlinked_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    if target.lstrip(".~").split(".")[0] in EXTERNAL:
        return contnode
    if package_object(target, node.get("py:module"), node.get("py:class")) is not None:
        return contnode
    return None  # a name that is nothing: Sphinx warns, and the strict build fails


def api_modules(root=None) -> dict[str, Path]:
    """``{module: page}`` for every ``automodule`` directive of the API pages ``book/api/*.md``."""
    from .. import config

    out = {}
    for page in sorted((Path(root or config.repo_root()) / API_DIR).glob("*.md")):
        for name in re.findall(r"^\.\. automodule:: (\S+)", page.read_text(), flags=re.M):
            out[name] = page
    return out


def public_objects(module) -> dict[str, object]:
    """What ``automodule`` documents of ``module``: the names of ``__all__``, else the public
    names the module itself defines."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__]
    return {n: getattr(module, n) for n in names}


def api_callables(root=None) -> dict[str, object]:
    """``{module.name: object}`` for every public function and class (exceptions excepted) of
    the modules the API pages document: what must carry an example."""
    import inspect

    out = {}
    for name in api_modules(root):
        for attr, obj in public_objects(importlib.import_module(name)).items():
            if inspect.isfunction(obj) or (inspect.isclass(obj) and not issubclass(obj, BaseException)):
                out[f"{name}.{attr}"] = obj
    return out


def setup(app):
    app.connect("autodoc-process-docstring", _rewrite_citations)
    app.connect("autodoc-process-docstring", _numpy_sections)
    app.connect("missing-reference", _unlinked_reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
