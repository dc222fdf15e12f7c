"""Every claim of Mukhoti et al. 2020 ({cite}`mukhoti2020focal`) checked; verdicts come from the checks.

:func:`report` runs all checks at the grid sizes of a profile and returns a
:class:`~replicate.theory.report.TheoryReport`: the claims (verdicts of
:mod:`replicate.claims.vocabulary`, each row with the chapter heading that decides it), the
numbers the chapter's prose quotes and the data of its figures. :func:`claims` returns the
claims only (the builder registered in :data:`replicate.claims.registry.SOURCES`).

The checks live in :mod:`.claims_gradient` (Prop. 1, the shape of ``g``, Prop. 2,
FLSD-53) and :mod:`.claims_risk` (Appendices H and G).
"""
from __future__ import annotations



from ...claims import ClaimLog
from ..report import TheoryReport, run_checks
from . import claims_gradient as grad
from . import claims_risk as risk

__all__ = ["SIZES", "SECTIONS", "STEPS", "report", "claims"]

PAPER, CHAPTER = "mukhoti2020", "theory_focal_loss"

#: Grid sizes per profile (a theory chapter scales only its grids with the profile).
SIZES = {
    "smoke": dict(n_p0=50, n_grid=201, n_random=2_000, n_autograd=8, n_autograd_all=2, n_items=6,
                  n_k100=99, spreads=(0.5,)),
    "cpu": dict(n_p0=500, n_grid=2001, n_random=20_000, n_autograd=64, n_autograd_all=4, n_items=24,
                n_k100=980, spreads=(0.2, 0.5, 1.0)),
    "paper": dict(n_p0=2000, n_grid=4001, n_random=100_000, n_autograd=128, n_autograd_all=16, n_items=96,
                  n_k100=3920, spreads=(0.1, 0.2, 0.3, 0.5, 0.75, 1.0)),
}
SIZES["gpu"] = SIZES["cpu"]

#: The chapter's headings, by topic (each claim row names the one that decides it).
SECTIONS = {
    "prop1": "Prop. 1: focal loss rescales the cross-entropy gradient",
    "shape": "The shape of the gradient factor g (Figure 4a)",
    "prop2": "Prop. 2: the Lambert-W γ*",
    "flsd": "Where FLSD-53's thresholds come from",
    "kl": "Appendix H: a KL lower bound",
    "fig7": "The focal risk minimiser (Figure 7)",
    "many": "Many classes: an over-confident minimiser",
    "linear": "Appendix G: cross-entropy and focal loss on a linear model",
}
#: The checks, in chapter order: (section, function adding its rows).
STEPS = (("prop1", grad.prop1), ("shape", grad.shape), ("prop2", grad.prop2), ("flsd", grad.flsd),
         ("kl", risk.kl_bound), ("fig7", risk.minimiser), ("many", risk.many_classes),
         ("linear", risk.linear_model))


def report(profile: str = "cpu") -> TheoryReport:
    """Every check of the chapter at the grid sizes of ``profile`` (smoke, cpu, gpu, paper)."""
    return run_checks(PAPER, CHAPTER, profile, SIZES, SECTIONS, STEPS)


def claims(profile: str = "cpu") -> ClaimLog:
    """The claims of the chapter (the registry's builder)."""
    return report(profile).log
