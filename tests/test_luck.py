"""Luck-adjusted results (bgai.evaluate.luck, ``bgai eval --luck``): the luck of each roll recomputed one play at a
time, the variance it removes, the same figures on any number of workers, and the command line's errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bgai.cli import main
from bgai.core.dice import ROLL_WEIGHTS, ROLLS
from bgai.core.movegen import legal_plays
from bgai.evaluate.luck import game_luck, luck_judge, roll_values
from bgai.evaluate.series import build_agents, evaluate, play_unit


@pytest.fixture(scope="module")
def games():
    """40 recorded duplicate-dice games, bgai's default model (0-ply) against pubeval."""
    agents = build_agents("default", "pubeval", False)
    return play_unit(agents, 7, 0, 40, 40, True, record=True)


@pytest.fixture(scope="module")
def judge():
    return luck_judge("default")


def _value(judge, board, roll):
    """The judge's best play of one roll, found through legal_plays (not the batched afterstates)."""
    after = np.stack([p.afterstate for p in legal_plays(board, roll)])
    return float(judge.evaluate_afterstates(after).max())


def test_roll_values_match_the_plays_one_at_a_time(games, judge):
    boards = games.records[3].positions()[[0, 5, 17, 30]]
    values = roll_values(judge, boards)
    assert values.shape == (4, 21)
    for i, board in enumerate(boards):
        for r, (a, b) in enumerate(ROLLS):
            expected = _value(judge, board, (int(a), int(b)))
            assert values[i, r] == pytest.approx(expected, abs=1e-6)  # float32 nets: batches differ in the last bits


def test_game_luck_is_the_signed_sum_of_each_roll(games, judge):
    records = games.records[:4]
    luck = game_luck(records, judge)
    for g, rec in enumerate(records):
        total = 0.0
        for k, (board, dice, mover) in enumerate(zip(rec.positions(), rec.dice, rec.movers)):
            rolled = _value(judge, board, (int(dice[0]), int(dice[1])))
            if k == 0:  # the opening roll: its expectation over who moves first is 0
                mean = 0.0
            else:
                mean = sum(w * _value(judge, board, (int(a), int(b))) for (a, b), w in zip(ROLLS, ROLL_WEIGHTS))
            total += (rolled - mean) * (1 if mover == rec.a_seat else -1)
        assert luck[g] == pytest.approx(total, abs=1e-5)  # float32 nets: batches differ in the last bits
    assert np.all(np.abs(luck) < 6) and np.any(np.abs(luck) > 0.1)


def test_adjusted_results_keep_the_mean_and_lose_most_of_the_variance(games, judge):
    points = games.points_a.astype(float)
    adjusted = points - game_luck(games.records, judge)
    raw_pairs, adj_pairs = points.reshape(-1, 2).mean(1), adjusted.reshape(-1, 2).mean(1)
    assert adj_pairs.std() < 0.5 * raw_pairs.std()
    se = np.hypot(raw_pairs.std(ddof=1), adj_pairs.std(ddof=1)) / np.sqrt(raw_pairs.size)
    assert abs(adj_pairs.mean() - raw_pairs.mean()) < 4 * se


def test_series_with_luck_same_games_same_figures_on_two_workers():
    plain = evaluate("default", "pubeval", 64, 5, chunk_games=32)
    one = evaluate("default", "pubeval", 64, 5, chunk_games=32, luck="default")
    two = evaluate("default", "pubeval", 64, 5, chunk_games=32, luck="default", workers=2)
    assert one.ppg == plain.ppg and plain.luck_judge is None and plain.adjusted_ppg is None
    assert one.luck_judge == "default" and np.isfinite(one.adjusted_ci95)
    assert (two.ppg, two.adjusted_ppg, two.adjusted_ci95) == (one.ppg, one.adjusted_ppg, one.adjusted_ci95)
    assert one.adjusted_ci95 < one.ci95
    assert "luck_judge" not in plain.to_dict() and one.to_dict()["adjusted_ppg"] == one.adjusted_ppg
    judge = luck_judge("default")
    obj = evaluate("default", "pubeval", 64, 5, chunk_games=32, luck=judge)  # an agent object as the judge
    assert obj.adjusted_ppg == one.adjusted_ppg and obj.luck_judge == judge.name


def test_cli_luck_line_and_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["eval", "default", "pubeval", "--games", "20", "--seed", "3", "--luck", "default", "--no-progress",
                 "--json", str(out), "--save-games", str(tmp_path / "games")]) == 0
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert f"luck-adjusted ppg for default: {data['adjusted_ppg']:+.3f}" in text
    assert "luck judged by default" in text and data["luck_judge"] == "default"
    assert (tmp_path / "games").is_dir()


@pytest.mark.parametrize("argv, message", [
    (["--luck", "pubeval"], "luck judge 'pubeval' has no outcome probabilities"),
    (["--luck", "nosuch.pt"], "luck judge: "),
    (["--luck", "default:ply=1"], "searches at 1-ply; a judge evaluates at 0-ply"),
    (["--luck", "default", "--cube"], "--luck: for cubeless money games only"),
])
def test_cli_luck_errors(tmp_path, capsys, argv, message):
    assert main(["eval", "default", "pubeval", "--games", "20", "--no-progress", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bgai: error: ") and message in err[0]
