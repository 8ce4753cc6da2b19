"""The OpenSpiel bridge (arena.openspiel): registration, random_sim_test, resampling, returns."""

from __future__ import annotations

import json
import random

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install -e '.[openspiel]')")
import arena.openspiel  # noqa: E402,F401  (registers the games)
from games import REGISTRY  # noqa: E402

CAP = 80  # decisions: keeps the long games' random_sim_test quick; the cap is an ordinary option
CASES = [
    ("decktet_tightwad", {"players": 3}),
    ("decktet_tightwad", {"players": 5, "decision_cap": CAP}),
    ("decktet_tightwad", {"players": 10, "decision_cap": CAP}),
    ("decktet_divers_weights", {"players": 2}),
    ("decktet_divers_weights", {"players": 3, "simultaneous": False}),
    ("decktet_divers_weights", {"players": 4, "bidding": True}),
    ("decktet_divers_weights", {"players": 2, "hands": 1, "simultaneous": False}),
    ("decktet_divers_weights", {"players": 3, "target": 10}),
    ("decktet_palace", {"players": 2, "decision_cap": CAP}),
    ("decktet_palace", {"players": 4, "decision_cap": CAP, "simultaneous": False}),
    ("decktet_palace", {"players": 3, "decision_cap": CAP, "extended": True, "wyrm_variant": True}),
    ("decktet_palace", {"players": 5, "decision_cap": CAP, "decks": 3}),
]


def test_import_registers_the_three_games():
    names = set(pyspiel.registered_names())
    assert {"decktet_tightwad", "decktet_divers_weights", "decktet_palace"} <= names


@pytest.mark.parametrize("name,params", CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_random_sim_test_passes(name, params):
    game = pyspiel.load_game(name, params)
    assert game.num_players() == params["players"]
    assert game.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


def _every_count():
    for game_id, name in arena.openspiel.NAMES.items():
        spec = REGISTRY[game_id]
        for n in range(spec.min_players, spec.max_players + 1):
            for sim in (True, False) if spec.simultaneous else (None,):
                params = {"players": n, "decision_cap": 40}
                if sim is not None:
                    params["simultaneous"] = sim
                yield name, params


@pytest.mark.parametrize("name,params", list(_every_count()), ids=lambda v: str(v))
def test_random_sim_test_passes_at_every_player_count_and_both_dynamics(name, params):
    pyspiel.random_sim_test(pyspiel.load_game(name, params), num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize("cap", range(1, 13))
def test_the_decision_cap_may_end_the_game_inside_a_simultaneous_step(cap):
    """Four seats play a trick at once; the cap can fall between two of their choices."""
    game = pyspiel.load_game("decktet_divers_weights", {"players": 4, "decision_cap": cap})
    state = game.new_initial_state()
    state.apply_action(7)
    while not state.is_terminal():
        if state.current_player() == pyspiel.PlayerId.SIMULTANEOUS:
            state.apply_actions([state.legal_actions(p)[-1] for p in range(4)])
        else:
            state.apply_action(state.legal_actions()[0])
    assert state.engine.result().capped


@pytest.mark.slow
def test_random_sim_test_on_a_whole_palace_game():
    pyspiel.random_sim_test(
        pyspiel.load_game("decktet_palace", {"players": 3}), num_sims=1, serialize=False, verbose=False
    )


def test_simultaneous_is_a_parameter_of_the_two_games_that_have_it():
    sim = pyspiel.GameType.Dynamics.SIMULTANEOUS
    seq = pyspiel.GameType.Dynamics.SEQUENTIAL
    assert pyspiel.load_game("decktet_divers_weights").get_type().dynamics == sim
    assert pyspiel.load_game("decktet_palace").get_type().dynamics == sim
    assert pyspiel.load_game("decktet_divers_weights", {"simultaneous": False}).get_type().dynamics == seq
    assert pyspiel.load_game("decktet_tightwad").get_type().dynamics == seq
    # the trick in Divers Weights is a simultaneous node with every seat choosing
    state = pyspiel.load_game("decktet_divers_weights", {"players": 3}).new_initial_state()
    assert state.is_chance_node()
    state.apply_action(5)
    assert state.current_player() == pyspiel.PlayerId.SIMULTANEOUS
    assert all(state.legal_actions(p) for p in range(3))


def test_the_deal_is_the_chance_outcome_and_fixes_the_engine_deal():
    game = pyspiel.load_game("decktet_tightwad", {"players": 4, "deals": 50})
    state = game.new_initial_state()
    outcomes = state.chance_outcomes()
    assert [o for o, _ in outcomes] == list(range(50)) and sum(p for _, p in outcomes) == pytest.approx(1)
    state.apply_action(17)
    engine = REGISTRY["tightwad"].new_game(4, 17, {})
    assert json.loads(state.observation_string(0)) == engine.observation(0)


def test_options_reach_the_engine_and_bad_ones_are_refused():
    state = pyspiel.load_game("decktet_palace", {"players": 2, "extended": True, "decks": 3}).new_initial_state()
    state.apply_action(0)
    assert state.engine.options["extended"] is True and state.engine.options["decks"] == 3
    with pytest.raises(Exception, match="players"):
        pyspiel.load_game("decktet_tightwad", {"players": 2})


def _play_random(state, rnd):
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rnd.randrange(len(state.chance_outcomes())))
        elif state.is_simultaneous_node():
            state.apply_actions([rnd.choice(state.legal_actions(p)) for p in range(state.num_players())])
        else:
            state.apply_action(rnd.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize(
    "name,players", [("decktet_tightwad", 4), ("decktet_divers_weights", 3), ("decktet_palace", 3)]
)
def test_returns_follow_the_places_and_sum_to_zero(name, players):
    state = _play_random(pyspiel.load_game(name, {"players": players}).new_initial_state(), random.Random(3))
    places = state.engine.result().places
    r = state.returns()
    assert sum(r) == pytest.approx(0)
    for i in range(players):
        for j in range(players):
            assert (places[i] < places[j]) == (r[i] > r[j])


@pytest.mark.parametrize(
    "name,params",
    [
        ("decktet_tightwad", {"players": 4}),
        ("decktet_divers_weights", {"players": 2, "simultaneous": False}),
        ("decktet_palace", {"players": 3, "simultaneous": False}),
    ],
)
def test_a_resampled_world_has_the_same_information_state(name, params):
    """What ISMCTS asserts at every root: the world drawn from a seat's information state
    shows that seat the very same information state."""
    game = pyspiel.load_game(name, params)
    state, rnd, checked = game.new_initial_state(), random.Random(11), 0
    state.apply_action(4)
    while not state.is_terminal() and checked < 60:
        p = state.current_player()
        world = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(0.0, 1.0))
        assert world.current_player() == p
        assert world.information_state_string(p) == state.information_state_string(p)
        checked += 1
        state.apply_action(rnd.choice(state.legal_actions()))
    assert checked >= 20


def test_information_state_has_perfect_recall_and_observation_does_not():
    """Two deals where seat 0 sees the same now but saw different things before keep different
    information states (the history digest), while the observation strings may agree."""
    game = pyspiel.load_game("decktet_tightwad", {"players": 3})
    a = game.new_initial_state()
    a.apply_action(1)
    b = a.clone()
    assert a.information_state_string(0) == b.information_state_string(0)
    b._chain[0] = "something else seen before"
    assert a.observation_string(0) == b.observation_string(0)
    assert a.information_state_string(0) != b.information_state_string(0)


def test_palace_resamples_for_the_seat_follow_its_public_history():
    """Seat 1 swaps two face-up cards into its hand (public, R-P3/R-P17): a state built from
    seat 0's observation and history resamples worlds where they are in seat 1's hand."""
    from games.palace_history import PalaceHistory

    game = pyspiel.load_game("decktet_palace", {"players": 3, "simultaneous": False})
    for seed in range(40):
        st = REGISTRY["palace"].new_game(3, seed)
        if (st._dealer + 1) % 3 == 0:
            break
    hist = PalaceHistory(st.options)
    swap = next(i for i, m in enumerate(st.moves(1)) if len(m[1]) == 2)
    for seat in (0, 1, 2):
        if seat == 0:
            hist.update(json.loads(json.dumps(st.observation(0))))
        st.apply(seat, swap if seat == 1 else 0)
    obs = json.loads(json.dumps(st.observation(0)))
    hist.update(obs)
    swapped = {u for _, _, u in obs["swaps"]}
    state = arena.openspiel.state_from_observation(game, obs, "h", 3, public=hist)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)  # as ISMCTSBot calls it
    worlds = [state.resample_from_infostate(0, sampler).engine for _ in range(200)]
    assert len(swapped) == 2 and all(swapped <= set(w._hands[1]) for w in worlds)
    assert state.clone()._public is None  # the history belongs to this position only


def test_a_clone_keeps_the_history():
    """OpenSpiel's contract: a clone is the same state, history and move number included (a
    clone with an empty history looked like a fresh game to history(), serialize() and
    is_initial_state()); and it is independent of the original."""
    game = pyspiel.load_game("decktet_divers_weights", {"players": 2})
    state = game.new_initial_state()
    state.apply_action(9)
    state.apply_actions([0, 1])
    clone = state.clone()
    assert clone.history() == state.history() and clone.move_number() == state.move_number() == 2
    assert not clone.is_initial_state()
    again = game.deserialize_state(clone.serialize())
    assert again.history() == state.history()
    assert again.information_state_string(0) == state.information_state_string(0)
    before = state.information_state_string(1)
    if clone.is_simultaneous_node():
        clone.apply_actions([clone.legal_actions(p)[0] for p in range(2)])
    else:
        clone.apply_action(clone.legal_actions()[0])
    assert state.information_state_string(1) == before and len(clone.history()) > len(state.history())


@pytest.mark.parametrize(
    "public,private",
    [(True, "NONE"), (False, "SINGLE_PLAYER"), (True, "ALL_PLAYERS"), (False, "NONE")],
)
def test_an_observer_the_bridge_cannot_give_is_refused(public, private):
    """The engines' observations mix public and private information; an observer asked for less
    (or more) than one seat's view is refused, not handed that seat's hand."""
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("decktet_tightwad", {"players": 3})
    for recall in (False, True):
        iig = pyspiel.IIGObservationType(
            perfect_recall=recall, public_info=public, private_info=getattr(pyspiel.PrivateInfoType, private)
        )
        with pytest.raises(ValueError, match="one seat's own view"):
            make_observation(game, iig)
    state = game.new_initial_state()
    state.apply_action(3)
    seat_view = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER
    )
    assert make_observation(game, seat_view).string_from(state, 1) == state.observation_string(1)


@pytest.mark.parametrize("name", ["decktet_tightwad", "decktet_divers_weights", "decktet_palace"])
def test_the_game_declares_its_one_chance_node(name):
    """The deal is the only chance node in any history: MaxMoveNumber is the decisions plus one
    (pyspiel's default for a Python game counts as many chance nodes as decisions)."""
    game = pyspiel.load_game(name, {"decision_cap": 50})
    assert game.max_game_length() == 50
    assert game.max_chance_nodes_in_history() == 1
    assert game.max_move_number() == 51
    state = _play_random(game.new_initial_state(), random.Random(2))
    assert sum(1 for pa in state.full_history() if pa.player == pyspiel.PlayerId.CHANCE) == 1


@pytest.mark.parametrize(
    "name,params",
    [
        ("decktet_tightwad", {"players": 3, "decision_cap": CAP}),
        ("decktet_divers_weights", {"players": 3}),
        ("decktet_palace", {"players": 2, "decision_cap": CAP, "simultaneous": False}),
    ],
    ids=lambda v: str(v),
)
def test_random_sim_test_round_trips_every_state_through_serialize(name, params):
    pyspiel.random_sim_test(pyspiel.load_game(name, params), num_sims=1, serialize=True, verbose=False)


def test_palace_resamples_of_a_game_played_from_the_deal_follow_the_public_history():
    """Cards a seat took into its hand in public (an eaten pile, face-up cards swapped in) stay
    in that hand in every world resampled for another seat (ruling C5: public knowledge), in a
    game played through the bridge from its chance node, not only in states built by a bot."""
    from games.palace_history import PalaceHistory

    game = pyspiel.load_game("decktet_palace", {"players": 3, "simultaneous": False})
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    state, rnd = game.new_initial_state(), random.Random(4)
    state.apply_action(4)
    seen = [PalaceHistory(state.engine.options) for _ in range(3)]  # each seat's, as a bot keeps it
    worlds = known = 0
    while not state.is_terminal() and state.engine.decisions < 150:
        p = state.current_player()
        seen[p].update(json.loads(json.dumps(state.engine.observation(p))))
        for _ in range(2):
            world = state.resample_from_infostate(p, sampler)
            assert world.information_state_string(p) == state.information_state_string(p)
            for q in range(3):
                hand = [c % 45 for c in world.engine._hands[q]]
                for c in seen[p].known[q] if q != p else []:
                    hand.remove(c % 45)  # ValueError: a publicly known card is not in q's hand
                    known += 1
            worlds += 1
        state.apply_action(rnd.choice(state.legal_actions()))
    assert worlds > 100 and known > 100
