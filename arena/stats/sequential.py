"""Sequential tests on the mean of bounded samples: the GSPRT fishtest uses (``gsprt_llr``),
and the test by betting that `arena duel` uses (``SequentialTest``, its docstring).

The samples are i.i.d. draws of a bounded variable X in [lo, hi] whose distribution is
unknown; the hypotheses are about its mean only: H0: E[X] = mu0 against H1: E[X] = mu1
(mu0 < mu1). Wald's SPRT needs a likelihood under each hypothesis; with the distribution
unknown, the generalized test plugs in, for each hypothesis, the distribution of largest
likelihood among those with that mean and with support on the values seen (the empirical
likelihood of Owen 1988; the "expectation" statistic fishtest uses for its pentanomial
game pairs). For observed values a_i with counts n_i (N in all), the distribution with
mean mu that maximises the likelihood is

    p_i(mu) = (n_i / N) / (1 + lam * (a_i - mu)),   with lam solving
    sum_i n_i (a_i - mu) / (1 + lam * (a_i - mu)) = 0,

and the log-likelihood ratio is LLR = sum_i n_i * log(p_i(mu1) / p_i(mu0)). The test
accepts H1 when LLR >= log(1 / alpha), H0 when LLR <= log(beta), and goes on otherwise:
Wald's strict bounds (his inequalities alpha' <= (1 - beta') / A and beta' <= B (1 - alpha')
bound an exact SPRT's error rates by alpha and beta with A = 1/alpha and B = beta, whatever
the overshoot; the usual (1 - beta) / alpha and beta / (1 - alpha) only approximately). For large N it equals the normal approximation
N (mu1 - mu0) (2 mean - mu0 - mu1) / (2 var) (``normal_llr``).

A mean outside the range of the values seen would have likelihood zero (an infinite LLR
after a handful of samples), so both ends of the range [lo, hi] are always in the
support, with a tiny count ``PRIOR`` where they were not seen: the regularisation
fishtest applies to its empty pentanomial bins.

The GSPRT's error rates hold only approximately (its plug-in is asymptotic), and the
regularised ends of the range make it slow when the truth is far from both hypotheses
(the least favourable distributions put mass on the unseen extremes); `arena duel` uses
the test by betting instead, whose error bounds are exact. docs/duel.md says what each
assumes and benchmarks/duel_errors.py measures the error rates.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

PRIOR = 1e-3  # count given to an end of the range that was not observed
Z95 = 1.959963984540054


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's strict (lower, upper) LLR bounds, (log beta, log 1/alpha): accept H0 at or
    below lower, H1 at or above upper (see the module)."""
    check_error_rates(alpha, beta)
    return math.log(beta), -math.log(alpha)


def check_error_rates(alpha: float, beta: float) -> None:
    """Raise ValueError (one line) unless 0 < alpha < 0.5 and 0 < beta < 0.5."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 < value < 0.5):
            shown = f"{value:g}" if isinstance(value, (int, float)) else repr(value)
            raise ValueError(f"{name} {shown} is outside (0, 0.5); give an error rate such as 0.05")


def _root(values: list[float], counts: list[float], mu: float) -> float:
    """lam of the constrained maximum (the module's formula), by safeguarded Newton steps.

    f(lam) = sum n_i d_i / (1 + lam d_i), d_i = a_i - mu, decreases on the interval where
    every 1 + lam d_i > 0; mu strictly inside (min a, max a) puts its root there."""
    d = [a - mu for a in values]
    dmax, dmin = max(d), min(d)
    lo, hi = -1.0 / dmax, -1.0 / dmin  # the open interval of admissible lam
    width = hi - lo
    lo, hi = lo + 1e-12 * width, hi - 1e-12 * width
    lam = 0.0
    for _ in range(200):
        f = fp = 0.0
        for di, ni in zip(d, counts):
            q = 1.0 / (1.0 + lam * di)
            f += ni * di * q
            fp -= ni * di * di * q * q
        if f > 0:
            lo = lam
        else:
            hi = lam
        if abs(f) <= 1e-13 * sum(counts) or hi - lo <= 1e-15 * max(1.0, abs(lam)):
            return lam
        step = lam - f / fp if fp < 0 else math.nan
        lam = step if lo < step < hi else (lo + hi) / 2
    return lam


def constrained_mle(values: list[float], counts: list[float], mu: float) -> list[float]:
    """The probabilities p_i(mu) of the module's formula (they sum to 1 and have mean mu).

    ``values`` must hold points on both sides of ``mu`` (ValueError otherwise)."""
    if not min(values) < mu < max(values):
        raise ValueError(f"mean {mu} is not strictly inside the support [{min(values)}, {max(values)}]")
    total = float(sum(counts))
    lam = _root(values, counts, mu)
    return [n / total / (1.0 + lam * (a - mu)) for a, n in zip(values, counts)]


def regularised(counts: dict[float, float], lo: float, hi: float) -> tuple[list[float], list[float]]:
    """(values, counts) in value order, with both ends of [lo, hi] present (``PRIOR`` if unseen)."""
    merged = dict(counts)
    for end in (lo, hi):
        if merged.get(end, 0) <= 0:
            merged[end] = PRIOR
    values = sorted(merged)
    return values, [float(merged[v]) for v in values]


def gsprt_llr(counts: dict[float, float], mu0: float, mu1: float, lo: float, hi: float) -> float:
    """The generalized LLR of H1: mean mu1 against H0: mean mu0 for samples given as
    {value: count}, each value in [lo, hi]; 0.0 without samples."""
    if not lo < mu0 < hi or not lo < mu1 < hi:
        raise ValueError(f"the hypotheses' means {mu0}, {mu1} must lie strictly inside ({lo}, {hi})")
    if sum(counts.values()) <= 0:
        return 0.0
    values, n = regularised(counts, lo, hi)
    p0 = constrained_mle(values, n, mu0)
    p1 = constrained_mle(values, n, mu1)
    return sum(ni * (math.log(b) - math.log(a)) for ni, a, b in zip(n, p0, p1))


def normal_llr(n: int, mean: float, var: float, mu0: float, mu1: float) -> float:
    """The normal approximation of the GSPRT's LLR: n (mu1 - mu0)(2 mean - mu0 - mu1) / (2 var)."""
    if n <= 0:
        return 0.0
    if var <= 0:
        return math.copysign(math.inf, 2 * mean - mu0 - mu1) if 2 * mean != mu0 + mu1 else 0.0
    return n * (mu1 - mu0) * (2 * mean - mu0 - mu1) / (2 * var)


def mean_interval(n: int, mean: float, var: float, z: float = Z95) -> tuple[float, float]:
    """The normal-approximation interval mean ± z * sqrt(var / n) (var: the sample variance)."""
    if n <= 1:
        return -math.inf, math.inf
    half = z * math.sqrt(var / n)
    return mean - half, mean + half


def logistic_score(elo: float) -> float:
    """The expected score of a side ``elo`` logistic Elo points stronger: 1 / (1 + 10^(-elo/400))."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def logistic_elo(score: float) -> float:
    """The inverse of ``logistic_score`` (±inf at scores 1 and 0)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


BET_CAP = 0.8  # a bet risks at most this fraction of the wealth on one sample


@dataclass
class Status:
    """Where a sequential test stands after ``n`` samples.

    ``llr`` is the signed evidence shown to people: log K1 (the evidence for H1, see
    ``SequentialTest``) or -log K0 (for H0), the one that decided, else the one nearer its
    bound as a share of that bound; the test accepts H1 when log K1 reaches ``upper`` =
    log(1/alpha) and H0 when -log K0 reaches ``lower`` = log(beta). Both wealths can grow at
    once (a mean between the hypotheses), so with alpha != beta the larger is not always the
    one nearer its bound."""

    n: int
    mean: float
    var: float  # sample variance (n - 1 in the denominator); 0 below 2 samples
    llr: float
    lower: float
    upper: float
    decision: str | None  # "H0", "H1" or None (go on)
    log_h1: float = 0.0  # log K1
    log_h0: float = 0.0  # log K0
    ahead: int = 0  # samples above 0 (a duel: deals NEW won), as fastchess counts wins
    behind: int = 0  # samples below 0
    counts: tuple[tuple[float, int], ...] = ()  # (sample, how often), by sample: fastchess's pentanomial head to head

    @property
    def interval(self) -> tuple[float, float]:
        return mean_interval(self.n, self.mean, self.var)

    @property
    def los(self) -> float | None:
        """The likelihood of superiority, P(mean > 0), from the normal approximation of the
        mean (as fastchess reports it; for reading, not part of the test); None below 2 samples."""
        if self.n < 2:
            return None
        if self.var <= 0:
            return 1.0 if self.mean > 0 else 0.0 if self.mean < 0 else 0.5
        return 0.5 * math.erfc(-self.mean / math.sqrt(2 * self.var / self.n))


@dataclass
class SequentialTest:
    """A sequential test of H0: mean <= mu0 against H1: mean >= mu1 for i.i.d. samples in
    [lo, hi], with error rates at most alpha and beta for every such distribution, at
    every sample size (not asymptotically): a test by betting (Shafer; Waudby-Smith and
    Ramdas 2023), the anytime-valid counterpart of the GSPRT above.

    Two wealths start at 1. K1 bets against H0: K1 *= 1 + lam (x - mu0), K0 bets against
    H1: K0 *= 1 + gam (mu1 - x), with bets chosen before each sample from the earlier
    ones. Under H0 each factor has expectation <= 1, so K1 is a nonnegative
    supermartingale and, by Ville's inequality, reaches 1/alpha with probability at most
    alpha; likewise K0 reaches 1/beta under H1 with probability at most beta. The test
    accepts H1 when K1 >= 1/alpha, H0 when K0 >= 1/beta. log K1 and log K0 are the
    log-likelihood ratios of the bets' implied alternatives against the hypotheses.

    The bets are the growth-optimal ones for a normal approximation (Kelly): lam =
    a / (v + a^2) with a = max(mean, mu1) - mu0 and v the variance, both estimated from
    the earlier samples (v starts from a prior of ((hi - lo) / 4)^2 worth one sample),
    capped at ``BET_CAP`` / (mu0 - lo) so no sample can cost more than that fraction of
    the wealth; gam mirrors it with b = mu1 - min(mean, mu0). Near the hypotheses they
    bet as an SPRT of mu1 against mu0 would; far from them, on the estimated mean, so a
    clear difference is decided in a few samples. ``add`` returns the status after a
    sample; the first status with a decision is final (``decided``)."""

    mu0: float
    mu1: float
    alpha: float
    beta: float
    lo: float
    hi: float
    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    log_h1: float = 0.0
    log_h0: float = 0.0
    ahead: int = 0
    behind: int = 0
    counts: dict[float, int] = field(default_factory=dict)
    decided: Status | None = None

    def __post_init__(self) -> None:
        if not self.mu0 < self.mu1:
            raise ValueError(f"H0's mean {self.mu0} must be below H1's {self.mu1}")
        if not (self.lo < self.mu0 and self.mu1 < self.hi):
            raise ValueError(f"the means must lie strictly inside ({self.lo}, {self.hi})")
        self.lower, self.upper = sprt_bounds(self.alpha, self.beta)

    def bets(self) -> tuple[float, float]:
        """(lam, gam) for the next sample, from the samples so far."""
        n = self.n
        prior = ((self.hi - self.lo) / 4) ** 2
        mean = self.total / n if n else self.mu1
        spread = max(0.0, self.total_sq - n * mean * mean) if n else 0.0
        var = (prior + spread) / (1 + n)
        a = max(mean, self.mu1) - self.mu0
        b = self.mu1 - min(mean, self.mu0)
        lam = min(a / (var + a * a), BET_CAP / (self.mu0 - self.lo))
        gam = min(b / (var + b * b), BET_CAP / (self.hi - self.mu1))
        return lam, gam

    def add(self, x: float) -> Status:
        if self.decided is not None:
            raise ValueError("the test has already decided")
        if not self.lo <= x <= self.hi:
            raise ValueError(f"sample {x} outside [{self.lo}, {self.hi}]")
        lam, gam = self.bets()
        self.log_h1 += math.log1p(lam * (x - self.mu0))
        self.log_h0 += math.log1p(gam * (self.mu1 - x))
        self.n += 1
        self.total += x
        self.total_sq += x * x
        self.ahead += x > 0
        self.behind += x < 0
        self.counts[x] = self.counts.get(x, 0) + 1
        status = self.status()
        if status.decision is not None:
            self.decided = status
        return status

    def extend(self, xs: Iterable[float]) -> Status:
        """Add samples until the test decides (the rest are not used); the last status."""
        status = self.status()
        for x in xs:
            status = self.add(x)
            if status.decision is not None:
                break
        return status

    def status(self) -> Status:
        if self.decided is not None:
            return self.decided
        n = self.n
        mean = self.total / n if n else 0.0
        var = max(0.0, (self.total_sq - n * mean * mean) / (n - 1)) if n > 1 else 0.0
        decision = "H1" if self.log_h1 >= self.upper else "H0" if -self.log_h0 <= self.lower else None
        # the evidence that decided, else the one nearer its bound as a share of it (the larger
        # at alpha = beta): with other bounds the larger may be the one that did not decide
        if decision is not None:
            h1 = decision == "H1"
        else:
            h1 = self.log_h1 / self.upper >= self.log_h0 / -self.lower
        llr = self.log_h1 if h1 else -self.log_h0
        return Status(
            n,
            mean,
            var,
            llr,
            self.lower,
            self.upper,
            decision,
            self.log_h1,
            self.log_h0,
            self.ahead,
            self.behind,
            tuple(sorted(self.counts.items())),
        )
