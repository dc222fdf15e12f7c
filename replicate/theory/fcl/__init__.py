"""The theory chapter ``theory_fcl``: Liang et al. (2024), Focal Calibration Loss.

Its core modules (named by concept), ``claims`` (every check, the registered builder) and
``figures``, each imported when first reached (``rp.theory.fcl.claims``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
