"""The gnubg agent (GNU Backgammon 0-ply through gnubg-nn) against gnubg_nn's own evaluation and best move."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from bgai.core.board import flip, starting_board
from bgai.core.equity import cubeless_equity
from bgai.core.position import Position
from bgai.errors import AgentSpecError

gnubg_nn = pytest.importorskip("gnubg_nn")

from bgai.agents.gnubg import GnubgAgent  # noqa: E402


def _gnubg(board: np.ndarray) -> list[list[int]]:
    return [board[1].tolist(), board[0].tolist()]


def _apply_best(board: np.ndarray, move) -> np.ndarray:
    """Apply gnubg_nn.best_move's ((from, to), ...) 1-based steps (bar 25, off 0) to a bgai board."""
    a = board.copy()
    for f, t in move:
        a[0, f - 1] -= 1
        if t > 0:
            a[0, t - 1] += 1
            if a[1, 24 - t] == 1:
                a[1, 24 - t] = 0
                a[1, 24] += 1
    return a


@pytest.fixture(scope="module")
def positions():
    """~600 positions with rolls from games played by gnubg_nn (0-ply best move, some random plays)."""
    rng = np.random.default_rng(7)
    boards, dice = [], []
    while len(boards) < 600:
        b = starting_board()
        while True:
            d = rng.integers(1, 7, size=2)
            boards.append(b)
            dice.append(d)
            keys = gnubg_nn.moves(_gnubg(b), int(d[0]), int(d[1]))
            if not keys:
                nxt = b
            elif rng.random() < 0.3:
                opp, me = gnubg_nn.board_from_position_key(keys[rng.integers(len(keys))])
                nxt = np.array([me, opp], dtype=np.int8)
            else:
                nxt = _apply_best(b, gnubg_nn.best_move(_gnubg(b), int(d[0]), int(d[1]), 0))
            if nxt[0].sum() == 0:
                break
            b = flip(nxt)
    return np.stack(boards), np.stack(dice)


def test_probabilities_match_gnubg_nn(positions):
    boards, _ = positions
    ours = GnubgAgent().probabilities(boards)
    theirs = np.array([gnubg_nn.probabilities(_gnubg(b), 0) for b in boards])
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


def test_starting_position_favours_side_on_roll():
    p = GnubgAgent().probabilities(starting_board()[None])[0]
    assert 0.5 < p[0] < 0.56  # gnubg 0-ply: about 52% for the side on roll
    assert cubeless_equity(p) > 0


def test_finished_positions_scored_exactly():
    # side on roll has lost a gammon (opponent borne off all, side on roll none off)
    lost_gammon = Position.from_points({6: 15}, {}).board
    won = np.zeros((2, 25), dtype=np.int8)
    won[1, 5] = 3
    p = GnubgAgent().probabilities(np.stack([lost_gammon, won]))
    np.testing.assert_array_equal(p[0], [0, 0, 0, 1, 0])
    np.testing.assert_array_equal(p[1], [1, 0, 0, 0, 0])


def test_choice_matches_gnubg_best_move_0ply(positions):
    boards, dice = positions
    agent = GnubgAgent()
    chosen = agent.choose(boards, dice, np.random.default_rng(0))
    expected = np.stack(
        [_apply_best(b, gnubg_nn.best_move(_gnubg(b), int(d[0]), int(d[1]), 0)) for b, d in zip(boards, dice)]
    )
    same = (chosen == expected).all(axis=(1, 2))
    diff = np.flatnonzero(~same)
    # differences only between plays of equal equity (gnubg breaks ties its own way)
    if diff.size:
        e = agent.evaluate_afterstates(np.concatenate([chosen[diff], expected[diff]]))
        np.testing.assert_allclose(e[: diff.size], e[diff.size :], atol=1e-6)
    assert same.mean() > 0.97


def test_missing_gnubg_nn_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "gnubg_nn", None)  # import gnubg_nn -> ImportError
    from bgai.agents.registry import make_agent

    with pytest.raises(AgentSpecError, match="gnubg-nn"):
        make_agent("gnubg")


def test_one_ply_is_gnubgs_own_search(positions):
    """``gnubg:ply=1``: gnubg-nn's 1-ply probabilities, and its 1-ply play (gnubg_nn.best_move at 1 ply, applied
    by this test's own code), which is the best of the plays by those 1-ply values (gnubg's move filter keeps it)."""
    from bgai.agents.registry import make_agent
    from bgai.core.movegen import afterstates

    boards, dice = positions[0][::4], positions[1][::4]
    agent = make_agent("gnubg:ply=1")
    assert agent.name == "gnubg:ply=1" and agent.capabilities.ply == 1 and agent.at_ply(1) is agent
    assert agent.at_ply(0).name == "gnubg" and agent.at_ply(0).capabilities.ply == 0
    theirs = np.array([gnubg_nn.probabilities(_gnubg(b), 1) for b in boards[:40]])
    np.testing.assert_allclose(agent.probabilities(boards[:40]), theirs, atol=1e-6)
    assert np.abs(theirs - GnubgAgent().probabilities(boards[:40])).max() > 0.01  # 1-ply is not 0-ply
    chosen = agent.choose(boards, dice, np.random.default_rng(0))
    expected = np.stack([_apply_best(b, gnubg_nn.best_move(_gnubg(b), int(d[0]), int(d[1]), 1))
                         for b, d in zip(boards, dice)])
    np.testing.assert_array_equal(chosen, expected)
    after, src = afterstates(boards, dice)
    e1 = agent.evaluate_afterstates(after)
    best = np.array([after[np.flatnonzero(src == i)[np.argmax(e1[src == i])]] for i in range(len(boards))])
    same = (best == chosen).all(axis=(1, 2))
    assert same.mean() > 0.97
    # no legal play (on the bar against a closed board): the position unchanged
    closed = np.zeros((2, 25), np.int8)
    closed[0, 24], closed[0, 3], closed[1, 0:6], closed[1, 16] = 2, 13, 2, 3
    np.testing.assert_array_equal(agent.choose(closed[None], np.array([[6, 6]]), np.random.default_rng(0))[0], closed)


def test_gnubg_ply_out_of_range_is_a_clear_error():
    from bgai.agents.registry import make_agent

    for spec in ("gnubg:ply=3", "gnubg:ply=-1"):
        with pytest.raises(AgentSpecError, match=r"ply must be (0\.\.2|0 or more)"):
            make_agent(spec)
    with pytest.raises(AgentSpecError, match=r"gnubg ply must be 0\.\.2, got True"):
        GnubgAgent(True)
