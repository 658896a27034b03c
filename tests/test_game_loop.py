"""The one game loop (bgai.game.play.play): cubeless, cubeful money and match play through the same turn phases,
its figures pinned to those of the two loops it replaced, records with cube actions, the one opening roll, and its
stepping core GameBatch, pinned to self-play's former loop."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.core.movegen import afterstates
from bgai.game.match import MatchRules
from bgai.game.play import (
    CUBELESS_RULES,
    GameBatch,
    PlayResults,
    SharedDice,
    UnitDice,
    dice_rng,
    opening_roll,
    play,
    play_games,
    roll_dice,
)
from bgai.game.play_cube import CubefulResults, CubePolicy, play_cubeful
from bgai.game.policies import NeverDoubleAlwaysTake


@pytest.fixture(scope="module")
def pubeval():
    return make_agent("pubeval")


class _Scripted(CubePolicy):
    """Doubles while the cube is below ``upto``; takes when ``take``."""

    def __init__(self, take: bool, upto: int = 4) -> None:
        self.take, self.upto = take, upto

    def offer(self, boards, states):
        return np.array([s.cube_value < self.upto for s in states], dtype=bool)

    def accept(self, boards, states):
        return np.full(len(states), self.take)


def test_cubeless_figures_are_those_of_the_former_cubeless_loop(pubeval):
    # figures of bgai.game.play.play_games before the loops were merged (commit 24ed34f), same seeds
    res = play_games((pubeval, make_agent("random")), [dice_rng(0, g) for g in range(20)], np.random.default_rng(0),
                     a_seat=np.arange(20) % 2)
    assert res.points_a.tolist() == [3, 2, 3, 1, 3, 2, 3, 3, 3, 3, 2, 3, 3, 3, 2, 2, 3, 2, 2, 2]
    assert res.plies.tolist() == [52, 48, 63, 52, 56, 59, 88, 34, 52, 52, 67, 74, 67, 52, 46, 53, 44, 51, 86, 70]


def test_match_figures_are_those_of_the_former_cubeful_loop(pubeval):
    pytest.importorskip("gnubg_nn")
    # figures of bgai.game.play_cube.play_cubeful before the loops were merged (commit 24ed34f): gnubg's Janowski
    # cube against pubeval's never-double-always-take in 5-point matches, duplicate dice
    res = play_cubeful((make_agent("gnubg"), pubeval), MatchRules.match(5), [dice_rng(2, g // 2) for g in range(8)],
                       np.random.default_rng(2), a_seat=np.arange(8) % 2)
    assert res.unit_score.tolist() == [[5, 3], [5, 0], [5, 4], [6, 4], [6, 0], [6, 2], [6, 0], [5, 4]]
    assert res.doubles[:, 0].tolist() == [2, 2, 3, 1, 2, 1, 2, 3] and res.doubles[:, 1].sum() == 0
    assert res.takes[:, 1].tolist() == res.doubles[:, 0].tolist() and res.passes.sum() == 0
    assert res.game_unit.tolist() == [5, 1, 6, 4, 3, 0, 2, 7, 5, 1, 6, 4, 0, 5, 1, 2, 3, 7, 0, 5, 2, 3, 0, 7, 2, 3, 0,
                                      7, 3, 7, 3, 3]
    assert int(res.game_plies.sum()) == 1895 and int(res.game_points.sum()) == 61 == res.unit_score.sum()


def test_cubeless_play_is_the_loop_without_rules(pubeval):
    rngs = lambda: [dice_rng(5, g) for g in range(12)]  # noqa: E731
    full = play((pubeval, pubeval), rngs(), np.random.default_rng(0), a_seat=np.arange(12) % 2, record=True)
    assert isinstance(full, PlayResults) and CubefulResults is PlayResults and full.rules == CUBELESS_RULES
    assert (full.game_cube == 1).all() and full.doubles.sum() == 0 and (full.unit_games == 1).all()
    np.testing.assert_array_equal(full.game_points, full.game_kind)  # no Jacoby rule: 1/2/3
    view = full.cubeless()
    res = play_games((pubeval, pubeval), rngs(), np.random.default_rng(0), a_seat=np.arange(12) % 2, record=True)
    for f in ("winner", "points", "plies", "a_seat"):
        np.testing.assert_array_equal(getattr(view, f), getattr(res, f))
    assert [r.afterstates.tobytes() for r in view.records] == [r.afterstates.tobytes() for r in res.records]
    # the same money games with cube policies that never double: the same games
    cube = play((pubeval, pubeval), rngs(), np.random.default_rng(0), a_seat=np.arange(12) % 2,
                rules=MatchRules.money(jacoby=False), policies=(NeverDoubleAlwaysTake(), NeverDoubleAlwaysTake()))
    np.testing.assert_array_equal(cube.cubeless().points_a, res.points_a)


def test_cube_actions_are_recorded_and_records_replay(pubeval):
    res = play_cubeful((pubeval, pubeval), MatchRules.match(5), [dice_rng(3, g) for g in range(6)],
                       np.random.default_rng(3), policies=(_Scripted(True), _Scripted(False)), record=True)
    assert len(res.records) == len(res.game_unit)
    passes = 0
    for k, rec in enumerate(res.records):
        assert rec.unit == res.game_unit[k] and rec.points == res.game_points[k] and rec.kind == res.game_kind[k]
        assert rec.winner_seat == (res.game_winner[k] ^ rec.a_seat)
        for pos, d, a in zip(rec.positions(), rec.dice, rec.afterstates):
            after, _ = afterstates(pos[None], d[None])
            assert (after == a).all(axis=(1, 2)).any()
        for ply, seat, took in rec.cube_actions:
            assert 1 <= ply <= len(rec.movers)  # never before the opening roll's play
            assert took == (seat != rec.a_seat)  # A doubles, B passes; B doubles, A takes
        if rec.kind == 0:  # a pass ends the game before the doubler's roll
            passes += 1
            assert rec.cube_actions[-1] == (len(rec.movers), rec.cube_actions[-1][1], False)
            assert rec.transcript().splitlines()[-1].endswith("(double passed)")
        text = rec.transcript(("A", "B"))
        assert text.count("doubles") == len(rec.cube_actions)
    assert passes == int(res.passes.sum()) > 0 and res.takes.sum() > 0


def test_cubeless_view_of_a_match_and_policies_without_rules_are_errors(pubeval):
    # nobody doubles: at most 3 points a game, so a 5-point match takes at least two games
    res = play_cubeful((pubeval, pubeval), MatchRules.match(5), [dice_rng(1, 0)], np.random.default_rng(0),
                       policies=(_Scripted(True, upto=1), _Scripted(True, upto=1)))
    assert len(res.game_unit) >= 2 and res.unit_games[0] == len(res.game_unit)
    with pytest.raises(ValueError, match="not one game per unit"):
        res.cubeless()
    with pytest.raises(ValueError, match="cubeless play has no cube"):
        play((pubeval, pubeval), [dice_rng(1, 0)], np.random.default_rng(0), policies=(_Scripted(True),) * 2)
    with pytest.raises(ValueError, match="a_seat"):
        play((pubeval, pubeval), [dice_rng(1, 0)], np.random.default_rng(0), a_seat=2)


def _selfplay_roll_before(rng, first):
    """bgai.train.selfplay.GameShard._roll as it was written before roll_dice (the reference)."""
    n = first.size
    dice = rng.integers(1, 7, size=(n, 2))
    redo = first & (dice[:, 0] == dice[:, 1])
    while redo.any():
        idx = np.flatnonzero(redo)
        dice[idx] = rng.integers(1, 7, size=(idx.size, 2))
        redo[idx] = dice[idx, 0] == dice[idx, 1]
    return dice


def test_roll_dice_is_the_one_opening_roll():
    first = np.random.default_rng(0).random(500) < 0.3
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    for _ in range(20):  # the same draws as self-play's own roll, so self-play can use it unchanged
        np.testing.assert_array_equal(roll_dice(a, first), _selfplay_roll_before(b, first))
    d = roll_dice(np.random.default_rng(1), first)
    assert (d[first, 0] != d[first, 1]).all() and (d[~first, 0] == d[~first, 1]).any()
    assert d.min() == 1 and d.max() == 6
    # opening_roll is its one-game case, and draws as the former per-game loop did (two dice per attempt)
    redrawn = 0
    for seed in range(300):
        g1, g2, g3 = dice_rng(seed, 0), dice_rng(seed, 0), dice_rng(seed, 0)
        while True:
            ref = g2.integers(1, 7, size=2)
            if ref[0] != ref[1]:
                break
            redrawn += 1
        assert opening_roll(g1) == (int(ref[0]), int(ref[1])) == tuple(roll_dice(g3, np.ones(1, dtype=bool))[0])
        after = g1.integers(1, 7, size=8)  # the generators are left in the same state
        np.testing.assert_array_equal(after, g2.integers(1, 7, size=8))
        np.testing.assert_array_equal(after, g3.integers(1, 7, size=8))
    assert redrawn > 30  # ties re-rolled (once or more) in about a sixth of the games


# --- the stepping core that play() and self-play both drive ---------------------------------------------------

def _refill_loop_before(rng, n, steps, choose):
    """Self-play's loop as bgai.train.selfplay.GameShard.play_step wrote it before GameBatch (the reference):
    every game rolls every ply (opening rolls where a game starts), plays, and a finished game restarts at once."""
    from bgai.core.board import flip, starting_board
    from bgai.game.play import finish_games

    boards = np.broadcast_to(starting_board(), (n, 2, 25)).copy()
    first = np.ones(n, dtype=bool)
    out = []
    for _ in range(steps):
        dice = roll_dice(rng, first)
        chosen = choose(boards, dice)
        won, points = finish_games(chosen)
        first[:] = False
        boards = flip(chosen)
        boards[won] = starting_board()
        first[won] = True
        out.append((boards.copy(), np.flatnonzero(won), points[won], dice))
    return out


def test_game_batch_with_refill_is_the_former_selfplay_loop(pubeval):
    """GameBatch + SharedDice + restarting finished slots: the same games, draws and results as self-play's own
    loop before it moved onto the core (opening rolls are now played higher die first: the same plays)."""
    n, steps = 24, 300
    rng = np.random.default_rng(3)
    ref = _refill_loop_before(np.random.default_rng(3), n, steps,
                              lambda b, d: pubeval.choose(b, d, np.random.default_rng(0)))
    batch = GameBatch(n, SharedDice(rng), max_plies=None)
    batch.start(np.arange(n))
    finished = 0
    for boards, won, points, dice in ref:
        ply = batch.step(lambda s, p, b, d: pubeval.choose(b, d, np.random.default_rng(0)))
        np.testing.assert_array_equal(ply.slots, np.arange(n))
        np.testing.assert_array_equal(np.sort(ply.dice, axis=1), np.sort(dice, axis=1))
        np.testing.assert_array_equal(np.flatnonzero(ply.done), won)
        np.testing.assert_array_equal(ply.points[ply.done], points)
        batch.start(np.flatnonzero(ply.done))
        np.testing.assert_array_equal(batch.boards, boards)
        finished += won.size
    assert finished > 80 and batch.active.all()


def test_game_batch_unit_dice_is_play_and_checks_its_chooser(pubeval):
    """Driven by hand with UnitDice (no cube, slots not refilled), the core plays play_games' games; a chooser of
    the wrong shape and the ply limit are errors."""
    n = 10
    batch = GameBatch(n, UnitDice([dice_rng(4, g) for g in range(n)]), a_seat=np.arange(n) % 2)
    batch.start(np.arange(n))
    openings = batch.opening.copy()
    assert (openings[:, 0] != openings[:, 1]).all()
    assert (batch.on_roll == ((openings[:, 1] > openings[:, 0]) ^ (np.arange(n) % 2))).all()
    winner, points, plies = np.zeros(n, np.int8), np.zeros(n, np.int8), np.zeros(n, np.int32)
    while batch.active.any():
        ply = batch.step(lambda s, p, b, d: pubeval.choose(b, d, np.random.default_rng(0)))
        winner[ply.slots[ply.done]] = ply.players[ply.done]
        points[ply.slots[ply.done]] = ply.points[ply.done]
        plies[ply.slots[ply.done]] = batch.plies[ply.slots[ply.done]]
    res = play_games((pubeval, pubeval), [dice_rng(4, g) for g in range(n)], np.random.default_rng(0),
                     a_seat=np.arange(n) % 2)
    np.testing.assert_array_equal(winner, res.winner)
    np.testing.assert_array_equal(points, res.points)
    np.testing.assert_array_equal(plies, res.plies)
    bad = GameBatch(2, UnitDice([dice_rng(1, g) for g in range(2)]))
    bad.start([0, 1])
    with pytest.raises(RuntimeError, match="shape"):
        bad.step(lambda s, p, b, d: b[:1])
    short = GameBatch(2, SharedDice(np.random.default_rng(0)), max_plies=3)
    short.start([0, 1])
    with pytest.raises(RuntimeError, match="within 3 plies"):
        for _ in range(3):
            short.step(lambda s, p, b, d: pubeval.choose(b, d, np.random.default_rng(0)))
