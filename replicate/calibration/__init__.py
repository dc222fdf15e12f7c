"""The chapter *Measuring calibration* in code: the estimator studies on synthetic models
with a known calibration error (:mod:`.study`) and their figures (:mod:`.figures`), each
imported when first reached (``rp.calibration.study``)."""
from .. import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__)
