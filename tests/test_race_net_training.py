"""What a race net on GNU Backgammon's race inputs needs from labelling and supervised training: label games with
exploration (random plays), several datasets in one run, and a class net started fresh with its own encoding."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from test_bundle import net_for, random_positions

from bgai.agents.registry import make_agent
from bgai.cli import main
from bgai.core.board import validation_errors
from bgai.core.movegen import afterstates
from bgai.core.position_id import encode_position_ids
from bgai.errors import ConfigError
from bgai.model.bundle import ModelBundle, bundle_file, load_bundle, save_checkpoint
from bgai.model.classes import CLASS_RACE, classify
from bgai.train.config import TrainConfig
from bgai.train.labels import LabelError, LabelSettings, make_labels, sample_positions
from bgai.train.run import train
from bgai.train.supervised import SupervisedTrainer, load_dataset, load_datasets, save_dataset

MODEL = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "bgai-td128.pt")


_AGENT = []


def _agent():
    if not _AGENT:
        _AGENT.append(make_agent(MODEL))
    return _AGENT[0]


def _games_positions(settings: LabelSettings) -> np.ndarray:
    return sample_positions(_agent(), settings, 0)


def _successors(board: np.ndarray) -> set[str]:
    """Position IDs (next player's view) of every play of every roll from ``board``."""
    dice = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)])
    after, _ = afterstates(np.repeat(board[None], len(dice), axis=0), dice)
    return set(encode_position_ids(after[:, ::-1]))


def test_exploring_label_games_make_other_legal_games_and_record_the_setting(tmp_path):
    base = dict(model=MODEL, kind="ply1", seed=7, games_per_shard=3, keep=1.0)
    plain = _games_positions(LabelSettings(**base))
    again = _games_positions(LabelSettings(**base, explore=0.0))
    np.testing.assert_array_equal(plain, again)  # explore 0: the self-play as before
    wild = _games_positions(LabelSettings(**base, explore=0.5))
    np.testing.assert_array_equal(wild, _games_positions(LabelSettings(**base, explore=0.5)))  # seeded
    assert len(wild) > 30 and all(m is None for m in validation_errors(wild))
    assert wild.shape != plain.shape or not np.array_equal(wild, plain)
    # each position of a game is reached from the one before by a legal play of some roll (games are in order,
    # keep 1.0: consecutive rows of one game are consecutive plies; a new game starts where that fails)
    linked = sum(encode_position_ids(wild[i + 1 : i + 2])[0] in _successors(wild[i]) for i in range(40))
    assert linked >= 37  # at most the 2 game starts in the first 41 rows are not linked
    # with explore 0.5 the games leave the model's own choices: some of its plays are not the model's
    agent = _agent()
    rng = np.random.default_rng(0)
    differ = 0
    for i in range(40):
        nxt = encode_position_ids(wild[i + 1 : i + 2])[0]
        if nxt not in _successors(wild[i]):
            continue
        dice = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)])
        own = agent.choose(np.repeat(wild[i][None], len(dice), axis=0), dice, rng)
        differ += nxt not in set(encode_position_ids(own[:, ::-1]))
    assert differ >= 5
    with pytest.raises(LabelError, match="explore must be in"):
        LabelSettings(**base, explore=1.0).check()
    # recorded only when given, so folders made before the setting existed resume unchanged
    assert "explore" not in LabelSettings(**base).record()
    make_labels(str(tmp_path / "w"), LabelSettings(**base, explore=0.25, classes=("race",)), 1)
    settings = json.loads((tmp_path / "w" / "dataset.json").read_text())["settings"]
    assert settings["explore"] == 0.25
    # the CLI option, and a resume with other exploration is refused
    assert main(["label", str(tmp_path / "w"), "--model", MODEL, "--kind", "ply1", "--seed", "7", "--games", "3",
                 "--keep", "1", "--classes", "race", "--shards", "1", "--explore", "0.25"]) == 0
    assert main(["label", str(tmp_path / "w"), "--model", MODEL, "--kind", "ply1", "--seed", "7", "--games", "3",
                 "--keep", "1", "--classes", "race", "--shards", "1", "--explore", "0.2"]) == 2


def test_exploring_plays_by_other_agents_follow_those_agents_and_are_recorded(tmp_path):
    base = dict(model=MODEL, kind="ply1", seed=11, games_per_shard=2, keep=1.0)
    # one explorer 'random' draws exactly as the default (uniformly random plays)
    np.testing.assert_array_equal(_games_positions(LabelSettings(**base, explore=0.5)),
                                  _games_positions(LabelSettings(**base, explore=0.5, explorers=("random",))))
    # nearly every play by pubeval: the games are pubeval's (each next position is pubeval's play of some roll)
    games = _games_positions(LabelSettings(**base, explore=0.99, explorers=("pubeval",)))
    np.testing.assert_array_equal(games, _games_positions(LabelSettings(**base, explore=0.99,
                                                                        explorers=("pubeval",))))
    pubeval, rng = make_agent("pubeval"), np.random.default_rng(0)
    dice = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)])
    linked = by_pubeval = 0
    for i in range(40):
        nxt = encode_position_ids(games[i + 1 : i + 2])[0]
        if nxt not in _successors(games[i]):
            continue  # a new game starts
        linked += 1
        own = pubeval.choose(np.repeat(games[i][None], len(dice), axis=0), dice, rng)
        by_pubeval += nxt in set(encode_position_ids(own[:, ::-1]))
    assert linked >= 37 and by_pubeval >= linked - 2
    # two explorers: both play (the mix differs from either alone), seeded
    mix = LabelSettings(**base, explore=0.6, explorers=("racer", "random"))
    np.testing.assert_array_equal(_games_positions(mix), _games_positions(mix))
    for e in ("racer", "random"):
        alone = _games_positions(LabelSettings(**base, explore=0.6, explorers=(e,)))
        assert alone.shape != _games_positions(mix).shape or not np.array_equal(alone, _games_positions(mix))
    with pytest.raises(LabelError, match="give explore > 0"):
        LabelSettings(**base, explorers=("pubeval",)).check()
    with pytest.raises(LabelError, match="distinct agent specs"):
        LabelSettings(**base, explore=0.1, explorers=("pubeval", "pubeval")).check()
    with pytest.raises(LabelError, match="an empty agent name"):
        LabelSettings(**base, explore=0.1, explorers=("pubeval", "")).check()
    assert "explorers" not in LabelSettings(**base, explore=0.1).record()
    assert main(["label", str(tmp_path / "p"), "--model", MODEL, "--seed", "7", "--games", "2", "--shards", "1",
                 "--explore", "0.3", "--explore-with", "pubeval,random"]) == 0
    settings = json.loads((tmp_path / "p" / "dataset.json").read_text())["settings"]
    assert settings["explorers"] == ["pubeval", "random"] and settings["explore"] == 0.3
    assert main(["label", str(tmp_path / "q"), "--model", MODEL, "--shards", "1", "--explore", "0.3",
                 "--explore-with", "nosuchbot"]) == 2


def test_candidate_labels_are_the_best_plays_afterstates_of_a_drawn_roll_turned_to_the_opponent(tmp_path):
    base = dict(model=MODEL, kind="ply1", seed=13, games_per_shard=2, keep=0.5)
    sampled = _games_positions(LabelSettings(**base))
    k = 3
    cand = _games_positions(LabelSettings(**base, candidates=k))
    np.testing.assert_array_equal(cand, _games_positions(LabelSettings(**base, candidates=k)))  # seeded
    assert all(m is None for m in validation_errors(cand))
    # by hand: the roll of each sampled position from the candidates' own stream, its plays ranked by the
    # model's 0-ply equity, the best k turned to the opponent's view; repeats and finished games left out
    rng = np.random.default_rng(np.random.SeedSequence(13, spawn_key=(7, 0)))
    dice = rng.integers(1, 7, size=(len(sampled), 2))
    agent = _agent()
    want, seen = [], set()
    for board, roll in zip(sampled, dice):
        after, _ = afterstates(board[None], roll[None])
        eq = agent.evaluate_afterstates(after)
        for j in np.argsort(-eq, kind="stable")[:k]:
            b = after[j][::-1]
            pid = encode_position_ids(b[None])[0]
            if pid not in seen and b.sum() > 0 and b[0].sum() > 0 and b[1].sum() > 0:
                seen.add(pid)
                want.append(pid)
    assert encode_position_ids(cand) == want
    assert len(cand) > 2 * len(sampled)  # most positions have 3 plays or more
    # classes test on the afterstates: every label of a race job is a race position
    race = _games_positions(LabelSettings(**base, candidates=k, classes=("race",)))
    assert set(encode_position_ids(race)) <= set(want)
    assert (classify(race) == CLASS_RACE).all() and (classify(cand) != CLASS_RACE).any()
    with pytest.raises(LabelError, match="candidates must be in 0..64"):
        LabelSettings(**base, candidates=-1).check()
    assert "candidates" not in LabelSettings(**base).record()
    assert main(["label", str(tmp_path / "c"), "--model", MODEL, "--seed", "13", "--games", "2", "--keep", "0.5",
                 "--shards", "1", "--candidates", "3"]) == 0
    settings = json.loads((tmp_path / "c" / "dataset.json").read_text())["settings"]
    assert settings["candidates"] == 3
    assert main(["label", str(tmp_path / "c"), "--model", MODEL, "--seed", "13", "--games", "2", "--keep", "0.5",
                 "--shards", "1", "--candidates", "2"]) == 2  # a resume with other candidates is refused


def _config(data, **sup) -> TrainConfig:
    s = {"data": data, "epochs": 3, "batch_size": 32, "patience": 0, "lr": 3e-3, "lr_end": 3e-4}
    s.update(sup)
    return TrainConfig.from_dict({
        "algorithm": "supervised", "model": {"encoding": "race", "hidden": [6]},
        "run": {"seed": 2, "eval_every": 0, "checkpoint_every": 0},
        "supervised": s,
    })


def test_a_fresh_race_net_on_race_inputs_beside_a_net_of_other_inputs_and_several_datasets(tmp_path):
    boards = random_positions(1500, 5)
    teacher_net, tenc = net_for("tesauro198", (6,), 9, scale=2.0)
    teacher = ModelBundle.single(teacher_net, tenc)
    save_dataset(tmp_path / "a.npz", boards[:900], teacher.probabilities(boards[:900]))
    save_dataset(tmp_path / "b.npz", boards[900:], teacher.probabilities(boards[900:]))
    both = load_datasets([str(tmp_path / "a.npz"), str(tmp_path / "b.npz")])
    np.testing.assert_array_equal(both.boards, boards)
    np.testing.assert_array_equal(both.targets, np.concatenate([load_dataset(tmp_path / "a.npz").targets,
                                                                load_dataset(tmp_path / "b.npz").targets]))
    start, enc = net_for("tesauro198", (5,), 3)
    one = ModelBundle.single(start, enc, {"algorithm": "td"})
    save_checkpoint(bundle_file(one), tmp_path / "one.pt")
    data = [str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]
    # a copy of the tesauro198 net cannot become a race-input net
    with pytest.raises(ConfigError, match="encoding, hidden, activation"):
        SupervisedTrainer(_config(data, net="race", warm_start=str(tmp_path / "one.pt")))
    with pytest.raises(ConfigError, match="'init' must be"):
        _config(data, init="warm")
    with pytest.raises(ConfigError, match="non-empty list of paths"):
        _config([], net="race")
    cfg = _config(data, net="race", init="fresh", warm_start=str(tmp_path / "one.pt"))
    tr = SupervisedTrainer(cfg)
    race = one.classify(boards) == CLASS_RACE
    assert tr.n_train + tr.n_val == int(race.sum()) > 50  # both files, race positions only
    assert tr.entry.encoder.name == "race" and tr.entry.net.spec.hidden == (6,) and tr.x_train.shape[1] == 214
    loss0 = tr.validation_loss()
    res = train(cfg, str(tmp_path / "run"), progress=False, tensorboard=False, evaluate=False)
    out, _ = load_bundle(res.last_path)
    assert out.names() == ["all", "race"] and out.get("race").encoder.name == "race"
    rec = out.get("race").record
    assert rec["data"] == ["a.npz", "b.npz"] and rec["best_validation_loss"] < loss0
    p_out, p_one = out.probabilities(boards), one.probabilities(boards)
    np.testing.assert_allclose(p_out[~race], p_one[~race], rtol=0, atol=1e-6)  # other classes: the old net
    # race positions: the new net's own values (race inputs), nearer the teacher than the start was
    gap_out = np.abs(p_out[race] - teacher.probabilities(boards[race])).mean()
    gap_one = np.abs(p_one[race] - teacher.probabilities(boards[race])).mean()
    assert gap_out < gap_one
    # and a run warm-started from that bundle continues its race net (the model section agrees now)
    save_checkpoint(bundle_file(out), tmp_path / "distilled.pt")
    tr2 = SupervisedTrainer(_config(str(tmp_path / "a.npz"), net="race", warm_start=str(tmp_path / "distilled.pt")))
    assert tr2.entry.encoder.name == "race"
    np.testing.assert_allclose(tr2.bundle().probabilities(boards), p_out, rtol=0, atol=1e-6)
