"""The theory chapter ``theory_fts``: Komisarenko & Kull (2024), focal temperature scaling.

Its core modules (named by concept), ``claims`` (every check, the registered builder) and
``figures``, each imported when first reached (``rp.theory.fts.claims``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
