"""The theory chapter ``theory_dual_focal``: Tao et al. (2023), Dual Focal Loss.

Its core modules (named by concept), ``claims`` (every check, the registered builder) and
``figures``, each imported when first reached (``rp.theory.dual_focal.claims``).
"""
from ... import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
