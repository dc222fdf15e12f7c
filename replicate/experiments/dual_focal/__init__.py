"""The experiment chapter ``exp_dual_focal``: Tao et al. (2023), Dual Focal Loss.

One module per role, as in every chapter (:mod:`replicate.comparison.chapter`); each is
imported when first reached (``rp.experiments.dual_focal.figures``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
