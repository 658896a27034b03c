"""Trajectory labels (bgai.train.trajectory, bgai label --kind trajectory): one-trial rollouts of every position of
self-play games, checked against the look-ahead they are made of, and through the label folder into training."""

import json
import os

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.analysis.rollout import RolloutPolicy
from bgai.cli import main
from bgai.core.board import flip, starting_board
from bgai.core.dice import ROLL_WEIGHTS
from bgai.core.equity import cubeless_equity, swap_perspective
from bgai.errors import BgaiError
from bgai.train.labels import LabelError, LabelSettings, load_labels, make_labels
from bgai.train.supervised import DatasetError, check_targets, load_dataset
from bgai.train.trajectory import trajectory_labels

MODEL = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "bgai-td128.pt")


@pytest.fixture(scope="module")
def agent():
    return make_agent(MODEL + ":bearoff=db")


@pytest.fixture(scope="module")
def games(agent):
    return trajectory_labels(agent, 12, np.random.default_rng(5))


def test_each_label_is_the_next_ones_seen_by_the_other_side_less_the_luck_of_the_roll(agent, games):
    """label(t) = swap(label(t + 1)) - (value of the best play for the roll rolled - its mean over the 21 rolls),
    recomputed here from the look-ahead: the roll is the one whose best play leads to the next position."""
    boards, probs = games
    policy = RolloutPolicy(agent)
    p, best = policy.lookahead(boards[:-1])
    nxt = flip(best.reshape(-1, 2, 25)).reshape(len(boards) - 1, 21, 2, 25)
    checked = 0
    for k in range(len(boards) - 1):
        hit = np.flatnonzero((nxt[k] == boards[k + 1]).all(axis=(1, 2)))
        if not hit.size:  # the next row is the next game's first position (or the game ended in a bear-off)
            continue
        luck = p[k, hit[0]] - np.einsum("rk,r->k", p[k], ROLL_WEIGHTS)
        np.testing.assert_allclose(probs[k], swap_perspective(probs[k + 1][None])[0] - luck, atol=1e-6)
        checked += 1
    assert checked >= 0.9 * (len(boards) - 12 * 2)


def test_labels_are_unbiased_and_variance_reduced(agent, games):
    """On average the labels agree with the model's own 0-ply values (the net is nearly unbiased on its own
    self-play), and variance reduction keeps each within a few tenths (a game's bare result is +-1 or more)."""
    boards, probs = games
    assert len(boards) > 12 * 30
    assert not (boards == starting_board()).all(axis=(1, 2)).any()  # the opening position is not labelled
    diff = cubeless_equity(probs) - cubeless_equity(agent.probabilities(boards))
    assert abs(diff.mean()) < 0.05
    assert 0.03 < np.sqrt((diff ** 2).mean()) < 0.35
    assert probs[:, 0].min() > -0.5 and probs[:, 0].max() < 1.5


def test_same_seed_same_labels_and_exploring_drops_the_positions_before_it(agent, games):
    b2, p2 = trajectory_labels(agent, 12, np.random.default_rng(5))
    np.testing.assert_array_equal(b2, games[0])
    np.testing.assert_array_equal(p2, games[1])
    b3, _ = trajectory_labels(agent, 12, np.random.default_rng(6))
    assert len(b3) != len(b2) or (b3 != b2).any()
    # an exploring play in each of the first 20 plies: a game's positions before ply 20 are not labelled (about
    # 19 fewer labels a game than plain self-play games of the same lengths would give)
    plain, _ = trajectory_labels(agent, 20, np.random.default_rng(7))
    wild, _ = trajectory_labels(agent, 20, np.random.default_rng(7), explore=0.999999, explore_plies=20, candidates=3)
    assert len(plain) - len(wild) > 20 * 10


def test_a_trajectory_label_folder_trains_unclipped(tmp_path, capsys):
    out = tmp_path / "traj"
    assert main(["label", str(out), "--model", MODEL + ":bearoff=db", "--kind", "trajectory", "--games", "6",
                 "--keep", "1", "--shards", "2", "--classes", "contact,crashed", "--explore", "0.1",
                 "--explore-plies", "8", "--candidates", "4", "--seed", "3"]) == 0
    meta = json.loads((out / "dataset.json").read_text())["settings"]
    assert meta["kind"] == "trajectory" and meta["explore_plies"] == 8 and meta["candidates"] == 4
    d = load_labels(str(out))
    assert len(d) > 100 and np.isnan(d.std_errors).all() and set(np.unique(d.classes)) <= {3, 4}
    # resumable: the same command makes nothing new, and the shards are a function of the seed
    assert main(["label", str(out), "--model", MODEL + ":bearoff=db", "--kind", "trajectory", "--games", "6",
                 "--keep", "1", "--shards", "2", "--classes", "contact,crashed", "--explore", "0.1",
                 "--explore-plies", "8", "--candidates", "4", "--seed", "3"]) == 0
    assert "0 shard(s) made" in capsys.readouterr().out
    ds = load_dataset(str(out))
    np.testing.assert_array_equal(ds.targets, d.probs)  # not clipped into [0, 1]
    assert (d.probs < 0).any() or (d.probs > 1).any()


def test_trajectory_settings_and_targets_are_checked(tmp_path, capsys):
    with pytest.raises(LabelError, match="trajectory labels come from their own self-play"):
        make_labels(str(tmp_path / "a"), LabelSettings(model=MODEL, kind="trajectory", disagree=0.1), 1)
    with pytest.raises(LabelError, match="explore plies"):
        make_labels(str(tmp_path / "b"), LabelSettings(model=MODEL, kind="ply1", explore_plies=3), 1)
    assert main(["label", str(tmp_path / "c"), "--model", MODEL, "--kind", "trajectory", "--trials", "5"]) == 2
    assert "trajectory labels" in capsys.readouterr().err
    with pytest.raises(BgaiError, match="need an agent with probabilities"):
        trajectory_labels(make_agent("pubeval"), 1, np.random.default_rng(0))
    np.testing.assert_array_equal(check_targets(np.array([[1.2, 0.5, 0, -0.1, 0]]), unbiased=True),
                                  np.array([[1.2, 0.5, 0, -0.1, 0]], np.float32))
    with pytest.raises(DatasetError, match=r"row 0: .* not unbiased estimates in \[-2, 3\]"):
        check_targets(np.array([[4.0, 0.5, 0, 0, 0]]), unbiased=True)
    with pytest.raises(DatasetError, match="not probabilities in"):
        check_targets(np.array([[1.2, 0.5, 0, 0, 0]]))


def test_generations_take_trajectory_labels():
    from bgai.train.config import ConfigError
    from bgai.train.generations import LabelsSection

    sec = LabelsSection(kind="trajectory", keep=1.0, explore=0.1, explore_plies=12, candidates=4)
    sec.validate()
    s = sec.settings("m.pt", 5)
    assert (s.kind, s.explore_plies, s.candidates, s.seed) == ("trajectory", 12, 4, 5)
    with pytest.raises(ConfigError, match="explore plies"):
        LabelsSection(kind="ply2", explore_plies=12).validate()
