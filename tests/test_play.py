"""The batched game runner: opening roll, turns, passes, results, records, seeded and mirrored dice."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.agents.base import Agent
from bgai.agents.pubeval import PubevalAgent
from bgai.agents.random import RandomAgent
from bgai.core.board import NUM_CHECKERS, flip, result_kind, starting_board
from bgai.core.movegen import afterstates
from bgai.game.play import DICE_BLOCK, DiceStreams, GameResults, dice_rng, opening_roll, play_games


def test_opening_roll_never_a_double_and_uniform_over_the_15_pairs():
    rng = np.random.default_rng(11)
    n = 100_000
    rolls = np.array([opening_roll(rng) for _ in range(n)])
    assert (rolls[:, 0] != rolls[:, 1]).all()
    hi, lo = rolls.max(axis=1), rolls.min(axis=1)
    counts = np.zeros((7, 7), dtype=np.int64)
    np.add.at(counts, (hi, lo), 1)
    pairs = np.array([counts[h, lo_] for h in range(2, 7) for lo_ in range(1, h)])
    assert len(pairs) == 15 and pairs.sum() == n
    expected = n / 15
    sd = np.sqrt(n * (1 / 15) * (14 / 15))
    assert np.all(np.abs(pairs - expected) < 5 * sd)
    # each seat wins the opening roll half the time
    assert abs((rolls[:, 0] > rolls[:, 1]).mean() - 0.5) < 0.01


def test_dice_streams_depend_only_on_the_games_generator():
    a = DiceStreams([dice_rng(1, 0), dice_rng(1, 1)])
    b = DiceStreams([dice_rng(1, 1)])
    seq_a = np.array([a.roll(np.array([1]))[0] for _ in range(DICE_BLOCK * 2 + 5)])
    seq_b = np.array([b.roll(np.array([0]))[0] for _ in range(DICE_BLOCK * 2 + 5)])
    np.testing.assert_array_equal(seq_a, seq_b)
    assert seq_a.min() == 1 and seq_a.max() == 6


def _check_record(rec, legal_check: bool = True):
    """Replay one game record and check every rule the runner is responsible for."""
    positions = rec.positions()
    np.testing.assert_array_equal(positions[0], starting_board())
    d0, d1 = rec.opening
    assert d0 != d1
    assert rec.movers[0] == (0 if d0 > d1 else 1)
    assert tuple(rec.dice[0]) == (max(d0, d1), min(d0, d1))
    assert (np.diff(rec.movers) != 0).all()  # players alternate (passes included)
    for pos, d, a in zip(positions, rec.dice, rec.afterstates):
        assert (a >= 0).all()
        assert a[0].sum() <= pos[0].sum()  # mover only bears off
        assert a.sum() <= pos.sum()
        if legal_check:
            after, _ = afterstates(pos[None], d[None])
            assert (after == a).all(axis=(1, 2)).any()
    last = rec.afterstates[-1]
    assert last[0].sum() == 0 and all(p[0].sum() > 0 for p in rec.afterstates[:-1])
    assert rec.winner_seat == rec.movers[-1]
    assert result_kind(last[None])[1][0] == rec.points


def test_random_games_follow_the_rules_and_records_replay():
    n = 40
    res = play_games(
        (RandomAgent(), RandomAgent()), [dice_rng(3, g) for g in range(n)], np.random.default_rng(3),
        a_seat=np.arange(n) % 2, record=True,
    )
    assert len(res.records) == n
    for g, rec in enumerate(res.records):
        _check_record(rec)
        assert len(rec.dice) == res.plies[g]
        assert res.winner[g] == (0 if rec.winner_seat == rec.a_seat else 1)
        assert res.points[g] == rec.points
    assert set(np.unique(res.points)) <= {1, 2, 3}
    # random play: gammons are common
    assert (res.points >= 2).mean() > 0.05


def test_passes_are_recorded_as_unchanged_positions():
    res = play_games(
        (RandomAgent(), RandomAgent()), [dice_rng(8, g) for g in range(60)], np.random.default_rng(8), record=True
    )
    passes = 0
    for rec in res.records:
        pos = rec.positions()
        same = (pos == rec.afterstates).all(axis=(1, 2))
        for k in np.flatnonzero(same):
            after, _ = afterstates(pos[k][None], rec.dice[k][None])
            assert len(after) == 1  # only when nothing is legal
        passes += same.sum()
    assert passes > 0


def test_same_seeds_same_games():
    def run():
        return play_games(
            (RandomAgent(), PubevalAgent()), [dice_rng(21, g) for g in range(30)], np.random.default_rng(5)
        )

    r1, r2 = run(), run()
    for f in ("winner", "points", "plies", "a_seat"):
        np.testing.assert_array_equal(getattr(r1, f), getattr(r2, f))


def test_mirrored_games_share_dice_and_selfplay_mirrors_exactly():
    n = 30
    agent = PubevalAgent()
    ids = np.repeat(np.arange(n), 2)
    res = play_games(
        (agent, PubevalAgent()), [dice_rng(4, int(i)) for i in ids], np.random.default_rng(0),
        a_seat=np.tile([0, 1], n), record=True,
    )
    for p in range(n):
        g1, g2 = res.records[2 * p], res.records[2 * p + 1]
        assert g1.opening == g2.opening
        k = min(len(g1.dice), len(g2.dice))
        np.testing.assert_array_equal(g1.dice[:k], g2.dice[:k])
        # the same deterministic bot on the same dice: the same game, with A and B swapped
        np.testing.assert_array_equal(g1.afterstates, g2.afterstates)
    pts = res.points_a.reshape(-1, 2)
    np.testing.assert_array_equal(pts[:, 0], -pts[:, 1])


def test_points_a_sign():
    r = GameResults(
        winner=np.array([0, 1, 1], np.int8), points=np.array([1, 2, 3], np.int8),
        plies=np.array([10, 20, 30], np.int32), a_seat=np.zeros(3, np.int8),
    )
    np.testing.assert_array_equal(r.points_a, [1, -2, -3])


class _Broken(Agent):
    name = "broken"

    def choose(self, boards, dice, rng):
        return boards[:, :, :5]


class _Stuck(Agent):
    """Never moves: the game cannot end."""

    name = "stuck"

    def choose(self, boards, dice, rng):
        return boards.copy()


def test_agent_with_wrong_output_shape_is_an_error():
    with pytest.raises(RuntimeError, match="broken"):
        play_games((_Broken(), RandomAgent()), [dice_rng(0, 0)], np.random.default_rng(0))


def test_max_plies_guard():
    with pytest.raises(RuntimeError, match="did not finish"):
        play_games((_Stuck(), _Stuck()), [dice_rng(0, 0)], np.random.default_rng(0), max_plies=50)


def test_checker_counts_conserved_through_a_game():
    res = play_games(
        (PubevalAgent(), RandomAgent()), [dice_rng(9, g) for g in range(10)], np.random.default_rng(9), record=True
    )
    for rec in res.records:
        for a in rec.afterstates:
            total_on = a.sum(axis=1)
            assert (total_on <= NUM_CHECKERS).all()
        # positions chain: the next position is the flipped afterstate
        np.testing.assert_array_equal(rec.positions()[1:], flip(rec.afterstates[:-1]))


def test_record_converts_to_notation_and_transcript():
    agent = PubevalAgent()
    res = play_games((agent, RandomAgent()), [dice_rng(1, g) for g in range(6)], np.random.default_rng(1), record=True)
    for rec in res.records:
        plays = rec.plays()
        assert len(plays) == len(rec.dice)
        assert all(isinstance(p, str) for p in plays)
        text = rec.transcript(("pubeval", "random"))
        lines = text.splitlines()
        assert len(lines) == len(plays) + 1
        assert lines[-1].split()[0] == ("pubeval" if rec.winner_seat == rec.a_seat else "random")


def test_record_notation_of_textbook_openings():
    textbook = {(3, 1): "8/5 6/5", (4, 2): "8/4 6/4", (6, 1): "13/7 8/7"}
    # games whose opening roll is 31, 42 or 61, won by seat 0 (pubeval's seat)
    games = [g for g in range(300) if (lambda d: d[0] > d[1] and (d[0], d[1]) in textbook)(opening_roll(dice_rng(6, g)))]
    assert len(games) >= 5
    res = play_games((PubevalAgent(), RandomAgent()), [dice_rng(6, g) for g in games], np.random.default_rng(0),
                     record=True)
    for rec in res.records:
        assert rec.movers[0] == rec.a_seat == 0
        assert rec.plays()[0] == textbook[tuple(int(d) for d in rec.dice[0])]


def test_record_with_illegal_afterstate_is_rejected():
    from bgai.errors import IllegalMoveError

    res = play_games((PubevalAgent(), PubevalAgent()), [dice_rng(2, 0)], np.random.default_rng(0), record=True)
    rec = res.records[0]
    rec.afterstates = rec.afterstates.copy()
    rec.afterstates[0] = starting_board()  # "no play" where plays are legal
    rec.afterstates[0, 0, 5] -= 1
    rec.afterstates[0, 0, 4] += 1  # 6/5 with a roll that is not a 1 ... or an incomplete play
    with pytest.raises(IllegalMoveError, match="ply 1"):
        rec.plays()
