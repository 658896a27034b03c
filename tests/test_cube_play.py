"""Cubeful money sessions and matches through the game runner (bgai.game.play_cube)."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.errors import BgaiError, MatchStateError
from bgai.evaluate.cubeful import evaluate_cubeful
from bgai.game.cube import CubeState
from bgai.game.match import MatchRules
from bgai.game.play import dice_rng, play_games
from bgai.game.play_cube import CubePolicy, JanowskiCubePolicy, NeverDoubleAlwaysTake, cube_policy_for, play_cubeful


class Scripted(CubePolicy):
    """Always/never double (while the cube is below ``upto``), always/never take; records what it is asked."""

    def __init__(self, double: bool, take: bool, upto: int = 1 << 20) -> None:
        self.double, self.take, self.upto = double, take, upto
        self.offered: list[CubeState] = []
        self.answered: list[CubeState] = []

    def offer(self, boards, states):
        self.offered.extend(states)
        return np.array([self.double and s.cube_value < self.upto for s in states], dtype=bool)

    def accept(self, boards, states):
        self.answered.extend(states)
        return np.full(len(states), self.take)


@pytest.fixture(scope="module")
def pubeval():
    return make_agent("pubeval")


def _rngs(seed, n):
    return [dice_rng(seed, g) for g in range(n)]


def test_policy_choice():
    assert isinstance(cube_policy_for(make_agent("pubeval")), NeverDoubleAlwaysTake)
    gnubg_nn = pytest.importorskip("gnubg_nn")
    del gnubg_nn
    assert isinstance(cube_policy_for(make_agent("gnubg")), JanowskiCubePolicy)


def test_no_cube_and_no_jacoby_is_the_cubeless_game(pubeval):
    n = 40
    seats = np.arange(n) % 2
    cubeless = play_games((pubeval, pubeval), _rngs(3, n), np.random.default_rng(0), a_seat=seats)
    res = play_cubeful((pubeval, pubeval), MatchRules.money(jacoby=False), _rngs(3, n), np.random.default_rng(0),
                       a_seat=seats, policies=(NeverDoubleAlwaysTake(), NeverDoubleAlwaysTake()))
    order = np.argsort(res.game_unit)
    pts = np.where(res.game_winner == 0, res.game_points, -res.game_points)[order]
    np.testing.assert_array_equal(pts, cubeless.points_a)
    np.testing.assert_array_equal(res.game_plies[order], cubeless.plies)
    assert (res.game_cube == 1).all() and res.doubles.sum() == 0


def test_jacoby_without_a_turned_cube_scores_every_game_one(pubeval):
    res = play_cubeful((pubeval, pubeval), MatchRules.money(jacoby=True), _rngs(4, 30), np.random.default_rng(0),
                       policies=(NeverDoubleAlwaysTake(), NeverDoubleAlwaysTake()))
    assert (res.game_points == 1).all()
    assert (res.game_kind >= 2).any()  # some gammons were played on the board but counted as 1


def test_double_pass_ends_the_game_for_one_point(pubeval):
    pol = Scripted(double=True, take=False)
    res = play_cubeful((pubeval, pubeval), MatchRules.money(), _rngs(5, 20), np.random.default_rng(0),
                       policies=(pol, pol))
    # the opening roll is played without a cube decision; the next player doubles and the opponent passes
    assert (res.game_plies == 1).all()
    assert (res.game_kind == 0).all() and (res.game_points == 1).all() and (res.game_cube == 1).all()
    assert res.doubles.sum() == 20 and res.passes.sum() == 20 and res.takes.sum() == 0
    # the winner is the player who did not make the opening play
    assert (res.doubles.sum(axis=1) == 1).all()


def test_double_take_redoubles_alternate_and_score_cube_times_result(pubeval):
    pol = Scripted(double=True, take=True)
    res = play_cubeful((pubeval, pubeval), MatchRules.money(jacoby=False), _rngs(6, 20), np.random.default_rng(0),
                       policies=(pol, pol))
    per_unit = res.doubles.sum(axis=1)
    np.testing.assert_array_equal(res.game_cube, 2 ** per_unit[res.game_unit])
    np.testing.assert_array_equal(res.game_points, res.game_cube * res.game_kind)
    assert res.game_cube.max() >= 64  # no cube limit: the engine goes on doubling
    # ownership: after the first double the players alternate, so the counts differ by at most one
    assert (np.abs(res.doubles[:, 0] - res.doubles[:, 1]) <= 1).all()
    for s in pol.offered:
        assert s.owner in (-1, 0)  # asked only with a centred cube or its own


def test_cube_limit_in_a_session(pubeval):
    pol = Scripted(double=True, take=True)
    res = play_cubeful((pubeval, pubeval), MatchRules.money(cube_limit=8), _rngs(7, 12), np.random.default_rng(0),
                       policies=(pol, pol))
    assert res.game_cube.max() == 8 and (res.doubles.sum(axis=1) <= 3).all()


def test_matches_play_to_the_end_with_crawford(pubeval):
    pol = Scripted(double=False, take=True)  # points one game at a time: many Crawford and post-Crawford games
    res = play_cubeful((pubeval, pubeval), MatchRules.match(5), _rngs(8, 16), np.random.default_rng(0),
                       policies=(pol, pol))
    for u in range(16):
        score = res.unit_score[u]
        assert max(score) >= 5 and min(score) < 5
        assert res.unit_winner[u] == int(np.argmax(score))
    assert not any(s.crawford for s in pol.offered)  # nobody is asked to double in the Crawford game
    post = [s for s in pol.offered if s.post_crawford]
    assert post and all(s.score[0] < 4 for s in post)  # post-Crawford only the trailer is asked
    # game points add up to the final scores
    total = np.zeros((16, 2), dtype=np.int64)
    np.add.at(total, (res.game_unit, res.game_winner), res.game_points)
    np.testing.assert_array_equal(total, res.unit_score)


def test_same_seed_same_results_and_report(pubeval):
    r1 = evaluate_cubeful("pubeval", "random", 20, 11, rules=MatchRules.match(3), chunk=10)
    r2 = evaluate_cubeful("pubeval", "random", 20, 11, rules=MatchRules.match(3), chunk=10)
    assert r1.to_dict() | {"seconds": 0} == r2.to_dict() | {"seconds": 0}
    assert r1.mode == "match" and r1.units == 20 and r1.games >= 20
    assert 0.0 <= r1.match_win <= 1.0 and r1.match_win > 0.5  # pubeval beats random
    text = r1.table()
    assert "matches to 3 points" in text and "match wins for pubeval" in text
    assert r1.to_dict()["ppg"] is None


def test_money_report_with_janowski_policies():
    pytest.importorskip("gnubg_nn")
    r = evaluate_cubeful("gnubg", "pubeval", 40, 1)
    assert r.mode == "money" and r.units == 40 and r.games == 40
    assert r.a.doubles > 0 and r.b.doubles == 0 and r.b.passes == 0 and r.a.takes + r.a.passes == r.b.doubles
    assert r.ppg > 0.5 and r.avg_cube > 1.0
    assert "ppg for gnubg" in r.table()


def test_bad_series_arguments():
    with pytest.raises(BgaiError, match="even"):
        evaluate_cubeful("pubeval", "random", 3, 1)
    with pytest.raises(BgaiError, match="positive"):
        evaluate_cubeful("pubeval", "random", 0, 1)
    with pytest.raises(MatchStateError, match="longer than"):
        evaluate_cubeful("pubeval", "random", 2, 1, rules=MatchRules.match(65))  # the MET covers 64 points
    with pytest.raises(MatchStateError, match="at least 1 point"):
        MatchRules.match(0)
