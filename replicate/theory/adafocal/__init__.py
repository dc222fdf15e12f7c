"""The theory chapter ``theory_adafocal``: Ghosh et al. (2022), AdaFocal.

Its core modules (named by concept), ``claims`` (every check, the registered builder) and
``figures``, each imported when first reached (``rp.theory.adafocal.claims``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
