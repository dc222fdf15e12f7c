"""The experiment chapter ``exp_fts``: Komisarenko & Kull (2024), focal temperature scaling.

One module per role, as in every chapter (:mod:`replicate.comparison.chapter`); each is
imported when first reached (``rp.experiments.fts.figures``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
