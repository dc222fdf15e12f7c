"""The experiment chapter ``exp_fcl``: Liang et al. (2024), Focal Calibration Loss.

One module per role, as in every chapter (:mod:`replicate.comparison.chapter`); each is
imported when first reached (``rp.experiments.fcl.figures``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
