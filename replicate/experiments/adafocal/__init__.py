"""The experiment chapter ``exp_adafocal``: Ghosh et al. (2022), AdaFocal.

One module per role, as in every chapter (:mod:`replicate.comparison.chapter`); each is
imported when first reached (``rp.experiments.adafocal.figures``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
