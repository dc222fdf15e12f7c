"""Theory of focal loss for calibration (Mukhoti et al. 2020, {cite}`mukhoti2020focal`): one name space.

Focal loss for one sample is ``L_f = -(1 - p)^gamma log p`` with ``p`` the predicted
probability of the true class (Lin et al. 2017). The paper's statements live in modules
named by concept; this module re-exports their public functions so that
``replicate.theory.focal.<name>`` keeps working:

- :mod:`.focal_gradient` -- Prop. 1 / App. B: the gradient factor ``g(p, gamma)``, its
  derivatives (Eq. 7, Eq. 9), the crossing point ``p0(gamma)`` and the ``p`` above which a
  larger ``gamma`` shrinks ``g`` (AdaFocal's footnote 2);
- :mod:`.focal_lambert` -- Prop. 2 / App. B Prop. 4: ``gamma*`` through Lambert W;
- :mod:`.focal_risk` -- App. H: the KL bound and the focal risk minimiser (Eq. 13, Fig. 7);
- :mod:`.focal_autograd` -- Prop. 1 checked by autograd on a network;
- :mod:`.linear_experiment` -- App. G, logistic regression with CE and focal loss;
- :mod:`.focal_claims` -- every claim of the paper checked (the chapter's claims table),
  with :mod:`.focal_figures` drawing the chapter's figures.
"""
from __future__ import annotations

from .focal_autograd import gradient_factor_autograd, prop1_batch
from .focal_gradient import (focal_gradient_factor, gradient_factor_dgamma, gradient_factor_dp,
                             gradient_shrink_threshold, gradient_threshold, k_term, k_term_dp,
                             log_gradient_factor, shrink_gamma)
from .focal_lambert import eq10_rhs, lambert_w_gamma, lambert_w_gamma_branches, lambert_w_gamma_rootfind
from .focal_risk import bernoulli_step, entropy, focal_expected_loss, focal_kl_bound, focal_risk_minimizer

__all__ = [
    "focal_gradient_factor", "log_gradient_factor", "gradient_factor_dp", "k_term", "k_term_dp",
    "gradient_threshold", "gradient_factor_dgamma", "shrink_gamma", "gradient_shrink_threshold",
    "eq10_rhs", "lambert_w_gamma", "lambert_w_gamma_branches", "lambert_w_gamma_rootfind",
    "focal_expected_loss", "focal_kl_bound", "bernoulli_step", "focal_risk_minimizer", "entropy",
    "gradient_factor_autograd", "prop1_batch",
]
