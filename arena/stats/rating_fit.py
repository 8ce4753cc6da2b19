"""Additive ratings fitted to paired share differences, with the covariance of the fit.

Each deal set of ``m`` bots gives its members' shares; centred on the group's mean they are
the ratings centred the same way plus noise, and the noise of a deal set is taken as
exchangeable: covariance ``sigma2 * (I - J/m)`` (the shares of a deal set sum to a constant).
Ordinary least squares is then the best linear unbiased fit, and it is Massey's method on the
deal set's pair differences weighted ``1/m`` (for m members, the sum of squared pair
differences is m times the sum of squared centred values). So the fit needs only, per pair,
the weighted count, sum and sum of squares of its differences. The covariance of the fitted
ratings is ``sigma2 * L^+`` (L the weighted Laplacian of the pairs), and ``sigma2`` is the
residual sum of squares over its degrees of freedom (``m - 1`` per deal set, less ``n - 1``
for the ratings). A pair's difference is thus estimated from every deal set, through the
third bots both have met and their opponents in turn, not from its own meetings alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

RIDGE = 1e-4  # keeps the system invertible while the pairs are not yet connected: bots in
# different components get a huge variance for their difference (undecided), not an error


def invert_spd(a: Sequence[Sequence[float]]) -> list[list[float]]:
    """The inverse of a symmetric positive definite matrix (Cholesky; n is small: the bots)."""
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                low[i][i] = math.sqrt(max(s, 1e-300))
            else:
                low[i][j] = s / low[j][j]
    # inverse of the lower factor, then inv(A) = inv(L)^T inv(L)
    inv = [[0.0] * n for _ in range(n)]
    for i in range(n):
        inv[i][i] = 1.0 / low[i][i]
        for j in range(i):
            inv[i][j] = -sum(low[i][k] * inv[k][j] for k in range(j, i)) / low[i][i]
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = sum(inv[k][i] * inv[k][j] for k in range(i, n))
            out[i][j] = out[j][i] = s
    return out


class Fit:
    """The fitted ratings (mean 0 over each connected part) and their covariance."""

    def __init__(
        self,
        n: int,
        pairs: Mapping[tuple[int, int], tuple[float, float, float]],
        dof: float,
        prior_var: float,
        prior_dof: float,
    ) -> None:
        """``pairs``: (i, j) -> (weight, weighted sum, weighted sum of squares) of i's share
        minus j's; ``dof``: the data's degrees of freedom (m - 1 per deal set); the residual
        variance is shrunk towards ``prior_var`` by ``prior_dof`` pseudo degrees of freedom."""
        self.n = n
        lap = [[RIDGE if i == j else 0.0 for j in range(n)] for i in range(n)]
        rhs = [0.0] * n
        for (i, j), (w, s, _) in pairs.items():
            lap[i][i] += w
            lap[j][j] += w
            lap[i][j] -= w
            lap[j][i] -= w
            rhs[i] += s
            rhs[j] -= s
        for i in range(n):  # + J/n: fixes the mean at 0 without changing any difference
            for j in range(n):
                lap[i][j] += 1.0 / n
        self.cov = invert_spd(lap)
        self.rating = [sum(self.cov[i][j] * rhs[j] for j in range(n)) for i in range(n)]
        rss = 0.0
        for (i, j), (w, s, sq) in pairs.items():
            d = self.rating[i] - self.rating[j]
            rss += sq - 2 * d * s + w * d * d
        free = max(0.0, dof - (n - 1))
        self.var = (max(0.0, rss) + prior_var * prior_dof) / (free + prior_dof)

    def se(self, i: int, j: int) -> float:
        """The standard error of rating(i) - rating(j)."""
        c = self.cov
        return math.sqrt(max(0.0, self.var * (c[i][i] + c[j][j] - 2 * c[i][j])))
