"""OpenSpiel's own ISMCTS (open_spiel.python.algorithms.ismcts, written by DeepMind) as an arena bot.

A bot folder (entry ``main.py``, packages in ``requirements.txt``). It plays every game through
the OpenSpiel bridge: ``decktet_openspiel.py`` beside this file is a verbatim copy of
``arena/openspiel/__init__.py`` (a test keeps them equal), as the sandbox gives a bot the
``games`` engines and botkit but not the arena package. At each decision the bot digests the
observations it has had (its information state), draws a world that fits the observation
(``state_from_observation``: games.determinize, in Palace following the public history it has
seen) and runs ISMCTSBot's simulations on it; each simulation resamples a world
(``resample_from_infostate``) and rolls it out at random to the end of the game.

Budget, from the time control the start message announces (``move_s``):

* it thinks for ``CPU_SHARE`` of ``move_s`` in CPU seconds (0.5 s at the default 1 s), in
  OpenSpiel's own simulation loop, checked after every simulation;
* whatever the CPU says, it starts no simulation that, at the pace of the slowest one so far
  in this decision (or the last decision that ran one, halved for every decision since that
  ran none), would end after ``WALL_SHARE`` of ``move_s`` of
  wall-clock time (a busy machine), and a timer stops a simulation still running at
  ``HARD_SHARE`` of ``move_s`` (that simulation is dropped);
* with fewer than two simulations (the first only expands the root) it plays a uniformly random
  legal move, which is what ISMCTS plays after two.

The tournament name can set the budget instead: ``ismcts-0.2s`` thinks 0.2 s of CPU a decision,
``ismcts-200sims`` runs 200 simulations (the wall-clock stops still apply). With no time
control (or an unlimited one: ``--no-timeouts``) it thinks ``DEFAULT_BUDGET_S``. Forced moves
are played at once.
"""

import math
import re
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402
from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

import decktet_openspiel as bridge  # noqa: E402  (registers the three games)
from botkit import log, run  # noqa: E402
from games.palace_history import PalaceHistory  # noqa: E402

CPU_SHARE = 0.5         # of move_s: CPU seconds of search a decision
WALL_SHARE = 0.5        # of move_s: no simulation expected to end later starts
HARD_SHARE = 0.6        # of move_s: a simulation still running then is stopped
DEFAULT_BUDGET_S = 0.5  # CPU seconds with no time control, or an unlimited one
UNLIMITED_S = 24 * 3600.0
_NAME_BUDGET = re.compile(r"[-_](\d+(?:\.\d+)?)s$")
_NAME_SIMS = re.compile(r"[-_](\d+)sims$")


class OutOfTime(Exception):
    """The hard wall-clock stop, raised by the timer inside a simulation."""


class _Clock:
    in_simulation = False  # the timer raises only then; otherwise it ends the loop
    expired = False


def _alarm(signum, frame):
    _Clock.expired = True
    if _Clock.in_simulation:
        _Clock.in_simulation = False
        raise OutOfTime


def budget_of(match):
    """(CPU seconds, simulation cap or None, wall seconds or None) for each decision."""
    move_s = (match.time_control or {}).get("move_s")
    timed = bool(move_s) and move_s < UNLIMITED_S
    name = match.bots[match.seat] if match.seat < len(match.bots) else ""
    sims = _NAME_SIMS.search(name)
    named = _NAME_BUDGET.search(name)
    if sims:
        cpu, cap = math.inf, int(sims.group(1))
    else:
        cpu = float(named.group(1)) if named else (CPU_SHARE * move_s if timed else DEFAULT_BUDGET_S)
        cap = None
    return cpu, cap, (move_s if timed else None)


class BudgetISMCTS(ismcts.ISMCTSBot):
    """ISMCTSBot whose run_search loop stops on a budget instead of a fixed count (the loop
    of ISMCTSBot.run_search otherwise, the simulations its own run_simulation)."""

    def __init__(self, game, rs):
        super().__init__(game, mcts.RandomRolloutEvaluator(1, rs), uct_c=2.0, max_simulations=1,
                         random_state=rs)
        self.pace = 0.0           # wall seconds of the slowest simulation of the last decision
        self.sims = self.searches = self.stops = 0
        self.last_sims = 0

    def choose(self, state, cpu_s, cap, move_s, start=None):
        """An action for the seat to move in ``state``: ISMCTS within the budget, the wall
        clock counted from ``start`` (time.monotonic(); default now)."""
        cpu_start = time.process_time()
        start = time.monotonic() if start is None else start
        legal = state.legal_actions()
        self.reset()
        self._root_node = self.create_new_node(state)
        soft = start + WALL_SHARE * move_s if move_s else math.inf
        timer = move_s is not None and hasattr(signal, "setitimer")
        _Clock.expired = _Clock.in_simulation = False
        if timer:
            old = signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, max(1e-4, start + HARD_SHARE * move_s - time.monotonic()))
        n, slowest = 0, 0.0
        try:
            while n < (cap or math.inf):
                now = time.monotonic()
                if n >= 2 and time.process_time() - cpu_start >= cpu_s:
                    break
                if now + (slowest if n else self.pace) > soft or _Clock.expired:
                    break
                saved = self._root_state()
                try:
                    _Clock.in_simulation = True
                    if _Clock.expired:  # fired between the check above and here
                        raise OutOfTime
                    self.run_simulation(self.sample_root_state(state))
                    _Clock.in_simulation = False
                except OutOfTime:  # (also when the timer fired just as the simulation ended)
                    self._restore_root(saved)  # the unfinished simulation counts for nothing
                    self.stops += 1
                    slowest = max(slowest, time.monotonic() - now)
                    break
                n += 1
                slowest = max(slowest, time.monotonic() - now)
        finally:
            _Clock.in_simulation = False
            if timer:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
        # none started: forget half the old pace, so a slow phase (a long first rollout, a busy
        # spell) does not stop the search for the rest of the match
        self.pace = slowest if slowest else self.pace / 2
        self.sims += n
        self.searches += 1
        self.last_sims = n
        if self._root_node.total_visits <= 0:
            return int(legal[self._random_state.randint(len(legal))])
        actions, probs = zip(*self.get_final_policy(state, self._root_node))
        return int(self._random_state.choice(actions, p=probs))

    def _root_state(self):
        r = self._root_node
        return r.total_visits, {a: (c.visits, c.return_sum) for a, c in r.child_info.items()}

    def _restore_root(self, saved):
        total, children = saved
        r = self._root_node
        r.total_visits = total
        for a in list(r.child_info):
            if a in children:
                r.child_info[a].visits, r.child_info[a].return_sum = children[a]
            else:
                del r.child_info[a]


def load(match):
    """The game as OpenSpiel sees it (sequential form: ISMCTS asserts sequential dynamics)."""
    params = {"players": match.players}
    for key, value in match.options.items():
        params[key] = (0 if value is None or isinstance(value, str) else value)
    if bridge.REGISTRY[match.game].simultaneous:
        params["simultaneous"] = False
    return pyspiel.load_game(bridge.NAMES[match.game], params)


def follow_history(observation, mem):
    """Palace: every observation, forced ones too, into the public history (a history that
    stops fitting is dropped: the worlds then fit the observation alone)."""
    if mem.get("palace") is not None:
        try:
            mem["palace"].update(observation)
        except ValueError:
            mem["palace"] = None


def choose(observation, match):
    start = time.monotonic()
    mem = match.memory
    if "game" not in mem:
        mem["game"] = load(match)
        rs = np.random.RandomState(match.seed % 2**32)
        mem["bot"] = BudgetISMCTS(mem["game"], rs)
        mem["history"] = ""
        mem["palace"] = PalaceHistory(match.options) if match.game == "palace" else None
        mem["budget"] = budget_of(match)
    mem["history"] = bridge.digest(mem["history"], observation)
    follow_history(observation, mem)
    legal = observation["legal_actions"]
    if len(legal) == 1:
        return legal[0]["id"]
    bot = mem["bot"]
    state = bridge.state_from_observation(mem["game"], observation, mem["history"],
                                          int(bot._random_state.randint(2**31)), mem["palace"])
    return bot.choose(state, *mem["budget"], start=start)


def summary(result, match):
    """One line a match in the bot's log: what the budget allowed."""
    bot = match.memory.get("bot")
    if bot is not None and bot.searches:
        cpu, cap, move_s = match.memory["budget"]
        log(f"openspiel-ismcts {match.id}: {bot.searches} searches, {bot.sims / bot.searches:.1f} "
            f"simulations each, {bot.stops} stopped by the wall clock (budget: "
            f"{'%d simulations' % cap if cap else '%g s CPU' % cpu}, move_s {move_s})")


run(choose, name="openspiel-ismcts", on_result=summary)
