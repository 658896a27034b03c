"""Label jobs (bgai.train.labels): shards are pure functions of (model, settings, seed, shard index), resumable,
and hold the labeller's real values."""

from __future__ import annotations

import os

import numpy as np
import pytest

from bgai.agents.registry import make_agent
from bgai.cli import main
from bgai.core.position_id import decode_position_ids, encode_position_ids
from bgai.model.classes import classify
from bgai.train.labels import LabelError, LabelSettings, load_labels, make_labels

MODEL = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "bgai-td128.pt")


def _settings(**kw):
    base = dict(model=MODEL, kind="ply1", seed=3, games_per_shard=6, keep=0.2)
    base.update(kw)
    return LabelSettings(**base)


def _shard(folder, i):
    with np.load(os.path.join(folder, f"shard-{i:05d}.npz")) as z:
        return {k: z[k] for k in z.files if k != "meta"}


def test_labels_are_the_labellers_values_and_reproducible(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert make_labels(str(a), _settings(), 2) == [0, 1]
    assert make_labels(str(b), _settings(), 2, workers=2) in ([0, 1], [1, 0])
    for i in range(2):
        sa, sb = _shard(a, i), _shard(b, i)
        assert sa.keys() == sb.keys()
        for k in sa:
            np.testing.assert_array_equal(sa[k], sb[k])
    d = load_labels(str(a))
    assert len(d) > 20
    agent = make_agent(MODEL).at_ply(1)
    np.testing.assert_allclose(d.probs, agent.probabilities(d.boards), atol=1e-6)
    assert np.all(d.std_errors == 0)
    np.testing.assert_array_equal(d.classes, classify(d.boards))
    ids = np.concatenate([_shard(a, i)["position_ids"] for i in range(2)])
    np.testing.assert_array_equal(decode_position_ids(list(ids)), d.boards)
    # another seed gives other positions
    c = tmp_path / "c"
    make_labels(str(c), _settings(seed=4), 1)
    assert not np.array_equal(_shard(c, 0)["boards"][:5], _shard(a, 0)["boards"][:5])


def test_resume_makes_only_missing_shards_and_refuses_other_settings(tmp_path):
    f = tmp_path / "d"
    make_labels(str(f), _settings(), 3)
    before = _shard(f, 1)
    os.remove(f / "shard-00001.npz")
    assert make_labels(str(f), _settings(), 3) == [1]
    after = _shard(f, 1)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    assert make_labels(str(f), _settings(), 3) == []
    with pytest.raises(LabelError, match="other settings"):
        make_labels(str(f), _settings(keep=0.5), 3)


def test_bad_settings_are_one_line_errors(tmp_path, capsys):
    with pytest.raises(LabelError, match="keep must be in"):
        make_labels(str(tmp_path / "x"), _settings(keep=0), 1)
    with pytest.raises(LabelError, match="rollout labels need trials"):
        make_labels(str(tmp_path / "x"), _settings(kind="rollout"), 1)
    assert main(["label", str(tmp_path / "y"), "--model", MODEL, "--keep", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgai: error:") and "keep must be in" in err and "\n" not in err


def test_batched_rollout_labels_are_per_position_rollouts_of_the_shards_dice(tmp_path):
    from bgai.analysis.rollout import rollout_position
    from bgai.train.labels import shard_seed

    s = _settings(kind="rollout", trials=36, truncate=4, games_per_shard=2, keep=0.1)
    make_labels(str(tmp_path / "r"), s, 1)
    d = load_labels(str(tmp_path / "r"))
    assert d.settings["batched"] is True
    assert len(d) >= 3 and np.all(d.std_errors >= 0) and np.any(d.std_errors > 0)
    agent = make_agent(MODEL)
    for k in (0, len(d) // 2, len(d) - 1):  # each label: an ordinary rollout with the shard's seed
        r = rollout_position(agent, d.boards[k], trials=36, truncate=4, seed=shard_seed(3, 0))
        np.testing.assert_allclose(d.probs[k], r.probabilities, atol=1e-6)
        np.testing.assert_allclose(d.std_errors[k], r.std_errors, atol=1e-6)
    # same seed, same shard, bit for bit
    make_labels(str(tmp_path / "r2"), s, 1)
    a, b = _shard(tmp_path / "r", 0), _shard(tmp_path / "r2", 0)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert shard_seed(3, 0) != shard_seed(3, 1) and shard_seed(3, 0) != shard_seed(4, 0)


def test_rollout_positions_is_rollout_position_per_root():
    from bgai.analysis.rollout import rollout_position, rollout_positions
    from bgai.core.position_id import decode_position_ids
    from bgai.errors import InvalidPositionError

    agent = make_agent(MODEL)
    boards = decode_position_ids(["4HPwATDgc/ABMA", "0PPgAyDgc/ABMA", "AN/3AIBtmwMAAA"])  # contact, contact, race
    r = rollout_positions(agent, boards, trials=24, truncate=3, seed=11, max_rows=48)  # 2 roots per batch
    assert r.probabilities.shape == r.std_errors.shape == (3, 5) and r.settings.variance_reduction
    for k in range(3):
        one = rollout_position(agent, boards[k], trials=24, truncate=3, seed=11)
        # the same plays and dice; the net's float32 values may differ by rounding with the batch's size
        np.testing.assert_allclose(r.probabilities[k], one.probabilities, atol=1e-7)
        np.testing.assert_allclose(r.std_errors[k], one.std_errors, atol=1e-7)
        assert abs(r.equity[k] - one.equity) < 1e-7
    over = boards[:1].copy()
    over[0, 1] = 0
    with pytest.raises(InvalidPositionError, match="position 1 is a finished game"):
        rollout_positions(agent, np.concatenate([boards[:1], over]), trials=2)


def test_old_scheme_datasets_resume_with_their_own_scheme(tmp_path):
    import json
    import shutil

    from bgai.analysis.rollout import rollout_position
    from bgai.train.labels import position_seed

    f = tmp_path / "old"
    s = _settings(kind="rollout", trials=36, truncate=4, games_per_shard=2, keep=0.05)
    make_labels(str(f), LabelSettings(**{**s.__dict__, "batched": False}), 2)
    meta = json.loads((f / "dataset.json").read_text())
    assert "batched" not in meta["settings"] and "classes" not in meta["settings"]  # as the old format wrote it
    before = _shard(f, 1)
    os.remove(f / "shard-00001.npz")
    assert make_labels(str(f), s, 2) == [1]  # settings without a scheme: the folder's own
    after = _shard(f, 1)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    r = rollout_position(make_agent(MODEL), after["boards"][0], trials=36, truncate=4,
                         seed=position_seed(3, after["boards"][0]))
    np.testing.assert_allclose(after["probs"][0], r.probabilities, atol=1e-6)
    with pytest.raises(LabelError, match="other settings"):
        make_labels(str(f), LabelSettings(**{**s.__dict__, "batched": True}), 2)
    # the committed dataset made by the per-position scheme still matches its settings (nothing left to make)
    src = os.path.join(os.path.dirname(__file__), "..", "data", "labels", "td128-rollout144")
    g = tmp_path / "td128-rollout144"
    shutil.copytree(src, g)
    n = len([x for x in os.listdir(g) if x.startswith("shard-")])
    old = LabelSettings(model=MODEL, kind="rollout", seed=2, games_per_shard=50, keep=0.05, trials=144)
    assert make_labels(str(g), old, n) == []


def test_class_filter_keeps_only_those_classes_and_options_are_recorded(tmp_path, capsys):
    from bgai.model.classes import CLASS_BEAROFF, CLASS_RACE
    from bgai.train.labels import parse_classes

    assert parse_classes("race, bearoff") == ("bearoff", "race")
    for bad, msg in (("race,foo", "unknown position class"), ("over", "unknown position class"),
                     ("race,race", "named twice"), ("", "give one or more")):
        with pytest.raises(LabelError, match=msg):
            parse_classes(bad)
    base = {"kind": "rollout", "trials": 36, "games_per_shard": 3, "keep": 0.5}
    make_labels(str(tmp_path / "all"), _settings(**base, truncate=2), 1)
    make_labels(str(tmp_path / "race"), _settings(**base, truncate=2, classes=("race",)), 1)
    every, race = load_labels(str(tmp_path / "all")), load_labels(str(tmp_path / "race"))
    assert race.settings["classes"] == ["race"] and len(race) >= 1
    sel = every.classes == CLASS_RACE
    assert 0 < sel.sum() < len(every)
    np.testing.assert_array_equal(race.boards, every.boards[sel])  # the same sampling, then the class test
    np.testing.assert_array_equal(race.classes, classify(race.boards))
    np.testing.assert_allclose(race.probs, every.probs[sel], atol=1e-6)  # the same shard dice
    # bear-off positions with the database: exact values, standard error 0
    spec = MODEL + ":bearoff=db"
    make_labels(str(tmp_path / "db"), _settings(**base, model=spec, classes=("bearoff",)), 1)
    db = load_labels(str(tmp_path / "db"))
    assert db.settings["model"] == "bgai-td128.pt:bearoff=db" and len(db) >= 1
    assert np.all(db.classes == CLASS_BEAROFF) and np.all(db.std_errors == 0)
    np.testing.assert_allclose(db.probs, make_agent(spec).probabilities(db.boards), atol=1e-6)
    assert main(["label", str(tmp_path / "y"), "--model", MODEL, "--classes", "race,foo"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bgai: error:") and "unknown position class 'foo'" in err and "\n" not in err


def test_relabelling_labels_the_folders_positions_once_each_and_refuses_changed_sources(tmp_path, capsys):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    make_labels(str(a), _settings(), 2)
    make_labels(str(b), _settings(seed=4), 1)
    la, lb = load_labels(str(a)), load_labels(str(b))
    first = np.concatenate([la.boards, lb.boards, la.boards[:5]])  # what the folders hold, in order
    ids = encode_position_ids(first)
    want = [i for i, pid in enumerate(ids) if pid not in ids[:i]]  # each position once, first occurrence
    rel = _settings(kind="ply2", keep=1.0, relabel=(str(a), str(b), str(a)), per_shard=40)
    made = make_labels(str(out), rel, None, workers=2)
    fill = -(-len(want) // 40)
    assert sorted(made) == list(range(fill)) and len(want) > 40
    d = load_labels(str(out))
    np.testing.assert_array_equal(d.boards, first[want])
    # the new labels are the new labeller's values (here bgai-td128's 2-ply search, not the folders' 1-ply)
    np.testing.assert_allclose(d.probs, make_agent(MODEL).at_ply(2).probabilities(d.boards), rtol=0, atol=2e-6)
    assert np.abs(d.probs - np.concatenate([la.probs, lb.probs, la.probs[:5]])[want]).max() > 1e-3
    assert d.settings["source_positions"] == len(want) and d.settings["relabel"] == [str(a), str(b), str(a)]
    # resumed with the same sources: nothing to make; after a source grew: refused, nothing written
    assert make_labels(str(out), rel, None) == []
    make_labels(str(b), _settings(seed=4), 2)
    with pytest.raises(LabelError, match=r"positions of the relabelled folders changed since .* \(\d+ then, \d+ now\)"):
        make_labels(str(out), rel, None)

    # errors: keep, explore or candidates with relabel; more shards than the positions fill; output = source
    for kw in ({"keep": 0.5}, {"explore": 0.1}, {"candidates": 2}):
        with pytest.raises(LabelError, match="keep 1, no explore, no candidates"):
            make_labels(str(tmp_path / "x"), _settings(**{"keep": 1.0, "relabel": (str(a),), **kw}), None)
    with pytest.raises(LabelError, match=r"fill \d+ shard\(s\) of 1,000, not 50"):
        make_labels(str(tmp_path / "x"), _settings(keep=1.0, relabel=(str(a),)), 50)
    with pytest.raises(LabelError, match="is the output folder itself"):
        make_labels(str(a), _settings(keep=1.0, relabel=(str(a),)), None)
    with pytest.raises(LabelError, match="not a bgai label folder"):
        make_labels(str(tmp_path / "x"), _settings(keep=1.0, relabel=(str(tmp_path / "none"),)), None)
    assert not (tmp_path / "x").exists()
    # the command line: --relabel, keep 1 by default, shards as many as the positions fill
    capsys.readouterr()
    assert main(["label", str(tmp_path / "cli"), "--model", MODEL, "--relabel", str(a), "--per-shard", "25"]) == 0
    assert len(load_labels(str(tmp_path / "cli"))) == len(set(encode_position_ids(la.boards)))
    assert main(["label", str(tmp_path / "cli2"), "--model", MODEL, "--relabel", f"{a},", "--shards", "1"]) == 2
    assert "an empty folder name" in capsys.readouterr().err
    assert main(["label", str(tmp_path / "cli3"), "--model", MODEL, "--relabel", " "]) == 2
    assert "give one or more label folders" in capsys.readouterr().err
    assert main(["label", str(tmp_path / "cli3"), "--model", MODEL, "--per-shard", "5", "--shards", "1"]) == 2
    assert "give --relabel too" in capsys.readouterr().err
    assert main(["label", str(tmp_path / "cli"), "--model", MODEL, "--relabel", f"{a}/", "--per-shard", "25"]) == 0
    assert "0 shard(s) made" in capsys.readouterr().out  # the same job as 'a' without the slash: resumed, done
    (tmp_path / "notlabels").mkdir()
    (tmp_path / "notlabels" / "dataset.json").write_text("[]")
    assert main(["label", str(tmp_path / "cli3"), "--model", MODEL, "--relabel", str(tmp_path / "notlabels")]) == 2
    assert "is not a bgai-labels description" in capsys.readouterr().err
    assert not (tmp_path / "cli3").exists()


def test_a_label_item_weight_multiplies_its_positions_loss(tmp_path):
    """``{labels: FOLDER, weight: W}``: each of the folder's positions counts W times in the training and the
    validation loss (as W copies would, without repeating positions), and the net's record says so."""
    import torch

    from bgai.train.config import TrainConfig
    from bgai.train.supervised import SupervisedTrainer, load_datasets

    f, g = tmp_path / "f", tmp_path / "g"
    make_labels(str(f), _settings(), 2)
    make_labels(str(g), _settings(seed=4), 1)
    nf, ng = len(load_labels(str(f))), len(load_labels(str(g)))
    data = [{"labels": str(f), "weight": 2.5}, {"labels": str(g), "shards": 1}]
    ds = load_datasets(data)
    assert ds.weights.dtype == np.float32 and ds.weights.tolist() == [2.5] * nf + [1.0] * ng
    cfg = TrainConfig.from_dict({
        "algorithm": "supervised", "model": {"encoding": "tesauro198", "hidden": [4]},
        "run": {"seed": 2, "eval_every": 0, "checkpoint_every": 0},
        "supervised": {"data": data, "epochs": 1, "batch_size": 16, "patience": 0, "val_fraction": 0.3},
    })
    tr = SupervisedTrainer(cfg)
    assert sorted(set(tr.w_val.tolist()) | set(tr.w_train.tolist())) == [1.0, 2.5]
    assert tr.w_train.numel() + tr.w_val.numel() == nf + ng
    with torch.no_grad():
        per = torch.stack([tr.loss(tr.x_val[i:i + 1], tr.y_val[i:i + 1]) for i in range(tr.n_val)])
        assert per.min() > 0
        np.testing.assert_allclose(tr.validation_loss(), float((per * tr.w_val).mean()), rtol=1e-5)
        x, y = tr.x_val[:2], tr.y_val[:2]  # weight 2 on a row is that row twice
        np.testing.assert_allclose(float(tr.loss(x, y, torch.tensor([2.0, 1.0]))) * 2 / 3,
                                   float(tr.loss(x[[0, 0, 1]], y[[0, 0, 1]])), rtol=1e-5)
    assert tr.bundle().get(tr.entry.name).record["data"] == ["f x 2.5", "g[:1 shards]"]
    # a resume must see the same weights: the same data loads, another weight is refused
    from bgai.errors import CheckpointError

    state = tr.state_dict()
    SupervisedTrainer(cfg).load_state_dict(state)
    other = TrainConfig.from_dict({**cfg.to_dict(), "supervised": {**cfg.to_dict()["supervised"],
                                                                   "data": [{"labels": str(f), "weight": 9}, str(g)]}})
    with pytest.raises(CheckpointError, match=r"^the data items' loss weights changed since the checkpoint \(their "
                                              r"sum over the positions [\d,.]+ then, [\d,.]+ now\); resume with the "
                                              r"same data$"):
        SupervisedTrainer(other).load_state_dict(state)


def test_a_config_can_name_the_first_shards_of_a_growing_folder(tmp_path):
    """``supervised.data`` item ``{labels: FOLDER, shards: N}``: exactly shards 0..N-1, whatever else the folder
    holds by then; a missing one of them, or a bad item, is a one-line error."""
    from bgai.errors import ConfigError
    from bgai.train.config import TrainConfig
    from bgai.train.supervised import DatasetError, load_datasets

    f = tmp_path / "f"
    make_labels(str(f), _settings(), 3)
    first2 = [_shard(f, i) for i in range(2)]
    got = load_labels(str(f), shards=2)
    assert np.array_equal(got.probs, np.concatenate([s["probs"] for s in first2]))
    assert len(load_labels(str(f))) == len(got) + len(_shard(f, 2)["probs"])
    ds = load_datasets([{"labels": str(f), "shards": 2}])
    assert len(ds) == len(got)
    os.remove(f / "shard-00001.npz")
    with pytest.raises(LabelError, match=r"lacks 1 of its first 2 shards \(the first missing: shard-00001\.npz\)"):
        load_labels(str(f), shards=2)
    with pytest.raises(LabelError, match=r"shards must be 1 \.\. 1,000,000 for .*, got 1,000,000,000,000$"):
        load_labels(str(f), shards=10**12)  # at once, not after listing a trillion names
    with pytest.raises(DatasetError, match=r"shard-00000\.npz' is not a folder"):
        load_datasets([{"labels": str(f / "shard-00000.npz"), "shards": 1}])
    base = {"algorithm": "supervised", "supervised": {"data": [str(f)]}}
    for bad in ({"labels": str(f), "shards": 0}, {"shards": 2}, {"labels": str(f), "shards": "2"},
                {"labels": str(f), "shards": 10**12}, {"labels": str(f), "weight": 0}, {"labels": str(f), "weight": -1},
                {"labels": str(f), "weight": 1e-50},
                {"labels": str(f), "weight": 1001}, {"labels": str(f), "weight": True}, {"labels": str(f), "w": 2}):
        base["supervised"]["data"] = [str(f), bad]
        with pytest.raises(ConfigError, match=r"a list item may be \{labels: FOLDER, shards: N, weight: W\}, N in 1 "
                                              r"\.\. 1,000,000, W in 0\.001 \.\. 1,000, both optional\), got \{"):
            TrainConfig.from_dict(base)
    base["supervised"]["data"] = [str(tmp_path / "other"), {"labels": str(f), "shards": 1}]
    assert TrainConfig.from_dict(base).supervised.data[1] == {"labels": str(f), "shards": 1}
    rel = os.path.relpath(str(f))  # the same folder spelled another way
    for twice in ([str(f), {"labels": str(f), "shards": 1}], [{"labels": str(f), "shards": 1}, str(f) + "/"],
                  [{"labels": str(f), "weight": 3}, rel] if rel != str(f) else [str(f), str(f)],
                  [{"labels": str(f), "shards": 1}, {"labels": str(f), "shards": 2}]):
        base["supervised"]["data"] = [str(tmp_path / "other"), *twice]
        with pytest.raises(ConfigError, match=rf"^config key 'data' names '{f}' twice \(items 2 and 3\): its "
                                              r"positions would be counted twice$"):
            TrainConfig.from_dict(base)
