"""Synthetic predictors whose true calibration error is known.

Binned calibration estimators (ECE {cite}`naeini2015ece,guo2017calibration`, AdaECE
{cite}`nixon2019measuring`, the debiased estimator {cite}`kumar2019verified`, the sweep
{cite}`roelofs2022mitigating`) are biased, and the bias depends on the sample size and the
number of bins. To see it we need predictors whose *population* calibration error is known
exactly. Two models are provided.

:class:`BetaModel` -- a top-label model with a closed form. The reported confidence is
``c = lo + (1 - lo) U`` with ``U ~ Beta(a, b)`` (``lo = 1/K`` for K classes, so that ``c``
is a possible top-1 probability), and the prediction is correct with probability

    h(c) = lo + (1 - lo) U**alpha.

``alpha = 1`` is perfectly calibrated, ``alpha > 1`` over-confident (accuracy below
confidence), ``alpha < 1`` under-confident. Since ``U**alpha - U`` has one sign on
[0, 1], with the Beta moments ``m(s) = E[U**s] = B(a + s, b) / B(a, b)``:

    ECE_1 = E|h(c) - c|              = (1 - lo) |m(alpha) - m(1)|
    ECE_2 = sqrt(E (h(c) - c)**2)    = (1 - lo) sqrt(m(2 alpha) - 2 m(alpha + 1) + m(2))
    MCE   = sup_c |h(c) - c|         = (1 - lo) u* |1/alpha - 1|,  u* = alpha**(1/(1-alpha)).

:class:`LogitModel` -- a logit model for temperature scaling {cite}`guo2017calibration`.
True logits ``z`` have i.i.d. ``N(0, scale**2)`` entries, the label is drawn from
``softmax(z)`` and the predictor reports the logits ``beta * z``. Dividing the reported
logits by ``T = beta`` recovers the true class probabilities, so ``beta`` is the
population-optimal temperature under every proper score (NLL included) and under ECE.
Sharpening raises the top probability, so ``max softmax(beta z) - max softmax(z)`` has
the sign of ``beta - 1`` for every ``z`` and the true top-label ECE is the plain
expectation ``|E[max softmax(beta z) - max softmax(z)]|`` (1-D quadrature for K = 2,
Monte Carlo with its standard error otherwise).

All sampling takes a seeded :class:`numpy.random.Generator` (or an int seed).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import integrate, special, stats

from .checks import positive_int

__all__ = ["BetaModel", "LogitModel", "LogitSample", "as_generator", "estimator_study"]


def as_generator(rng) -> np.random.Generator:
    """``rng`` as a :class:`numpy.random.Generator` (an int or None seeds a new one)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be a numpy Generator, an int seed or None, got {type(rng).__name__}")


def _positive(name: str, value) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


@dataclass(frozen=True)
class BetaModel:
    """Top-label model: ``c = lo + (1-lo) U``, ``U ~ Beta(a, b)``, ``P(correct | c) = h(c)``.

    ``h(c) = lo + (1 - lo) U**alpha``; ``lo = 1 / n_classes``. See the module docstring
    for the closed forms of :meth:`true_ece`, :meth:`true_rmsce`, :meth:`true_mce`.
    """

    a: float = 4.0
    b: float = 1.5
    alpha: float = 1.6
    n_classes: int = 10

    def __post_init__(self):
        for name in ("a", "b", "alpha"):
            _positive(name, getattr(self, name))
        positive_int("n_classes", self.n_classes, lo=2)

    @property
    def lo(self) -> float:
        """The smallest possible top-1 confidence, ``1 / n_classes``."""
        return 1.0 / self.n_classes

    def moment(self, s: float) -> float:
        """``E[U**s] = B(a + s, b) / B(a, b)`` for ``U ~ Beta(a, b)``."""
        return float(np.exp(special.betaln(self.a + s, self.b) - special.betaln(self.a, self.b)))

    def calibration_function(self, confidence):
        """``h(c)``: the probability that a prediction with confidence ``c`` is correct."""
        c = np.asarray(confidence, dtype=np.float64)
        if np.any((c < self.lo) | (c > 1)):
            raise ValueError(f"confidence must lie in [1/n_classes, 1] = [{self.lo}, 1]")
        u = (c - self.lo) / (1.0 - self.lo)
        return self.lo + (1.0 - self.lo) * u ** self.alpha

    def confidence_density(self, confidence):
        """Density of the reported confidence ``c`` (a scaled Beta(a, b))."""
        c = np.asarray(confidence, dtype=np.float64)
        return stats.beta(self.a, self.b, loc=self.lo, scale=1.0 - self.lo).pdf(c)

    def accuracy(self) -> float:
        """``E[h(c)] = lo + (1 - lo) m(alpha)``."""
        return self.lo + (1.0 - self.lo) * self.moment(self.alpha)

    def mean_confidence(self) -> float:
        """``E[c] = lo + (1 - lo) a / (a + b)``."""
        return self.lo + (1.0 - self.lo) * self.a / (self.a + self.b)

    def true_ece(self) -> float:
        """Population top-label ECE ``E|h(c) - c| = (1 - lo) |m(alpha) - m(1)|``."""
        return (1.0 - self.lo) * abs(self.moment(self.alpha) - self.moment(1.0))

    def true_rmsce(self) -> float:
        """Population L2 calibration error ``sqrt(E (h(c) - c)**2)`` from Beta moments."""
        m = self.moment
        val = m(2 * self.alpha) - 2 * m(self.alpha + 1) + m(2.0)
        return (1.0 - self.lo) * math.sqrt(max(val, 0.0))

    def true_mce(self) -> float:
        """``sup_c |h(c) - c| = (1-lo) u* |1/alpha - 1|`` with ``u* = alpha**(1/(1-alpha))``."""
        if self.alpha == 1.0:
            return 0.0
        u = self.alpha ** (1.0 / (1.0 - self.alpha))
        return (1.0 - self.lo) * u * abs(1.0 / self.alpha - 1.0)

    def expected_binned_ece(self, n: int, n_bins: int = 15) -> float:
        """Central-limit approximation of ``E[ECE]`` for ``n`` samples and equal-width bins.

        With ``S_b = sum_i 1[c_i in b] (correct_i - c_i)`` the binned estimate is
        ``ECE = sum_b |S_b| / n``. ``S_b`` is a sum of ``n`` i.i.d. terms with mean
        ``m_b = int_b (h - c) dF`` and second moment ``int_b (h - 2 h c + c**2) dF``
        (quadrature), so ``S_b ~ N(n m_b, n s_b)`` and ``E|S_b|`` is the folded-normal mean
        ``sigma sqrt(2/pi) exp(-mu**2 / (2 sigma**2)) + mu (1 - 2 Phi(-mu / sigma))``.
        For a calibrated predictor (``m_b = 0``) this is ``sum_b sqrt(2 s_b / (pi n))``:
        the bias shrinks like ``sqrt(n_bins / n)``. Accurate once bins hold tens of samples.
        """
        n = positive_int("n", n)
        n_bins = positive_int("n_bins", n_bins)
        lo, span, al = self.lo, 1.0 - self.lo, self.alpha
        # bin edges on the u scale; partial moments int_bin u^s dBeta = m(s) [I(u2) - I(u1)]
        e = np.clip((np.arange(n_bins + 1) / n_bins - lo) / span, 0.0, 1.0)

        def part(s):
            return self.moment(s) * np.diff(special.betainc(self.a + s, self.b, e))

        p0, p1, pa, pa1, p2 = part(0.0), part(1.0), part(al), part(al + 1.0), part(2.0)
        m = span * (pa - p1)                                              # int_b (h - c) dF
        e_h = lo * p0 + span * pa
        e_hc = lo * lo * p0 + lo * span * (p1 + pa) + span * span * pa1
        e_cc = lo * lo * p0 + 2 * lo * span * p1 + span * span * p2
        var = np.maximum(n * (e_h - 2 * e_hc + e_cc - m * m), 0.0)
        mu, sd = n * m, np.sqrt(var)
        safe = np.where(sd > 0, sd, 1.0)
        folded = np.where(sd > 0, sd * np.sqrt(2 / np.pi) * np.exp(-mu * mu / (2 * safe * safe))
                          + mu * (1 - 2 * stats.norm.cdf(-mu / safe)), np.abs(mu))
        total = float(folded.sum())
        return total / n

    def sample(self, n: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """``n`` i.i.d. pairs ``(confidence, correct)``: float64 and bool arrays."""
        n, g = positive_int("n", n), as_generator(rng)
        u = g.beta(self.a, self.b, size=n)
        conf = self.lo + (1.0 - self.lo) * u
        correct = g.random(n) < self.lo + (1.0 - self.lo) * u ** self.alpha
        return conf, correct

    def sample_probs(self, n: int, rng=None, concentration: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        """``n`` probability vectors over ``n_classes`` whose top-1 entry is the confidence.

        The predicted class is uniform over classes; the remaining mass ``1 - c`` is spread
        over the other classes by a Dirichlet(``concentration``) draw, mixed with the
        uniform split just enough that no other entry reaches ``c``. A wrong label is drawn
        from the other classes in proportion to their probabilities. Returns
        ``(probs (n, K) float64, labels (n,) int64)``; the top-label calibration of these
        vectors is exactly that of :meth:`sample`.
        """
        n, g, k = positive_int("n", n), as_generator(rng), self.n_classes
        _positive("concentration", concentration)
        conf, correct = self.sample(n, g)
        rest = 1.0 - conf
        w = g.dirichlet(np.full(k - 1, float(concentration)), size=n)
        uniform = 1.0 / (k - 1)
        wmax = w.max(axis=1)
        room = (conf * (1 - 1e-9) - rest * uniform)          # >= 0 because conf >= 1/K
        excess = rest * (wmax - uniform)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(excess > room, room / excess, 1.0)
        others = rest[:, None] * ((1 - lam)[:, None] * uniform + lam[:, None] * w)
        top = g.integers(0, k, size=n)
        # place the top entry at `top` and the others in the remaining slots, in order
        slot = np.arange(k)[None, :]
        idx = slot - (slot > top[:, None])                    # index into `others`
        probs = np.where(slot == top[:, None], conf[:, None],
                         np.take_along_axis(others, np.clip(idx, 0, k - 2), axis=1))
        # wrong labels: inverse-CDF draw from the non-top entries
        masked = np.where(slot == top[:, None], 0.0, probs)
        cdf = np.cumsum(masked, axis=1)
        r = g.random(n) * cdf[:, -1]
        wrong = np.minimum((cdf <= r[:, None]).sum(axis=1), k - 1)
        wrong = np.where(wrong == top, (top + 1) % k, wrong)  # guards a zero-width tie
        labels = np.where(correct, top, wrong).astype(np.int64)
        return probs, labels


class LogitSample(NamedTuple):
    """One draw of :class:`LogitModel`: the reported logits, labels and true probabilities."""

    logits: np.ndarray
    labels: np.ndarray
    true_probs: np.ndarray


@dataclass(frozen=True)
class LogitModel:
    """Labels from ``softmax(z)``; the predictor reports ``beta * z``; optimal ``T = beta``.

    ``z`` has i.i.d. ``N(0, scale**2)`` entries over ``n_classes`` classes.
    """

    n_classes: int = 10
    beta: float = 1.8
    scale: float = 4.0

    def __post_init__(self):
        _positive("beta", self.beta)
        _positive("scale", self.scale)
        positive_int("n_classes", self.n_classes, lo=2)

    @property
    def optimal_temperature(self) -> float:
        """The population-optimal temperature, ``beta``."""
        return float(self.beta)

    def sample(self, n: int, rng=None) -> LogitSample:
        """``n`` draws: reported logits ``beta z`` (n, K), labels ~ softmax(z), softmax(z)."""
        n, g = positive_int("n", n), as_generator(rng)
        z = g.normal(0.0, self.scale, size=(n, self.n_classes))
        p = special.softmax(z, axis=1)
        cdf = np.cumsum(p, axis=1)
        labels = np.minimum((cdf < g.random(n)[:, None] * cdf[:, -1:]).sum(axis=1),
                            self.n_classes - 1).astype(np.int64)
        return LogitSample(self.beta * z, labels, p)

    def _gap_binary(self) -> float:
        # K = 2: top prob is sigmoid(|d|), d = z1 - z2 ~ N(0, 2 scale^2); integrate over |d|.
        sd = math.sqrt(2.0) * self.scale

        def f(x):
            return 2 * stats.norm.pdf(x, scale=sd) * (special.expit(self.beta * x) - special.expit(x))

        val, _ = integrate.quad(f, 0.0, np.inf, epsabs=1e-13, epsrel=1e-11, limit=200)
        return val

    def true_accuracy(self, n_mc: int = 400_000, rng=0) -> tuple[float, float]:
        """``E[max softmax(z)]`` (the accuracy) as ``(value, standard error)``; exact for K = 2."""
        if self.n_classes == 2:
            sd = math.sqrt(2.0) * self.scale
            val, _ = integrate.quad(lambda x: 2 * stats.norm.pdf(x, scale=sd) * special.expit(x),
                                    0.0, np.inf, epsabs=1e-13, epsrel=1e-11, limit=200)
            return val, 0.0
        z = as_generator(rng).normal(0.0, self.scale, size=(positive_int("n_mc", n_mc), self.n_classes))
        top = special.softmax(z, axis=1).max(axis=1)
        return float(top.mean()), float(top.std(ddof=1) / math.sqrt(len(top)))

    def true_ece(self, n_mc: int = 400_000, rng=0) -> tuple[float, float]:
        """Population top-label ECE of the reported probabilities, ``(value, standard error)``.

        ``|E[max softmax(beta z) - max softmax(z)]|``: one-signed integrand (module docstring),
        so no binning enters. K = 2 is exact by quadrature (error 0); otherwise Monte Carlo
        with ``n_mc`` draws of ``z`` from ``rng``.
        """
        if self.n_classes == 2:
            return abs(self._gap_binary()), 0.0
        z = as_generator(rng).normal(0.0, self.scale, size=(positive_int("n_mc", n_mc), self.n_classes))
        d = special.softmax(self.beta * z, axis=1).max(axis=1) - special.softmax(z, axis=1).max(axis=1)
        return float(abs(d.mean())), float(d.std(ddof=1) / math.sqrt(len(d)))


def estimator_study(model: BetaModel, estimators: Mapping[str, Callable], sizes: Sequence[int],
                    reps: int, rng=0, n_bins: Sequence[int] | None = None) -> pd.DataFrame:
    """Run calibration estimators on repeated samples of ``model`` (long-form DataFrame).

    For each sample size ``n`` of ``sizes`` and each of ``reps`` repetitions, one sample
    ``model.sample_probs(n)`` is drawn and every estimator ``f(probs, labels)`` is applied
    to it (all estimators see the same samples). With ``n_bins`` given, each estimator is
    called as ``f(probs, labels, n_bins=b)`` for every ``b`` and the rows get a column
    ``n_bins``. Columns: ``n``, ``rep``, [``n_bins``], ``estimator``, ``estimate``.
    """
    if not estimators:
        raise ValueError("estimators must be a non-empty mapping name -> callable(probs, labels)")
    sizes = [positive_int("n", n) for n in sizes]
    if not sizes:
        raise ValueError("sizes must be a non-empty sequence of positive integers")
    reps = positive_int("reps", reps)
    g = as_generator(rng)
    rows = []
    for n in sizes:
        for r in range(reps):
            probs, labels = model.sample_probs(n, g)
            for name, f in estimators.items():
                if n_bins is None:
                    rows.append((n, r, name, float(f(probs, labels))))
                else:
                    rows.extend((n, r, int(b), name, float(f(probs, labels, n_bins=b))) for b in n_bins)
    cols = ["n", "rep", "estimator", "estimate"] if n_bins is None else \
        ["n", "rep", "n_bins", "estimator", "estimate"]
    return pd.DataFrame(rows, columns=cols)
