"""TrueSkill for ranked free-for-all matches (one player per team), without the object graph.

The ``trueskill`` package builds a factor graph of Python objects for every match and
passes Gaussian objects between them; that costs about 1 ms per match. This module runs
the very same message schedule (``TrueSkill.run_schedule``: prior, likelihood and sum
factors down, the iterated chain of team differences with their truncation factors, then
back up) on plain floats (one list per quantity, no objects), specialised to teams of
one player with weight 1. Every operation is the package's, in the package's order, with
the package's cdf/pdf/ppf, so the ratings agree with ``env.rate(groups, ranks=places)``
to rounding (tests/report/test_fast_trueskill.py checks 1e-9 on thousands of random
results and on a 3,000-match chain).

A Gaussian is a (pi, tau) pair: precision and precision-adjusted mean. A variable's
value is the product of its incoming messages; replacing one message divides the old
one out and multiplies the new one in, and the truncation step returns the package's
``Variable.delta`` that ends the loop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from trueskill.backends import ppf

INF = float("inf")
_SQRT2 = math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_exp = math.exp


def cdf(x: float) -> float:
    """trueskill.backends.cdf(x) with mu=0, sigma=1, its erfc inlined (same operations)."""
    y = -x / _SQRT2
    z = abs(y)
    t = 1.0 / (1.0 + z / 2.0)
    r = t * _exp(
        -z * z
        - 1.26551223
        + t
        * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))
                    )
                )
            )
        )
    )
    return 0.5 * (2.0 - r if y < 0 else r)


def pdf(x: float) -> float:
    """trueskill.backends.pdf(x) with mu=0, sigma=1."""
    return _INV_SQRT_2PI * 1 * _exp(-(x**2 / 2))


MIN_DELTA = 0.0001  # trueskill.DELTA
MAX_LOOPS = 10  # run_schedule's fixed bound


def _mu(pi: float, tau: float) -> float:
    return pi and tau / pi


def _fp_error() -> FloatingPointError:
    return FloatingPointError("cannot calculate correctly; an extreme upset needs the mpmath backend")


class FastTrueSkill:
    """``rate(ratings, ranks)`` for one-player teams: [(mu, sigma)] -> [(mu, sigma)]."""

    def __init__(self, mu: float, sigma: float, beta: float, tau: float, draw_probability: float) -> None:
        self.mu, self.sigma, self.beta, self.tau = mu, sigma, beta, tau
        self.beta2 = beta**2
        self.tau2 = tau**2
        # calc_draw_margin(p, size=2): two one-player teams per difference.
        self.draw_margin = ppf((draw_probability + 1) / 2.0) * math.sqrt(2) * beta

    # --- the schedule -----------------------------------------------------------------

    def rate(self, ratings: Sequence[tuple[float, float]], ranks: Sequence[int]) -> list[tuple[float, float]]:
        """New (mu, sigma) per seat; ``ranks`` 0 = best, equal ranks tie.

        Raises ValueError for fewer than two seats and FloatingPointError where the
        package would (an upset too extreme for float maths)."""
        n = len(ratings)
        if n < 2 or len(ranks) != n:
            raise ValueError("need at least two ratings and one rank per rating")
        order = sorted(range(n), key=lambda i: ranks[i])  # stable, as the package's sort
        beta2 = self.beta2
        margin = self.draw_margin

        # Variables as [pi, tau] lists; messages keyed by the factor that sent them.
        rating = []
        prior_msg = []
        for i in order:
            mu, sigma = ratings[i]
            # A trueskill.Rating keeps (pi, tau) and gives mu, sigma back from them.
            pi = sigma**-2
            tau = pi * mu
            mu, sigma = _mu(pi, tau), math.sqrt(1 / pi)
            s = math.sqrt(sigma**2 + self.tau2)
            pi = s**-2
            tau = pi * mu
            rating.append([pi, tau])  # update_value on an empty variable
            prior_msg.append((pi, tau))
        like_to_rating = [(0.0, 0.0)] * n
        perf = []
        like_to_perf = []
        for k in range(n):  # LikelihoodFactor.down
            pi, tau = rating[k]
            a = 1.0 / (1.0 + beta2 * pi)
            m = (a * pi, a * tau)
            like_to_perf.append(m)
            perf.append([m[0], m[1]])
        sum_to_perf = [(0.0, 0.0)] * n
        team = []
        sum_to_team = []
        for k in range(n):  # SumFactor(team_k, [perf_k], [1]).down
            pi, tau = perf[k]
            mu = 1 * _mu(pi, tau)
            pi_inv = 1**2 / float(pi) if pi else INF
            tpi = 1.0 / pi_inv
            m = (tpi, tpi * mu)
            sum_to_team.append(m)
            team.append([m[0], m[1]])

        d = n - 1
        # team k's value; messages of diff factor j to team j (L) and team j + 1 (R);
        # diff variable j's value, and its messages from the sum (S) and truncation (T).
        tp = [t[0] for t in team]
        tt = [t[1] for t in team]
        lp = [0.0] * d
        lt = [0.0] * d
        rp = [0.0] * d
        rt = [0.0] * d
        dp = [0.0] * d
        dt = [0.0] * d
        sp = [0.0] * d
        st = [0.0] * d
        trp = [0.0] * d
        trt = [0.0] * d
        draw = [ranks[order[j]] == ranks[order[j + 1]] for j in range(d)]
        sqrt = math.sqrt

        def diff_down(j: int) -> None:
            # SumFactor(diff_j, [team_j, team_j+1], [+1, -1]).down()
            apu, atu = tp[j] - lp[j], tt[j] - lt[j]
            bpu, btu = tp[j + 1] - rp[j], tt[j + 1] - rt[j]
            mu = 0.0 + ((atu / apu) if apu else 0.0)
            mu += -((btu / bpu) if bpu else 0.0)
            pi_inv = (1 / apu) if apu else INF
            if pi_inv != INF:
                pi_inv = pi_inv + 1 / bpu if bpu else INF
            pi = 1.0 / pi_inv
            tau = pi * mu
            dp[j] = dp[j] - sp[j] + pi
            dt[j] = dt[j] - st[j] + tau
            sp[j], st[j] = pi, tau

        def diff_up(j: int, index: int) -> None:
            if index == 0:  # team j from (diff_j, team_j+1), coefficients (1, 1)
                apu, atu = dp[j] - sp[j], dt[j] - st[j]
                bpu, btu = tp[j + 1] - rp[j], tt[j + 1] - rt[j]
                k = j
            else:  # team j+1 from (team_j, diff_j), coefficients (1, -1)
                apu, atu = tp[j] - lp[j], tt[j] - lt[j]
                bpu, btu = dp[j] - sp[j], dt[j] - st[j]
                k = j + 1
            mu = 0.0 + 1.0 * ((atu / apu) if apu else 0.0)
            second = (btu / bpu) if bpu else 0.0
            mu += 1.0 * second if index == 0 else -1.0 * second
            pi_inv = (1.0 / float(apu)) if apu else INF
            if pi_inv != INF:
                pi_inv = pi_inv + 1.0 / float(bpu) if bpu else INF
            pi = 1.0 / pi_inv
            tau = pi * mu
            if index == 0:
                tp[k] = tp[k] - lp[j] + pi
                tt[k] = tt[k] - lt[j] + tau
                lp[j], lt[j] = pi, tau
            else:
                tp[k] = tp[k] - rp[j] + pi
                tt[k] = tt[k] - rt[j] + tau
                rp[j], rt[j] = pi, tau

        def trunc_up(j: int) -> float:
            vpi, vtau = dp[j], dt[j]
            opi, otau = trp[j], trt[j]
            dpi, dtau = vpi - opi, vtau - otau
            sqrt_pi = sqrt(dpi)
            x, y = dtau / sqrt_pi, margin * sqrt_pi
            # The package's v and w functions of (diff x, draw margin y), inlined: v and w
            # of a draw share their cdf and pdf values, which the package computes twice.
            if draw[j]:
                abs_diff = abs(x)
                a, b = y - abs_diff, -y - abs_diff
                denom = cdf(a) - cdf(b)
                pdf_a, pdf_b = pdf(a), pdf(b)
                v = (((pdf_b - pdf_a) / denom) if denom else a) * (-1 if x < 0 else +1)  # v_draw
                if not denom:
                    raise _fp_error()
                w = (abs(v) ** 2) + (a * pdf_a - b * pdf_b) / denom  # w_draw
            else:
                x_m = x - y
                denom = cdf(x_m)
                v = (pdf(x_m) / denom) if denom else -x_m  # v_win
                w = v * (v + x_m)  # w_win
                if not 0 < w < 1:
                    raise _fp_error()
            denom = 1.0 - w
            pi, tau = dpi / denom, (dtau + sqrt_pi * v) / denom
            trp[j], trt[j] = pi + opi - vpi, tau + otau - vtau
            dp[j], dt[j] = pi, tau
            pi_delta = abs(vpi - pi)
            if pi_delta == INF:
                return 0.0
            tau_delta = abs(vtau - tau)
            pi_delta = sqrt(pi_delta)
            return tau_delta if tau_delta > pi_delta else pi_delta

        for _ in range(MAX_LOOPS):
            if d == 1:
                diff_down(0)
                delta = trunc_up(0)
            else:
                delta = 0.0
                for j in range(d - 1):
                    diff_down(j)
                    t = trunc_up(j)
                    if t > delta:
                        delta = t
                    diff_up(j, 1)
                for j in range(d - 1, 0, -1):
                    diff_down(j)
                    t = trunc_up(j)
                    if t > delta:
                        delta = t
                    diff_up(j, 0)
            if delta <= MIN_DELTA:
                break
        diff_up(0, 0)
        diff_up(d - 1, 1)
        team = [[tp[k], tt[k]] for k in range(n)]

        def send(var: list[float], old: tuple[float, float], pi: float, tau: float) -> None:
            # Variable.update_message: value / old message * new message.
            var[0] = var[0] - old[0] + pi
            var[1] = var[1] - old[1] + tau

        out: list[tuple[float, float]] = [(0.0, 0.0)] * n
        for k in range(n):
            # SumFactor(team_k, [perf_k]).up(0), then LikelihoodFactor.up.
            tpi, ttau = team[k]
            mpi, mtau = sum_to_team[k]
            dpi, dtau = tpi - mpi, ttau - mtau
            mu = 1.0 * _mu(dpi, dtau)
            pi_inv = 1.0**2 / float(dpi) if dpi else INF
            ppi = 1.0 / pi_inv
            send(perf[k], sum_to_perf[k], ppi, ppi * mu)
            lpi, ltau = like_to_perf[k]
            qpi, qtau = perf[k][0] - lpi, perf[k][1] - ltau
            a = 1.0 / (1.0 + beta2 * qpi)
            send(rating[k], like_to_rating[k], a * qpi, a * qtau)
            pi, tau = rating[k]
            out[order[k]] = (float(_mu(pi, tau)), float(math.sqrt(1 / pi) if pi else INF))
        return out
