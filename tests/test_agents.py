"""The random and heuristic bots, and agent specs (registry)."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.agents.base import Agent
from bgai.agents.heuristic import BlockerAgent, RacerAgent, exposed_blots, longest_prime, opponent_on_my_points
from bgai.agents.pubeval import PubevalAgent
from bgai.agents.random import RandomAgent
from bgai.agents.registry import BUILTINS, make_agent, parse_spec
from bgai.core.board import starting_board
from bgai.core.movegen import afterstates
from bgai.core.position import Position
from bgai.errors import AgentSpecError, CheckpointError


def moved(board: np.ndarray, steps: list[tuple[int, int]]) -> np.ndarray:
    """Apply single-checker steps (from, to) on the mover's points (25 = bar, 0 = off; no hits) to a board."""
    b = np.array(board, dtype=np.int8, copy=True)
    for f, t in steps:
        b[0, f - 1] -= 1
        if t > 0:
            b[0, t - 1] += 1
    return b


START = starting_board()


# --- random -----------------------------------------------------------------------------------------------------


def test_random_plays_legal_afterstates_and_is_seeded():
    rng = np.random.default_rng(3)
    boards = np.broadcast_to(START, (200, 2, 25)).copy()
    dice = rng.integers(1, 7, size=(200, 2))
    agent = RandomAgent()
    a1 = agent.choose(boards, dice, np.random.default_rng(42))
    a2 = agent.choose(boards, dice, np.random.default_rng(42))
    a3 = agent.choose(boards, dice, np.random.default_rng(43))
    np.testing.assert_array_equal(a1, a2)
    assert not np.array_equal(a1, a3)
    after, src = afterstates(boards, dice)
    for i in range(200):
        assert (after[src == i] == a1[i]).all(axis=(1, 2)).any()


def test_random_is_uniform_over_distinct_afterstates():
    # 3-1 from the start has 16 distinct afterstates; 32,000 draws -> 2,000 expected each (sd ~43)
    n = 32_000
    boards = np.broadcast_to(START, (n, 2, 25))
    dice = np.tile([3, 1], (n, 1))
    chosen = RandomAgent().choose(boards, dice, np.random.default_rng(0))
    after, _ = afterstates(START[None], np.array([[3, 1]]))
    k = len(after)
    counts = np.array([(chosen == a).all(axis=(1, 2)).sum() for a in after])
    assert counts.sum() == n
    expected = n / k
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected))


def test_random_passes_when_no_play():
    # closed board against two checkers on the bar: no entry
    pos = Position.from_points({1: 13}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}, me_bar=2)
    out = RandomAgent().choose(pos.board[None], np.array([[6, 5]]), np.random.default_rng(0))
    np.testing.assert_array_equal(out[0], pos.board)


# --- heuristic features ------------------------------------------------------------------------------------------


def test_opponent_on_my_points_and_exposed_blots():
    # my blots on my 10 (opponent 3 pips behind it on my 7) and on my 20 (nearest opponent checker 8 pips behind)
    pos = Position.from_points({10: 1, 20: 1, 6: 13}, {18: 2, 25 - 12: 13})  # opponent's 18 = my 7, 13 = my 12
    opp = opponent_on_my_points(pos.board[None])[0]
    assert opp[7] == 2 and opp[12] == 13 and opp.sum() == 15
    exp = exposed_blots(pos.board[None])[0]
    assert exp[9]  # my 10-point blot: shooter on my 7 (3 away)
    assert not exp[19]  # my 20: shooters on my 12 (8 away) and 7 (13 away): no direct shot
    assert exp.sum() == 1


def test_blot_in_home_board_is_exposed_to_checker_on_bar():
    pos = Position.from_points({3: 1, 6: 14}, {24: 14}, opponent_bar=1)
    assert exposed_blots(pos.board[None])[0, 2]
    safe = Position.from_points({3: 2, 6: 13}, {24: 14}, opponent_bar=1)
    assert not exposed_blots(safe.board[None]).any()


def test_longest_prime():
    pos = Position.from_points({4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 9: 2, 13: 3}, {24: 15})
    assert longest_prime(pos.board[None])[0] == 6
    assert longest_prime(START[None])[0] == 1


# --- heuristic play ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dice, steps",
    [
        ((3, 1), [(8, 5), (6, 5)]),  # make the 5-point
        ((4, 2), [(8, 4), (6, 4)]),  # make the 4-point
        ((6, 1), [(13, 7), (8, 7)]),  # make the bar point
        ((5, 3), [(8, 3), (6, 3)]),  # make the 3-point
    ],
)
def test_blocker_makes_points_with_opening_rolls(dice, steps):
    out = BlockerAgent().choose(START[None], np.array([dice]), np.random.default_rng(0))[0]
    np.testing.assert_array_equal(out, moved(START, steps))


def test_racer_runs_a_back_checker_with_65():
    out = RacerAgent().choose(START[None], np.array([[6, 5]]), np.random.default_rng(0))[0]
    np.testing.assert_array_equal(out, moved(START, [(24, 18), (18, 13)]))


def test_racer_rules_on_afterstates():
    racer = RacerAgent()
    base = Position.from_points({6: 5, 8: 5, 13: 5}, {6: 5, 8: 5, 13: 5}).board
    blot = moved(base, [(6, 7)])  # fake "play" that moves a checker back; only the scores matter
    off = moved(base, [(6, 0)])
    before = base[None]
    s = racer.evaluate_plays(before, np.stack([base, blot, off]), np.zeros(3, dtype=np.int64))
    # rule 1 pip lead: one more pip; rule 3: one more checker outside the home board (0.5); the blot on my 7
    # has no opponent checker 1..6 pips behind it (they are on my 12, 17, 19): rule 2 does not apply
    assert not exposed_blots(blot[None]).any()
    assert s[1] == pytest.approx(s[0] - 1 - 0.5)
    # bearing a checker off: +6 pips of lead and +2
    assert s[2] == pytest.approx(s[0] + 6 + 2)
    hit_exposed = Position.from_points({6: 5, 8: 4, 10: 1, 13: 5}, {13: 5, 8: 5, 6: 4, 18: 1}).board  # opp on my 7
    assert exposed_blots(hit_exposed[None])[0, 9]


def test_blocker_prefers_hitting_and_safety():
    blocker = BlockerAgent()
    before = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 1, 20: 1}).board
    # opponent's blot on its 20 = my 5-point; compare hitting it (8/5*) with a quiet play of the same checker
    hit = before.copy()
    hit[0, 7] -= 1
    hit[0, 4] += 1
    hit[1, 19] -= 1
    hit[1, 24] += 1
    quiet = before.copy()
    quiet[0, 7] -= 1
    quiet[0, 3] += 1
    s = blocker.evaluate_plays(before[None], np.stack([hit, quiet]), np.zeros(2, dtype=np.int64))
    assert s[0] > s[1]


def test_heuristics_play_legal_moves_in_games():
    from bgai.game.play import dice_rng, play_games

    res = play_games(
        (RacerAgent(), BlockerAgent()), [dice_rng(5, g) for g in range(20)], np.random.default_rng(0), record=True
    )
    for rec in res.records:
        for pos, d, a in zip(rec.positions(), rec.dice, rec.afterstates):
            after, _ = afterstates(pos[None], d[None])
            assert (after == a).all(axis=(1, 2)).any()


# --- registry ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, cls", [("random", RandomAgent), ("pubeval", PubevalAgent), ("racer", RacerAgent), ("blocker", BlockerAgent)]
)
def test_make_agent_builtins(spec, cls):
    agent = make_agent(spec)
    assert isinstance(agent, cls) and isinstance(agent, Agent)
    assert agent.name == spec and agent.spec == spec


def test_make_agent_is_case_insensitive_and_strips():
    assert isinstance(make_agent(" PubEval "), PubevalAgent)


def test_unknown_agent_lists_valid_names():
    with pytest.raises(AgentSpecError) as exc:
        make_agent("pubevil")
    msg = str(exc.value)
    assert "pubevil" in msg
    for name in BUILTINS:
        assert name in msg


def test_builtin_takes_no_options():
    with pytest.raises(AgentSpecError, match="takes no options"):
        make_agent("pubeval:ply=1")


def test_missing_checkpoint_names_the_path(tmp_path):
    path = tmp_path / "nope.pt"
    with pytest.raises(CheckpointError, match="nope.pt"):
        make_agent(f"{path}:ply=1")


@pytest.mark.parametrize(
    "spec, msg",
    [("x.pt:ply=two", "bad value"), ("x.pt:depth=2", "unknown option"), ("x.pt:ply", "key=value"),
     ("x.pt:ply=-1", "ply must be 0 or more, got -1"), ("", "empty")],
)
def test_bad_checkpoint_options(spec, msg):
    with pytest.raises(AgentSpecError, match=msg):
        parse_spec(spec)


def test_parse_spec_splits_path_and_options():
    assert parse_spec("runs/a/best.pt:ply=2") == ("runs/a/best.pt", {"ply": 2})
    assert parse_spec("runs/a/best.pt") == ("runs/a/best.pt", {})


# --- best_per_input (used by every value agent) ---------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(-3, 3), min_size=1, max_size=8), min_size=1, max_size=20))
def test_best_per_input_is_first_maximum_of_each_group(groups):
    from bgai.agents.base import best_per_input

    scores = np.array([float(x) for g in groups for x in g])
    src = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    starts = np.concatenate(([0], np.cumsum([len(g) for g in groups])[:-1]))
    expected = [int(s + int(np.argmax(g))) for s, g in zip(starts, groups)]  # argmax: first maximum
    assert best_per_input(scores, src, len(groups)).tolist() == expected


# --- finished_or_evaluate (the one finished-position override of probability agents) ------------------------------


def test_finished_or_evaluate_values_finished_games_exactly_and_evaluates_only_the_rest():
    from bgai.agents.base import finished_or_evaluate
    from bgai.core.board import flip, result_kind, starting_board

    live = starting_board()
    lost_single = np.zeros((2, 25), dtype=np.int8)
    lost_single[0, 0] = 1  # the opponent (row 1) bore off all 15; the side on roll has borne off 14
    gammoned = np.zeros((2, 25), dtype=np.int8)
    gammoned[0, 5] = 15  # ... has borne off none: a gammon
    backgammoned = gammoned.copy()
    backgammoned[0, 5], backgammoned[0, 24] = 14, 1  # ... and a checker on the bar: a backgammon
    won = flip(gammoned)  # the side on roll has borne off all 15 and its opponent none: a gammon win
    boards = np.stack([live, lost_single, gammoned, backgammoned, won, live])
    seen = []

    def evaluate(b):
        seen.append(b.copy())
        return np.full((len(b), 5), 0.25, dtype=np.float32)

    out = finished_or_evaluate(boards, evaluate)
    assert out.dtype == np.float64 and out.shape == (6, 5)
    assert len(seen) == 1 and len(seen[0]) == 2 and (seen[0] == live).all()  # one call, the live boards only
    np.testing.assert_array_equal(out[[0, 5]], 0.25)
    assert result_kind(np.stack([flip(lost_single), flip(gammoned), flip(backgammoned)]))[1].tolist() == [1, 2, 3]
    np.testing.assert_array_equal(out[1:5], [[0, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 1, 1], [1, 1, 0, 0, 0]])
    # no finished game: the evaluator gets the boards themselves; none live: it is not called
    assert finished_or_evaluate(boards[[0, 5]], lambda b: np.zeros((len(b), 5))).sum() == 0
    seen.clear()
    finished_or_evaluate(boards[1:5], evaluate)
    assert not seen and finished_or_evaluate(boards[:0], evaluate).shape == (0, 5)


def test_one_group_argmax_and_one_override_are_shared():
    import inspect

    import bgai.agents.base as base
    import bgai.agents.neural as neural
    import bgai.agents.numpy_bot as numpy_bot
    import bgai.train.selfplay as selfplay

    assert not hasattr(neural, "group_argmax") and neural.best_per_input is base.best_per_input
    assert not hasattr(selfplay, "group_argmax")  # self-play chooses through NeuralAgent.pick_0ply
    assert "best_per_input(" in inspect.getsource(neural.NeuralAgent.pick_0ply)
    assert numpy_bot.finished_or_evaluate is neural.finished_or_evaluate is base.finished_or_evaluate
