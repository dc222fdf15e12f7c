"""The experiment chapter ``exp_focal_loss``: Mukhoti et al. (2020), focal loss and FLSD-53.

One module per role, as in every chapter (:mod:`replicate.comparison.chapter`); each is
imported when first reached (``rp.experiments.focal_loss.figures``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
