"""The error rates of `arena duel`'s sequential test, measured on simulated duels.

    python benchmarks/duel_errors.py [--duels 500] [--workers 2] [--calibration-deals 3000]
                                     [--only NAME] [--statistic betting|gsprt] [--json FILE]

Players of known strength play in process (no bot programs, no referee): a player of
strength q plays the game's reference policy (arena/luck/reference.py) at each decision with
probability q, else a uniformly random legal action; the field is uniformly random. Each
setting is a duel as `arena duel` plays it (arena.tournament.duel's ``layout``: the same
deal for NEW and OLD, in every seat, against the same field, or head to head in both seat
orders), sampled per deal by the duel's own ``deal_sample`` and tested by its own
``duel_test``, with the field's seeds paired between NEW's and OLD's matches as `arena duel`
pairs them (``--unpaired``: every match its own, as duels were played before):

* H0 true: NEW and OLD are players of the same strength (q_old), NEW drawing from seeds of
  its own (a different bot as strong, not a copy: a copy would play OLD's very games, every
  sample 0); the true mean difference is 0 = mu0 by symmetry, so every H1 accepted is a false
  positive (rate <= alpha?).
* H1 true: NEW has strength q_new; the true difference D is calibrated first on
  ``--calibration-deals`` deals of its own seeds, and the duel's margin is set to it, so
  mu1 = D (up to the calibration's error, printed): every H0 accepted is a false negative
  (rate <= beta?).

Each duel draws fresh deals (seeds from the setting, the duel's number and the deal's)
and goes on until the test decides or ``--max-deals``. Rates come with Wilson 95%
intervals. ``--statistic gsprt`` runs fishtest's GSPRT on the same duels (same seeds)
instead, for comparison. ``--pairing DUELS`` measures instead what pairing saves: the deals a
duel needs, paired and unpaired, on a small change of OLD. ``simulate`` is importable (tests/tournament/test_duel_errors.py runs a small one).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.luck.reference import REFERENCE, play_out, random_policy  # noqa: E402
from arena.stats.sequential import Status, gsprt_llr, sprt_bounds  # noqa: E402
from arena.tournament.duel import Hypotheses, deal_sample, duel_test, layout  # noqa: E402
from games import REGISTRY  # noqa: E402
from games.rng import DealRng, derive_seed  # noqa: E402


@dataclass(frozen=True)
class Setting:
    name: str
    game: str
    players: int
    head_to_head: bool
    q_new: float  # strength of NEW in the H1-true duels
    q_old: float  # strength of OLD (and of NEW in the H0-true duels)


SETTINGS = [
    Setting("tightwad-4p-field", "tightwad", 4, False, 1.0, 0.0),
    Setting("divers-2p-h2h", "divers-weights", 2, True, 1.0, 0.0),
]
# a small change of OLD (the reference policy at 60% of its decisions instead of 50%): where
# pairing the field's seeds with NEW's and OLD's matters most (``--pairing``)
TWEAK = Setting("tightwad-4p-tweak", "tightwad", 4, False, 0.6, 0.5)


def mixed(q: float, game: str) -> Any:
    """The player of strength q: the reference policy with probability q per decision."""
    ref = REFERENCE[game]
    cut = round(q * 1_000_000)

    def policy(state: Any, seat: int, rng: DealRng) -> int:
        if rng.randbelow(1_000_000) < cut:
            return ref(state, seat, rng)
        return random_policy(state, seat, rng)

    return policy


def play_deal(
    s: Setting, q_new: float, q_old: float, seed: int, *, paired: bool = True, new_own: bool = False
) -> float:
    """One deal of a duel: its sample (mean place of OLD minus NEW over the rotations).

    Each seat draws from its own generator, as each bot draws from the seed its ``start`` gives
    it. ``paired`` (what `arena duel` does, arena.tournament.duel.seat_seeds): in one rotation
    NEW's and OLD's matches give every seat the same seed, so the field, and NEW against OLD,
    draw the same numbers; else every match has its own (how duels were played before).
    ``new_own``: NEW draws from seeds of its own all the same (a different bot of its strength,
    not a version of OLD that chooses alike where it can)."""
    spec = REGISTRY[s.game]
    roles = {"new": mixed(q_new, s.game), "old": mixed(q_old, s.game)}
    matches = []
    for group, r, seats in layout(s.players, s.head_to_head):
        policies = []
        for k, role in enumerate(seats):
            own = derive_seed(seed, "new", r, k) if new_own and role == "new" else None
            rng = DealRng(own or (derive_seed(seed, r, k) if paired else derive_seed(seed, group, r, k)))
            policies.append(_with_rng(roles.get(role, random_policy), rng))
        state = play_out(spec.new_game(s.players, seed, None), policies, DealRng(0))  # each seat uses its own
        matches.append((seats, tuple(state.result().places)))
    return deal_sample(matches)


def _with_rng(policy: Any, rng: DealRng) -> Any:
    return lambda state, seat, _shared: policy(state, seat, rng)


def calibrate(s: Setting, deals: int) -> tuple[float, float]:
    """(mean, standard error) of the deal sample of q_new against q_old, on seeds no duel uses."""
    xs = [play_deal(s, s.q_new, s.q_old, derive_seed("calibrate", s.name, d)) for d in range(deals)]
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
    return mean, math.sqrt(var / len(xs))


class Gsprt:
    """For comparison: fishtest's GSPRT (arena.stats.sequential.gsprt_llr, Wald's strict bounds)
    with the duel's interface."""

    def __init__(self, mu0: float, mu1: float, alpha: float, beta: float, span: float) -> None:
        self.mu0, self.mu1, self.span = mu0, mu1, span
        self.lower, self.upper = sprt_bounds(alpha, beta)
        self.counts: dict[float, float] = {}
        self.n = 0

    def status(self) -> Status:
        llr = gsprt_llr(self.counts, self.mu0, self.mu1, -self.span, self.span)
        decision = "H1" if llr >= self.upper else "H0" if llr <= self.lower else None
        return Status(self.n, 0.0, 0.0, llr, self.lower, self.upper, decision)

    def add(self, x: float) -> Status:
        self.counts[x] = self.counts.get(x, 0) + 1
        self.n += 1
        return self.status()


def one_duel(job: tuple[Setting, str, int, float, float, float, int, str, bool]) -> tuple[str | None, int]:
    """(decision, deals) of one simulated duel."""
    s, truth, k, margin, alpha, beta, max_deals, statistic, paired = job
    q_new = s.q_new if truth == "H1" else s.q_old
    test: Any = (
        duel_test(s.players, Hypotheses(0.0, margin), alpha, beta)
        if statistic == "betting"
        else Gsprt(0.0, margin, alpha, beta, float(s.players - 1))
    )
    status = test.status()
    for d in range(max_deals):
        x = play_deal(s, q_new, s.q_old, derive_seed("duel", s.name, truth, k, d), paired=paired, new_own=truth == "H0")
        status = test.add(x)
        if status.decision is not None:
            break
    return status.decision, status.n


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def simulate(
    s: Setting,
    duels: int,
    margin: float,
    *,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_deals: int = 2000,
    workers: int = 1,
    statistic: str = "betting",
    paired: bool = True,
    truths: tuple[str, ...] = ("H0", "H1"),
) -> dict[str, Any]:
    """Run ``duels`` H0-true and ``duels`` H1-true duels of setting ``s`` at ``margin``."""
    out: dict[str, Any] = {}
    for truth in truths:
        jobs = [(s, truth, k, margin, alpha, beta, max_deals, statistic, paired) for k in range(duels)]
        if workers > 1:
            with mp.get_context("fork").Pool(workers) as pool:
                runs = pool.map(one_duel, jobs, chunksize=4)
        else:
            runs = [one_duel(j) for j in jobs]
        wrong = "H1" if truth == "H0" else "H0"
        errors = sum(1 for d, _ in runs if d == wrong)
        capped = sum(1 for d, _ in runs if d is None)
        lo, hi = wilson(errors, duels)
        deals = [n for _, n in runs]
        out[truth] = {
            "duels": duels,
            "errors": errors,
            "rate": errors / duels,
            "interval95": [lo, hi],
            "capped": capped,
            "mean_deals": sum(deals) / duels,
            "max_deals": max(deals),
            "matches_per_deal": 2 if s.head_to_head else 2 * s.players,
            "bound": alpha if truth == "H0" else beta,
            "deals": deals,
        }
    return out


def pairing_saving(duels: int, workers: int, calibration_deals: int, max_deals: int) -> dict[str, Any]:
    """Deals a duel needs with the field's seeds paired (arena duel) and unpaired (as before), on
    ``TWEAK``: a version of OLD that decides like it more often, H1 true at its calibrated
    difference; the saving is the ratio of the mean deals, with a bootstrap 95% interval."""
    import random

    margin, se = calibrate(TWEAK, calibration_deals)
    runs = {
        way: simulate(
            TWEAK, duels, margin, workers=workers, paired=way == "paired", truths=("H1",), max_deals=max_deals
        )["H1"]
        for way in ("paired", "unpaired")
    }
    a, b = runs["unpaired"]["deals"], runs["paired"]["deals"]
    rng = random.Random(7)
    ratios = sorted(
        sum(rng.choices(a, k=len(a))) / len(a) / (sum(rng.choices(b, k=len(b))) / len(b)) for _ in range(2000)
    )
    return {
        "margin": margin,
        "margin_se": se,
        **runs,
        "saving": (sum(a) / len(a)) / (sum(b) / len(b)),
        "saving_interval95": [ratios[49], ratios[1949]],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duels", type=int, default=500, help="duels per setting and truth")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--calibration-deals", type=int, default=3000)
    ap.add_argument("--only", default=None, help="one setting by name")
    ap.add_argument("--max-deals", type=int, default=2000, help="a duel's cap, in deals")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument(
        "--statistic",
        choices=["betting", "gsprt"],
        default="betting",
        help="the duel's test (betting), or fishtest's GSPRT on the same duels for comparison",
    )
    ap.add_argument(
        "--pairing",
        type=int,
        default=0,
        metavar="DUELS",
        help="instead: deals a duel needs with the field's seeds paired and unpaired (DUELS each, H1 true)",
    )
    ap.add_argument("--unpaired", action="store_true", help="every match its own seeds (duels before pairing)")
    args = ap.parse_args()
    if args.pairing:
        t0 = time.perf_counter()
        res = pairing_saving(args.pairing, args.workers, args.calibration_deals, args.max_deals)
        print(
            f"{TWEAK.name}: q_new {TWEAK.q_new} vs q_old {TWEAK.q_old}: true difference {res['margin']:.4f} "
            f"± {1.96 * res['margin_se']:.4f} (95%, {args.calibration_deals} deals); margin set to it",
            flush=True,
        )
        for way in ("paired", "unpaired"):
            r = res[way]
            print(
                f"  {way}: {r['mean_deals']:.1f} deals a duel (most {r['max_deals']}); false negatives "
                f"{r['errors']}/{r['duels']}; capped {r['capped']}",
                flush=True,
            )
        lo, hi = res["saving_interval95"]
        print(
            f"  pairing saves {res['saving']:.2f}x the deals [{lo:.2f}, {hi:.2f}] (bootstrap 95%); "
            f"{time.perf_counter() - t0:.0f} s",
            flush=True,
        )
        if args.json:
            Path(args.json).write_text(json.dumps({k: v for k, v in res.items()}, indent=1, default=str) + "\n")
        return
    report = {}
    for s in SETTINGS:
        if args.only and s.name != args.only:
            continue
        t0 = time.perf_counter()
        margin, se = calibrate(s, args.calibration_deals)
        print(
            f"{s.name}: q_new {s.q_new} vs q_old {s.q_old}: true difference {margin:.4f} ± {1.96 * se:.4f} "
            f"(95%, {args.calibration_deals} deals); margin set to it",
            flush=True,
        )
        res = simulate(
            s,
            args.duels,
            margin,
            workers=args.workers,
            statistic=args.statistic,
            max_deals=args.max_deals,
            paired=not args.unpaired,
        )
        for truth, r in res.items():
            what = (
                "false positives (H1 accepted, NEW = OLD)"
                if truth == "H0"
                else "false negatives (H0 accepted, NEW better by the margin)"
            )
            print(
                f"  {truth} true: {r['errors']}/{r['duels']} {what} = {r['rate']:.1%} "
                f"[{r['interval95'][0]:.1%}, {r['interval95'][1]:.1%}] (bound {r['bound']:.0%}); "
                f"capped {r['capped']}; {r['mean_deals']:.1f} deals = "
                f"{r['mean_deals'] * r['matches_per_deal']:.0f} matches a duel on average "
                f"(most {r['max_deals']} deals)",
                flush=True,
            )
        report[s.name] = {"margin": margin, "margin_se": se, "seconds": time.perf_counter() - t0, **res}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
