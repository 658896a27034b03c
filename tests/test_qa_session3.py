"""Regression tests for the fresh-clone QA pass at the end of session 3 (each failed before its fix)."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.cli import main
from bgai.core.board import starting_board
from bgai.errors import BgaiError, ConfigError
from bgai.evaluate.series import MAX_SERIES, check_series


def test_huge_series_is_refused_before_planning(capsys):
    with pytest.raises(BgaiError, match="at most 100,000,000"):
        check_series(10**12, duplicate=True, workers=1, chunk=2, seed=0)
    assert main(["eval", "pubeval", "racer", "--games", str(10**12), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "at most 100,000,000" in err and len(err.strip().splitlines()) == 1
    check_series(MAX_SERIES, duplicate=True, workers=1, chunk=2, seed=0)  # the limit itself is fine


def test_absurd_training_length_is_a_config_error():
    from bgai.train.config import RunConfig

    with pytest.raises(ConfigError, match="'games' must be <="):
        RunConfig(games=int(1e30)).validate()


def test_rollout_probabilities_stay_in_0_1_and_cube_ranking_works(capsys):
    from bgai.agents.registry import make_agent
    from bgai.analysis.rollout import rollout_plays

    res = rollout_plays(make_agent("checkpoints/bgai-td128.pt"), starting_board(), (3, 1), trials=36, candidates=3,
                        seed=0)
    for p in res.plays:
        clipped = p.result.clipped_probabilities()
        assert np.all(clipped >= 0) and np.all(clipped <= 1)
        assert all(0 <= v <= 1 for v in p.result.to_dict()["probabilities"].values())
    assert main(["rollout", "4HPwATDgc/ABMA", "31", "--agent", "checkpoints/bgai-td128.pt", "--trials", "36",
                 "--candidates", "3", "--cube"]) == 0
    assert "ranked by cubeful equity" in capsys.readouterr().out


def test_a_perfect_match_record_is_not_a_certainty():
    from bgai.evaluate.cubeful import evaluate_cubeful
    from bgai.game.match import MatchRules

    r = evaluate_cubeful("pubeval", "random", 6, 1, rules=MatchRules.match(3))
    assert r.match_win == 1.0 and r.match_win_ci95 > 0.2  # 3 pairs: Wilson's floor 3.84 / (3 + 3.84) = 0.56


def test_play_save_destination_checked_first(capsys):
    assert main(["play", "--save", "/nonexistent-folder/x.mat"]) == 2
    assert "does not exist" in capsys.readouterr().err
