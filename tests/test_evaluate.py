"""The evaluator: duplicate and plain series, statistics, reproducibility across worker counts, ranked plays."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from bgai.agents.pubeval import PubevalAgent, is_race, pubeval_scores
from bgai.analysis.api import rank_plays, rank_plays_batch
from bgai.core.board import starting_board
from bgai.core.movegen import afterstates
from bgai.errors import AgentSpecError, BgaiError, CheckpointError
from bgai.evaluate.series import Z95, evaluate, summarize, write_json_atomic
from bgai.game.play import GameResults


def test_pubeval_crushes_random():
    rep = evaluate("pubeval", "random", 300, seed=1, chunk_games=100)
    assert rep.games == 300 and rep.mode == "duplicate"
    assert rep.ppg > 1.5
    assert rep.ppg - rep.ci95 > 1.0
    assert rep.a.win > 0.95 and rep.b.win == pytest.approx(1 - rep.a.win)
    assert rep.a.gammon > 0.3  # random play gets gammoned a lot
    assert rep.a.backgammon <= rep.a.gammon <= rep.a.win
    assert 30 < rep.avg_plies < 100


def test_same_seed_same_report_for_1_and_2_workers():
    kw = dict(games=80, seed=7, chunk_games=20)
    r1 = evaluate("racer", "random", workers=1, **kw)
    r2 = evaluate("racer", "random", workers=2, **kw)
    for field in ("ppg", "ci95", "avg_plies", "games"):
        assert getattr(r1, field) == getattr(r2, field)
    assert r1.a == r2.a and r1.b == r2.b
    assert r2.workers == 2
    r3 = evaluate("racer", "random", workers=1, games=80, seed=8, chunk_games=20)
    assert (r3.ppg, r3.avg_plies) != (r1.ppg, r1.avg_plies)


def test_selfplay_duplicate_pairs_cancel_exactly():
    # a deterministic bot against itself on mirrored dice plays each pair's two games identically
    rep = evaluate("pubeval", "pubeval", 100, seed=3)
    assert rep.ppg == 0.0 and rep.ci95 == 0.0
    assert rep.a.win == pytest.approx(0.5)


class _ContactOnlyPubeval(PubevalAgent):
    """pubeval with its contact weights in races too: a bot close to pubeval, as two checkpoints of one run are."""

    name = "pubeval-contact"

    def evaluate_plays(self, boards, after, src):
        return pubeval_scores(after, False)


def test_duplicate_dice_gives_a_smaller_confidence_interval_than_plain():
    # duplicate dice removes the luck the two bots share: the closer they play, the more it removes
    a, b = PubevalAgent(), _ContactOnlyPubeval()
    dup = evaluate(a, b, 400, seed=11, duplicate=True)
    plain = evaluate(a, b, 400, seed=11, duplicate=False)
    assert dup.mode == "duplicate" and plain.mode == "plain"
    assert dup.agent_b == "pubeval-contact"
    assert dup.ci95 < 0.5 * plain.ci95
    # both estimate the same edge: they agree within the plain interval
    assert abs(dup.ppg - plain.ppg) < plain.ci95


def test_summarize_statistics_by_hand():
    # two pairs: A wins 1 and loses 2 (pair mean -0.5), then wins 3 and wins 1 (pair mean 2)
    res = GameResults(
        winner=np.array([0, 1, 0, 0], np.int8), points=np.array([1, 2, 3, 1], np.int8),
        plies=np.array([50, 60, 70, 80], np.int32), a_seat=np.array([0, 1, 0, 1], np.int8),
    )
    dup = summarize(res, duplicate=True, agent_a="a", agent_b="b", seed=0, workers=1, seconds=2.0)
    assert dup.ppg == pytest.approx(0.75)
    sd_pairs = np.std([-0.5, 2.0], ddof=1)
    assert dup.stderr == pytest.approx(sd_pairs / math.sqrt(2))
    assert dup.ci95 == pytest.approx(Z95 * sd_pairs / math.sqrt(2))
    assert dup.a.win == pytest.approx(0.75) and dup.a.gammon == pytest.approx(0.25)
    assert dup.a.backgammon == pytest.approx(0.25)
    assert dup.b.win == pytest.approx(0.25) and dup.b.gammon == pytest.approx(0.25) and dup.b.backgammon == 0
    assert dup.avg_plies == 65 and dup.games_per_s == 2.0
    plain = summarize(res, duplicate=False, agent_a="a", agent_b="b", seed=0, workers=1, seconds=2.0)
    assert plain.ppg == pytest.approx(0.75)
    assert plain.stderr == pytest.approx(np.std([1, -2, 3, 1], ddof=1) / 2)


def test_report_json_and_table(tmp_path):
    rep = evaluate("pubeval", "racer", 20, seed=0)
    d = rep.to_dict()
    assert d["ci95_low"] == pytest.approx(rep.ppg - rep.ci95)
    assert set(d["a"]) == {"win", "gammon", "backgammon"}
    path = tmp_path / "r.json"
    write_json_atomic(str(path), d)
    assert json.loads(path.read_text())["games"] == 20
    assert os.listdir(tmp_path) == ["r.json"]  # no temporary file left behind
    table = rep.table()
    assert "pubeval vs racer" in table and "95% CI" in table and "gammon %" in table
    # one duplicate pair has no interval: said so, not '+- nan'
    one = evaluate("pubeval", "racer", 2, seed=0)
    assert math.isnan(one.ci95) and "ppg for pubeval: +0.000 (no interval)\n" in one.table() and "nan" not in one.table()
    from bgai.train.loop import eval_line

    line = eval_line({"ppg": 0.5, "ci95": float("nan"), "opponent": "pubeval", "games": 2, "games_trained": 9}, "game")
    assert line == "after 9 games: +0.500 (no interval) ppg against pubeval (2 duplicate-dice games)"
    # and the progress bar's note of the last evaluation
    from types import SimpleNamespace

    from bgai.train.loop import Console

    console = Console(False, SimpleNamespace(unit="game"), None)
    console.evaluation({"ppg": 0.5, "ci95": float("nan"), "opponent": "pubeval"}, 9)
    assert console.last_eval == "vs pubeval +0.500 (no interval) @ 9"
    console.evaluation({"ppg": 0.5, "ci95": 0.0625, "opponent": "pubeval"}, 9)
    assert console.last_eval == "vs pubeval +0.500 +- 0.062 @ 9"


@pytest.mark.parametrize(
    "kwargs, msg",
    [(dict(games=0), "positive"), (dict(games=7), "even"), (dict(games=10, workers=0), "workers"),
     (dict(games=-2), "positive")],
)
def test_bad_arguments(kwargs, msg):
    with pytest.raises(BgaiError, match=msg):
        evaluate("pubeval", "random", seed=0, **kwargs)


def test_bad_specs_fail_before_playing(tmp_path):
    with pytest.raises(AgentSpecError):
        evaluate("pubeval", "nobody", 10, seed=0)
    with pytest.raises(CheckpointError, match="missing.pt"):
        evaluate(str(tmp_path / "missing.pt"), "pubeval", 10, seed=0)


def test_rank_plays_pubeval_best_first_and_matches_choose():
    rng = np.random.default_rng(2)
    boards = np.broadcast_to(starting_board(), (21, 2, 25)).copy()
    dice = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)])
    ranked = rank_plays_batch(PubevalAgent(), boards, dice)
    chosen = PubevalAgent().choose(boards, dice, rng)
    for i, plays in enumerate(ranked):
        assert {p.score_kind for p in plays} == {"score"} and all(p.equity is None for p in plays)
        eq = [p.score for p in plays]  # pubeval's values are scores (not equities)
        assert eq == sorted(eq, reverse=True)
        np.testing.assert_array_equal(plays[0].afterstate, chosen[i])
        after, _ = afterstates(boards[i][None], dice[i][None])
        assert len(plays) == len(after)
        np.testing.assert_allclose(eq[0], pubeval_scores(plays[0].afterstate[None], is_race(boards[i][None]))[0])
        assert plays[0].probabilities is None


def test_rank_plays_with_probabilities():
    pytest.importorskip("gnubg_nn")
    from bgai.agents.gnubg import GnubgAgent
    from bgai.core.equity import cubeless_equity

    ranked = rank_plays(GnubgAgent(), starting_board(), (3, 1))
    assert len(ranked) == 16
    best = ranked[0]
    assert best.probabilities.shape == (5,)
    assert best.equity == pytest.approx(cubeless_equity(best.probabilities))
    # 8/5 6/5 is the best 31 opening at any level
    expected = starting_board()
    expected[0, [7, 5]] -= 1
    expected[0, 4] += 2
    np.testing.assert_array_equal(best.afterstate, expected)


def test_rank_plays_random_has_no_evaluation():
    from bgai.agents.random import RandomAgent

    with pytest.raises(AgentSpecError, match="no evaluation"):
        rank_plays(RandomAgent(), starting_board(), "31")
