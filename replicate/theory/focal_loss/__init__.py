"""The theory chapter ``theory_focal_loss``: focal loss for calibration (Mukhoti et al. 2020,
{cite}`mukhoti2020focal`), and one name space over its core modules.

Focal loss for one sample is ``L_f = -(1 - p)^gamma log p`` with ``p`` the predicted
probability of the true class (Lin et al. 2017). The paper's statements live in modules
named by concept; this package re-exports their public functions
(``replicate.theory.focal_loss.<name>``):

- :mod:`.gradient` -- Prop. 1 / App. B: the gradient factor ``g(p, gamma)``, its
  derivatives (Eq. 7, Eq. 9), the crossing point ``p0(gamma)`` and the ``p`` above which a
  larger ``gamma`` shrinks ``g`` (AdaFocal's footnote 2);
- :mod:`.lambert` -- Prop. 2 / App. B Prop. 4: ``gamma*`` through Lambert W;
- :mod:`.risk` -- App. H: the KL bound and the focal risk minimiser (Eq. 13, Fig. 7);
- :mod:`.autograd` -- Prop. 1 checked by autograd on a network;
- :mod:`.linear_experiment` -- App. G, logistic regression with CE and focal loss;
- :mod:`.claims` -- every claim of the paper checked (the chapter's claims table; the
  gradient claims in :mod:`.claims_gradient`, the risk claims in :mod:`.claims_risk`),
  with :mod:`.figures` drawing the chapter's figures. These are imported when first reached.
"""
from __future__ import annotations

from ... import lazy_submodules
from .autograd import gradient_factor_autograd, prop1_batch
from .gradient import (focal_gradient_factor, gradient_factor_dgamma, gradient_factor_dp, gradient_shrink_threshold,
                       gradient_threshold, k_term, k_term_dp, log_gradient_factor, shrink_gamma)
from .lambert import eq10_rhs, lambert_w_gamma, lambert_w_gamma_branches, lambert_w_gamma_rootfind
from .risk import bernoulli_step, entropy, focal_expected_loss, focal_kl_bound, focal_risk_minimizer

__all__ = [
    "focal_gradient_factor", "log_gradient_factor", "gradient_factor_dp", "k_term", "k_term_dp",
    "gradient_threshold", "gradient_factor_dgamma", "shrink_gamma", "gradient_shrink_threshold",
    "eq10_rhs", "lambert_w_gamma", "lambert_w_gamma_branches", "lambert_w_gamma_rootfind",
    "focal_expected_loss", "focal_kl_bound", "bernoulli_step", "focal_risk_minimizer", "entropy",
    "gradient_factor_autograd", "prop1_batch",
]
__getattr__, __dir__ = lazy_submodules(__name__, __path__, __all__)
