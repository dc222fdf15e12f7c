"""The Monte Carlo studies of the chapter *Measuring calibration*, on synthetic predictors.

The chapter measures how far calibration estimators land from the true calibration error of
:class:`replicate.synthetic.BetaModel` (closed forms) as the test-set size and the number of
bins change, and how well temperature scaling {cite}`guo2017calibration` recovers the known
optimal temperature ``beta`` of :class:`replicate.synthetic.LogitModel`. This module holds
what decides the chapter's tables and quoted numbers:

- :data:`SIZES` / :func:`sizes` -- how much Monte Carlo work each profile does;
- the estimators grouped by what they aim at: :data:`L1` (the true ECE), :data:`L2` (the
  true RMS calibration error), :data:`OTHER` (MCE and classwise-ECE), :data:`BINNED_L1`
  (the binned L1 estimators), :data:`BINS` (ECE and AdaECE for the bin-count study);
  :func:`true_errors` and :func:`targets` give the values they aim at;
- :func:`estimate_table` -- one sample's estimates beside the true values;
- :func:`mean_estimates` and the numbers the prose quotes: :func:`model_numbers`,
  :func:`size_numbers`, :func:`calibrated_numbers`, :func:`bins_numbers`;
- the temperature-scaling study: :func:`fit_temperatures`, :func:`before_after`,
  :func:`temperature_numbers`, :func:`temperature_refits`, :func:`refit_numbers`;
- :func:`glue` -- every number of a dict glued into the prose (``myst_nb.glue``).

The Monte Carlo loops themselves are :func:`replicate.synthetic.estimator_study`; the
figures are in :mod:`replicate.calibration.figures`. Numbers are percentages where the
chapter prints percentages (estimates, errors, accuracies), plain otherwise.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .. import metrics, posthoc
from ..synthetic import BetaModel, LogitModel, LogitSample, as_generator

__all__ = ["SIZES", "sizes", "L1", "L2", "OTHER", "BINNED_L1", "BINS", "SHORT_NAMES", "true_errors",
           "targets", "estimate_table", "mean_estimates", "model_numbers", "size_numbers",
           "calibrated_numbers", "bins_numbers", "fit_temperatures", "before_after",
           "temperature_numbers", "temperature_refits", "refit_numbers", "glue"]

#: Monte Carlo work per profile: test-set sizes ``ns`` and repetitions ``reps`` of the size
#: study, bin counts ``bins`` at sizes ``bins_ns``, the demonstration sample ``demo_n``, the
#: validation / test sizes of the temperature study and its number of ``refits``.
SIZES = {
    "smoke": dict(ns=[100, 300, 1000], reps=4, bins=[5, 15, 50], bins_ns=[300, 3000],
                  demo_n=2000, n_val=1000, n_test=1000),
    "cpu": dict(ns=[100, 300, 1000, 3000, 10000], reps=25, bins=[5, 10, 15, 30, 60, 100],
                bins_ns=[1000, 10000], demo_n=5000, n_val=5000, n_test=10000),
}
SIZES["gpu"] = SIZES["paper"] = dict(SIZES["cpu"], reps=100)
for _s in SIZES.values():
    _s["refits"] = max(_s["reps"], 12)

#: Estimators that aim at the true (L1) expected calibration error.
L1 = {"ECE (15 equal-width)": metrics.ece,
      "AdaECE (15 equal-mass)": metrics.adaptive_ece,
      "ECE sweep": metrics.ece_sweep,
      "smooth ECE": metrics.smooth_ece}
#: Estimators that aim at the true RMS (L2) calibration error.
L2 = {"RMSCE (15 equal-width)": metrics.rms_calibration_error,
      "debiased (15 equal-mass)": metrics.debiased_ece}
#: The worst-bin error and the classwise error (no closed form for the synthetic model).
OTHER = {"MCE (15 equal-width)": metrics.mce, "classwise-ECE": metrics.classwise_ece}
#: The binned L1 estimators (the perfectly calibrated predictor's study).
BINNED_L1 = {k: L1[k] for k in ("ECE (15 equal-width)", "AdaECE (15 equal-mass)", "ECE sweep")}
#: The estimators of the bin-count study (called with ``n_bins=``).
BINS = {"ECE (equal-width)": metrics.ece, "AdaECE (equal-mass)": metrics.adaptive_ece}
#: Short keys of the size study's numbers (``ece_lo``, ``ece_hi``, ...).
SHORT_NAMES = {"ece": "ECE (15 equal-width)", "ada": "AdaECE (15 equal-mass)",
               "sweep": "ECE sweep", "smece": "smooth ECE",
               "rms": "RMSCE (15 equal-width)", "deb": "debiased (15 equal-mass)"}


def sizes(profile: str) -> dict:
    """The Monte Carlo sizes of ``profile`` (a copy of its :data:`SIZES` entry)."""
    if profile not in SIZES:
        raise ValueError(f"profile must be one of {', '.join(SIZES)}; got {profile!r}")
    return dict(SIZES[profile])


def true_errors(model: BetaModel) -> dict:
    """The model's true ``ECE``, ``RMSCE`` and ``MCE`` (closed forms of :class:`BetaModel`)."""
    return {"ECE": model.true_ece(), "RMSCE": model.true_rmsce(), "MCE": model.true_mce()}


def targets(model: BetaModel) -> dict:
    """Estimator name -> the true value it aims at (NaN for classwise-ECE: no closed form)."""
    truth = true_errors(model)
    return {**{k: truth["ECE"] for k in L1}, **{k: truth["RMSCE"] for k in L2},
            "MCE (15 equal-width)": truth["MCE"], "classwise-ECE": math.nan}


def estimate_table(model: BetaModel, probs, labels) -> pd.DataFrame:
    """Every estimator of :data:`L1`, :data:`L2`, :data:`OTHER` on one sample, in percent,
    beside the true value it aims at. Columns: estimator, estimate (%), true value (%)."""
    target = targets(model)
    rows = [(k, 100 * f(probs, labels), 100 * target[k]) for k, f in {**L1, **L2, **OTHER}.items()]
    return pd.DataFrame(rows, columns=["estimator", "estimate (%)", "true value (%)"])


def mean_estimates(study: pd.DataFrame, by=("estimator", "n")) -> pd.DataFrame | pd.Series:
    """Mean estimate over repetitions of a study of :func:`replicate.synthetic.estimator_study`:
    estimators as rows and the last column of ``by`` as columns (a Series for three keys)."""
    missing = [c for c in (*by, "estimate") if c not in study.columns]
    if missing:
        raise ValueError(f"study has no column(s) {missing}; columns are {list(study.columns)}")
    means = study.groupby(list(by)).estimate.mean()
    return means.unstack() if len(by) == 2 else means


def model_numbers(model: BetaModel) -> dict:
    """The BetaModel's parameters and true values as quoted in the prose (errors in percent)."""
    truth = true_errors(model)
    return {"beta_a": float(model.a), "beta_b": float(model.b), "beta_alpha": float(model.alpha),
            "beta_k": int(model.n_classes), "true_ece": 100 * truth["ECE"],
            "true_rms": 100 * truth["RMSCE"], "true_mce": 100 * truth["MCE"],
            "true_acc": 100 * model.accuracy(), "true_conf": 100 * model.mean_confidence()}


def size_numbers(study: pd.DataFrame, model: BetaModel) -> dict:
    """Mean estimates (percent) of every estimator of :data:`SHORT_NAMES` at the smallest
    (``<key>_lo``) and largest (``<key>_hi``) test-set size of ``study``, the sizes
    ``n_lo``/``n_hi``, the repetitions ``reps`` and the central-limit prediction ``pred_lo``
    of the 15-bin ECE at ``n_lo`` (:meth:`BetaModel.expected_binned_ece`)."""
    means = mean_estimates(study)
    n_lo, n_hi = int(study.n.min()), int(study.n.max())
    out = {"n_lo": n_lo, "n_hi": n_hi, "reps": int(study.rep.nunique())}
    for key, name in SHORT_NAMES.items():
        out[f"{key}_lo"] = float(100 * means.loc[name, n_lo])
        out[f"{key}_hi"] = float(100 * means.loc[name, n_hi])
    out["pred_lo"] = float(100 * model.expected_binned_ece(n_lo))
    return out


def calibrated_numbers(study: pd.DataFrame, model: BetaModel) -> dict:
    """Mean 15-bin ECE (percent) at the smallest and largest size of ``study``
    (``cal_ece_lo``/``_hi``) and its central-limit predictions (``cal_pred_lo``/``_hi``)."""
    means = mean_estimates(study)
    n_lo, n_hi = int(study.n.min()), int(study.n.max())
    name = "ECE (15 equal-width)"
    return {"cal_ece_lo": float(100 * means.loc[name, n_lo]),
            "cal_ece_hi": float(100 * means.loc[name, n_hi]),
            "cal_pred_lo": float(100 * model.expected_binned_ece(n_lo)),
            "cal_pred_hi": float(100 * model.expected_binned_ece(n_hi))}


def bins_numbers(study: pd.DataFrame) -> dict:
    """The bin-count study at its smallest test-set size ``bins_n``: mean ECE (percent) with
    the fewest (``bins_ece_lo``, ``nb_lo`` bins) and the most bins (``bins_ece_hi``,
    ``nb_hi``), and AdaECE with the most bins (``bins_ada_hi``)."""
    means = mean_estimates(study, by=("estimator", "n", "n_bins"))
    nb_lo, nb_hi, bn = int(study.n_bins.min()), int(study.n_bins.max()), int(study.n.min())
    ece, ada = BINS
    return {"nb_lo": nb_lo, "nb_hi": nb_hi, "bins_n": bn,
            "bins_ece_lo": float(100 * means[(ece, bn, nb_lo)]),
            "bins_ece_hi": float(100 * means[(ece, bn, nb_hi)]),
            "bins_ada_hi": float(100 * means[(ada, bn, nb_hi)])}


def fit_temperatures(val: LogitSample) -> dict:
    """Temperature scaling fitted on ``val`` three ways: ``"ece"`` (the papers' grid search by
    validation ECE), ``"nll"`` (the same grid by validation NLL) and ``"continuous"``
    (continuous minimisation of validation NLL, Guo et al.'s recipe)."""
    return {"ece": posthoc.fit_temperature(val.logits, val.labels, method="grid", metric="ece"),
            "nll": posthoc.fit_temperature(val.logits, val.labels, method="grid", metric="nll"),
            "continuous": posthoc.fit_temperature(val.logits, val.labels, method="nll")}


def before_after(sample: LogitSample, calibrator: posthoc.Calibrator) -> dict:
    """``{"before: T = 1": (probs, labels), "after: T = <T>": (probs, labels)}`` for a
    reliability grid: the sample's softmax probabilities before and after ``calibrator``."""
    return {"before: T = 1": (posthoc.temperature_scale(sample.logits, 1.0), sample.labels),
            f"after: T = {calibrator.T:.1f}": (calibrator(sample.logits), sample.labels)}


def temperature_numbers(model: LogitModel, fits: Mapping[str, posthoc.Calibrator],
                        val: LogitSample, test: LogitSample, rng=None) -> dict:
    """The temperature-scaling numbers the prose quotes: the fitted temperatures (``T_ece``,
    ``T_nll``, ``T_cont``) and the true one ``ts_beta``, the sample sizes, and on ``test``
    the ECE (percent), NLL and accuracy (percent) before and after the ECE-selected
    temperature, with the predictor's true ECE (``true_ece_logit``, Monte Carlo from
    ``rng``, :meth:`LogitModel.true_ece`)."""
    t = fits["ece"].T
    p_before, p_after = posthoc.temperature_scale(test.logits, 1.0), fits["ece"](test.logits)
    true_ece, _ = model.true_ece(rng=rng)
    return {"ts_beta": float(model.beta), "ts_n_val": len(val.labels), "ts_n_test": len(test.labels),
            "T_ece": t, "T_nll": fits["nll"].T, "T_cont": fits["continuous"].T,
            "ece_before": 100 * metrics.ece(p_before, test.labels),
            "ece_after": 100 * metrics.ece(p_after, test.labels),
            "true_ece_logit": 100 * true_ece,
            "nll_before": metrics.nll(test.logits, test.labels),
            "nll_after": metrics.nll(test.logits / t, test.labels),
            "acc_before": 100 * (1 - metrics.error_rate(p_before, test.labels)),
            "acc_after": 100 * (1 - metrics.error_rate(p_after, test.labels))}


def temperature_refits(model: LogitModel, n_val: int, reps: int, rng=None) -> pd.DataFrame:
    """Temperature scaling refitted on ``reps`` fresh validation samples of size ``n_val``
    drawn one after another from ``rng``: one row per sample, columns
    ``T by validation ECE (grid)`` and ``T by validation NLL (continuous)``."""
    from ..checks import positive_int

    n_val, reps, g = positive_int("n_val", n_val), positive_int("reps", reps), as_generator(rng)
    rows = []
    for _ in range(reps):
        v = model.sample(n_val, g)
        rows.append({"T by validation ECE (grid)": posthoc.fit_temperature(v.logits, v.labels, method="grid",
                                                                           metric="ece", warn=False).T,
                     "T by validation NLL (continuous)":
                         posthoc.fit_temperature(v.logits, v.labels, method="nll", warn=False).T})
    return pd.DataFrame(rows)


def refit_numbers(refits: pd.DataFrame) -> dict:
    """Number of refits and the standard deviation (``ddof=1``) of each criterion's ``T``."""
    ece, nll = refits.columns[:2]
    return {"n_refits": len(refits), "sd_T_ece": float(refits[ece].std()),
            "sd_T_nll": float(refits[nll].std())}


def glue(numbers: Mapping[str, object]) -> None:
    """``myst_nb.glue(name, value, display=False)`` for every entry (NumPy scalars as Python
    numbers, so that ``{glue:text}`` prints ``0.25`` rather than ``np.float64(0.25)``)."""
    from myst_nb import glue as _glue

    for name, value in numbers.items():
        _glue(name, value.item() if isinstance(value, np.generic) else value, display=False)
