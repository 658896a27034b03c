"""Supervised training on a small synthetic dataset labelled by a teacher net: the loss falls and the fitted net
approaches the teacher; exact resume; warm start; training one net of a two-net bundle; dataset errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_bundle import net_for, random_positions, two_net_bundle

from bgai.core.position_id import encode_position_ids
from bgai.errors import CheckpointError
from bgai.model.bundle import ModelBundle, bundle_file, load_bundle, read_checkpoint, save_checkpoint
from bgai.train.config import TrainConfig
from bgai.train.run import train
from bgai.train.supervised import DatasetError, SupervisedTrainer, load_dataset, save_dataset


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """1,200 positions labelled by a random 'teacher' net (weights scaled so its outputs vary)."""
    d = tmp_path_factory.mktemp("sup")
    teacher_net, enc = net_for("tesauro198", (6,), 21, scale=2.0)
    teacher = ModelBundle.single(teacher_net, enc)
    boards = random_positions(1200, 8)
    targets = teacher.probabilities(boards).astype(np.float32)
    path = d / "teacher.npz"
    save_dataset(path, boards, targets)
    return {"dir": d, "path": str(path), "boards": boards, "targets": targets, "teacher": teacher}


def config(data_path: str, **sup) -> TrainConfig:
    s = {"data": data_path, "epochs": 25, "batch_size": 64, "lr": 3e-3, "lr_end": 3e-4, "patience": 0}
    s.update(sup)
    return TrainConfig.from_dict({
        "algorithm": "supervised",
        "model": {"encoding": "tesauro198", "hidden": [12]},
        "run": {"seed": 4, "eval_every": 0, "checkpoint_every": 0, "log_every": 2000},
        "supervised": s,
    })


def quiet(**kw):
    return dict(progress=False, tensorboard=False, evaluate=False, **kw)


def test_loss_falls_and_the_fitted_net_approaches_the_teacher(data, tmp_path):
    cfg = config(data["path"])
    fresh = SupervisedTrainer(cfg)
    val_boards_loss0 = fresh.validation_loss()
    boards = data["boards"]
    gap0 = np.abs(fresh.bundle().probabilities(boards) - data["targets"]).mean()
    res = train(cfg, str(tmp_path / "run"), **quiet())
    assert res.unit == "sample" and res.games == 25 * fresh.n_train and not res.interrupted
    ckpt = read_checkpoint(res.last_path)
    record = ckpt["nets"][0]["record"]
    losses = record["validation_losses"]
    # binary cross-entropy is at least the targets' own entropy; what training removes is the excess over it
    y = np.clip(fresh.y_val.numpy().astype(np.float64), 1e-7, 1 - 1e-7)
    floor = float(-(y * np.log(y) + (1 - y) * np.log(1 - y)).sum(axis=1).mean())
    assert len(losses) == 25 and losses[-1] < losses[0] < val_boards_loss0
    assert losses[-1] - floor < 0.05 * (val_boards_loss0 - floor), (losses, floor)
    assert record["algorithm"] == "supervised" and ckpt["samples_trained"] == res.games and ckpt["epochs"] == 25
    fitted, _ = load_bundle(res.last_path)
    gap = np.abs(fitted.probabilities(boards) - data["targets"]).mean()
    assert gap < 0.02 and gap < 0.2 * gap0, (gap, gap0)
    log = (tmp_path / "run" / "log.jsonl").read_text().splitlines()
    assert log and '"losses/train"' in log[0] and '"samples_trained"' in log[0]


def test_resume_is_exact(data, tmp_path):
    cfg = config(data["path"], epochs=4, lr_schedule="constant", batch_size=100)
    full = train(cfg, str(tmp_path / "full"), **quiet())
    half = train(config(data["path"], epochs=2, lr_schedule="constant", batch_size=100), str(tmp_path / "half"),
                 **quiet())
    rest = train(None, str(tmp_path / "half"), resume=True, overrides={"epochs": 4}, **quiet())
    assert rest.games == full.games and rest.session == full.games - half.games
    a, b = read_checkpoint(full.last_path), read_checkpoint(rest.last_path)
    for k, v in a["nets"][0]["state_dict"].items():
        assert torch.equal(v, b["nets"][0]["state_dict"][k]), k
    assert a["trainer"]["rng"] == b["trainer"]["rng"]
    assert a["nets"][0]["record"]["validation_losses"] == b["nets"][0]["record"]["validation_losses"]


def test_early_stopping_keeps_the_best_epoch_and_warm_start(data, tmp_path):
    res = train(config(data["path"], epochs=40, patience=2, min_delta=1.0), str(tmp_path / "a"), **quiet())
    rec = read_checkpoint(res.last_path)["nets"][0]["record"]
    assert rec["epochs"] == 3  # no epoch improves by 1.0 after the first: stopped after 2 more
    # warm start from the first run's file: the first epoch starts from its weights
    base = train(config(data["path"], epochs=10), str(tmp_path / "b"), **quiet())
    warm = config(data["path"], epochs=1, warm_start=base.last_path, lr=1e-5, lr_end=1e-5)
    trainer = SupervisedTrainer(warm)
    before = read_checkpoint(base.last_path)["nets"][0]["record"]["best_validation_loss"]
    assert trainer.validation_loss() == pytest.approx(before, rel=1e-5)
    with pytest.raises(Exception, match="make them agree"):
        SupervisedTrainer(config(data["path"], warm_start=base.last_path).with_overrides({"hidden": [7]}))


def test_training_one_net_of_a_two_net_bundle(data, tmp_path):
    bundle = two_net_bundle()  # contact: extended (12,), race: tesauro198 (6,)
    save_checkpoint(bundle_file(bundle), tmp_path / "two.pt")
    cfg = TrainConfig.from_dict({
        "algorithm": "supervised", "model": {"encoding": "tesauro198", "hidden": [6]},
        "run": {"seed": 1, "eval_every": 0, "checkpoint_every": 0},
        "supervised": {"data": data["path"], "net": "race", "warm_start": str(tmp_path / "two.pt"), "epochs": 3,
                       "batch_size": 32, "patience": 0},
    })
    trainer = SupervisedTrainer(cfg)
    race = np.isin(bundle.classify(data["boards"]), [1, 2]).sum()
    assert trainer.n_train + trainer.n_val == race > 20
    res = train(cfg, str(tmp_path / "run"), **quiet())
    out, _ = load_bundle(res.last_path)
    assert out.names() == ["contact", "race"]
    before, _ = load_bundle(tmp_path / "two.pt")
    for k, v in out.get("contact").net.state_dict().items():  # the other net is kept as it was
        assert torch.equal(v, before.get("contact").net.state_dict()[k])
    assert any(not torch.equal(v, before.get("race").net.state_dict()[k])
               for k, v in out.get("race").net.state_dict().items())


def test_datasets_from_position_ids_and_their_errors(data, tmp_path):
    ids = encode_position_ids(data["boards"][:50])
    lines = ["# Position ID and the five probabilities"]
    lines += [f"{p} " + " ".join(f"{v:.7f}" for v in t) for p, t in zip(ids, data["targets"][:50])]
    text = tmp_path / "d.txt"
    text.write_text("\n".join(lines) + "\n")
    ds = load_dataset(text)
    np.testing.assert_array_equal(ds.boards, data["boards"][:50])
    np.testing.assert_allclose(ds.targets, data["targets"][:50], atol=1e-6)
    np.savez(tmp_path / "ids.npz", position_ids=np.array(ids), targets=data["targets"][:50])
    np.testing.assert_array_equal(load_dataset(tmp_path / "ids.npz").boards, data["boards"][:50])
    bad = data["targets"][:50].copy()
    bad[7, 1] = 1.5
    np.savez(tmp_path / "bad.npz", boards=data["boards"][:50], targets=bad)
    with pytest.raises(DatasetError, match=r"row 7: targets \[.*1\.5.*\] are not probabilities in \[0, 1\]"):
        load_dataset(tmp_path / "bad.npz")
    text.write_text(f"{ids[0]} 0.5 0.1 0.0 0.1\n")
    with pytest.raises(DatasetError, match="line 1: expected a Position ID and 5 probabilities, got 5 fields"):
        load_dataset(text)
    # a label folder of 'bgai label' (bgai.train.labels): its probs are the targets
    from bgai.train.labels import LabelSettings, load_labels, make_labels

    net, enc = net_for("tesauro198", (6,), 3)
    save_checkpoint(bundle_file(ModelBundle.single(net, enc)), tmp_path / "m.pt")
    make_labels(str(tmp_path / "labels"), LabelSettings(str(tmp_path / "m.pt"), "ply1", games_per_shard=1,
                                                        keep=0.3), 1)
    labels = load_labels(str(tmp_path / "labels"))
    ds = load_dataset(tmp_path / "labels")
    assert len(ds) == len(labels) > 0
    np.testing.assert_array_equal(ds.boards, labels.boards)
    np.testing.assert_allclose(ds.targets, labels.probs, atol=1e-7)
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(tmp_path / "none.npz")
    with pytest.raises(DatasetError, match="no dataset"):
        SupervisedTrainer(config(""))


def test_a_class_net_split_off_a_one_net_bundle_and_trained(data, tmp_path):
    """net: race with a one-net warm start: the race net starts as a copy (same values everywhere), training
    changes race values only, and the other classes keep the original net's values."""
    net, enc = net_for("tesauro198", (6,), 5)
    one = ModelBundle.single(net, enc, {"algorithm": "td"})
    split = one.split_net(["race"], "race")
    assert [(n.name, n.classes) for n in split.nets] == [("all", ("bearoff", "crashed", "contact")),
                                                         ("race", ("race",))]
    boards = data["boards"]
    # equal up to float rounding (matrix products of other batch sizes)
    assert np.allclose(split.probabilities(boards), one.probabilities(boards), rtol=0, atol=1e-6)
    assert split.get("race").record == {"algorithm": "td", "split_from": "all"}
    with pytest.raises(CheckpointError, match="already has a net 'race'"):
        split.split_net(["race"], "race")
    with pytest.raises(CheckpointError, match="not all evaluated by one net"):
        split.split_net(["race", "contact"], "x")
    with pytest.raises(CheckpointError, match="nothing to split off"):
        split.split_net(["race"], "r2")
    save_checkpoint(bundle_file(one), tmp_path / "one.pt")
    cfg = TrainConfig.from_dict({
        "algorithm": "supervised", "model": {"encoding": "tesauro198", "hidden": [6]},
        "run": {"seed": 1, "eval_every": 0, "checkpoint_every": 0},
        "supervised": {"data": data["path"], "net": "race", "warm_start": str(tmp_path / "one.pt"), "epochs": 2,
                       "batch_size": 32, "patience": 0},
    })
    res = train(cfg, str(tmp_path / "run"), **quiet())
    out, _ = load_bundle(res.last_path)
    assert out.names() == ["all", "race"]
    cls = out.classify(boards)
    race = cls == 2
    assert race.sum() > 20
    p_out, p_one = out.probabilities(boards), one.probabilities(boards)
    assert np.allclose(p_out[~race], p_one[~race], rtol=0, atol=1e-6)
    assert np.abs(p_out[race] - p_one[race]).max() > 1e-4


def test_contact_and_crashed_nets_split_off_in_turn(data, tmp_path):
    """net: crashed when the net for crashed positions has no other class left (race, bear-off and contact split
    off it): that net is renamed and trained; the contact and race nets keep their values."""
    net, enc = net_for("tesauro198", (6,), 5)
    one = ModelBundle.single(net, enc, {"algorithm": "td"})
    three = one.split_net(["race"], "race").split_net(["bearoff"], "bearoff").split_net(["contact"], "contact")
    assert [(n.name, n.classes) for n in three.nets] == [("all", ("crashed",)), ("contact", ("contact",)),
                                                         ("bearoff", ("bearoff",)), ("race", ("race",))]
    renamed = three.rename_net("all", "crashed")
    assert renamed.names() == ["crashed", "contact", "bearoff", "race"]
    assert renamed.get("crashed").record == {"algorithm": "td", "renamed_from": "all"}
    assert renamed.get("crashed").net is three.get("all").net and three.names()[0] == "all"
    with pytest.raises(CheckpointError, match="already has a net 'race'"):
        three.rename_net("all", "race")
    with pytest.raises(CheckpointError, match="no net 'x'"):
        three.rename_net("x", "y")
    save_checkpoint(bundle_file(three), tmp_path / "three.pt")
    cfg = TrainConfig.from_dict({
        "algorithm": "supervised", "model": {"encoding": "tesauro198", "hidden": [6]},
        "run": {"seed": 1, "eval_every": 0, "checkpoint_every": 0},
        "supervised": {"data": data["path"], "net": "crashed", "warm_start": str(tmp_path / "three.pt"),
                       "epochs": 2, "batch_size": 32, "patience": 0},
    })
    res = train(cfg, str(tmp_path / "run"), **quiet())
    out, _ = load_bundle(res.last_path)
    assert out.names() == ["crashed", "contact", "bearoff", "race"]
    assert out.get("crashed").record["algorithm"] == "supervised"
    boards = data["boards"]
    crashed = out.classify(boards) == 3
    assert crashed.sum() > 20
    p_out, p_one = out.probabilities(boards), one.probabilities(boards)
    assert np.allclose(p_out[~crashed], p_one[~crashed], rtol=0, atol=1e-6)
    assert np.abs(p_out[crashed] - p_one[crashed]).max() > 1e-4


def _label_folder(path, probs, std_errors):
    import json
    boards = random_positions(len(probs), 3)[: len(probs)]
    path.mkdir()
    (path / "dataset.json").write_text(json.dumps({"format": "bgai-labels", "format_version": 1, "settings": {}}))
    np.savez(path / "shard-00000.npz", boards=boards, probs=np.asarray(probs, np.float32),
             std_errors=np.asarray(std_errors, np.float32), classes=np.zeros(len(probs), np.int8))


def test_rollout_labels_a_little_outside_0_1_are_clipped_far_outside_refused(tmp_path):
    """Variance-reduced rollout labels are unbiased estimates that can leave [0, 1] by their noise: up to
    4 standard errors they are clipped; further out they are bad targets."""
    probs = [[1.00004, 0.7, -0.00011, 0.0, 0.0], [0.5, 0.2, 0.01, 0.1, 0.0]]
    se = [[0.0004, 0.001, 0.0001, 0.0, 0.0], [0.01, 0.01, 0.001, 0.01, 0.0]]
    _label_folder(tmp_path / "ok", probs, se)
    t = load_dataset(tmp_path / "ok").targets
    assert t[0, 2] == 0.0 and t[0, 0] == 1.0 and t[0, 1] == pytest.approx(0.7)
    assert t[1].tolist() == pytest.approx([0.5, 0.2, 0.01, 0.1, 0.0])
    _label_folder(tmp_path / "bad", [[0.5, 0.2, -0.01, 0.1, 0.0]], [[0.01, 0.01, 0.001, 0.01, 0.0]])
    with pytest.raises(DatasetError, match="not probabilities"):
        load_dataset(tmp_path / "bad")


def test_a_net_widened_computes_the_same_values_then_trains(data, tmp_path):
    """init: widen grows the warm-start net (6 -> 10 hidden units, and two layers 4, 3 -> 7, 5) with the values it
    computes unchanged; the new units' outgoing weights start at zero and training moves them."""
    boards = data["boards"]
    for hidden, wider in (((6,), (10,)), ((4, 3), (7, 5))):
        net, enc = net_for("tesauro198", hidden, 5, scale=2.0)
        wide = net.widened(wider, generator=torch.Generator().manual_seed(3))
        assert wide.spec.hidden == wider and wide.spec.parameters() > net.spec.parameters()
        x = torch.from_numpy(enc(boards))
        with torch.no_grad():
            assert torch.allclose(wide(x), net(x), rtol=0, atol=1e-6)
            assert not torch.allclose(wide.body[0].weight[hidden[0]:], torch.zeros(1))  # new units are not dead
    with pytest.raises(Exception, match=r"cannot widen hidden layers \[4, 3\] to \[7\]"):
        net.widened((7,))
    with pytest.raises(Exception, match=r"cannot widen hidden layers \[4, 3\] to \[7, 2\]"):
        net.widened((7, 2))
    net, enc = net_for("tesauro198", (6,), 5, scale=2.0)
    save_checkpoint(bundle_file(ModelBundle.single(net, enc, {"algorithm": "td"})), tmp_path / "narrow.pt")
    cfg = config(data["path"], warm_start=str(tmp_path / "narrow.pt"), init="widen", epochs=2).with_overrides(
        {"hidden": [12]})
    trainer = SupervisedTrainer(cfg)
    narrow = SupervisedTrainer(config(data["path"], warm_start=str(tmp_path / "narrow.pt")).with_overrides(
        {"hidden": [6]}))
    assert trainer.validation_loss() == pytest.approx(narrow.validation_loss(), abs=1e-6)
    assert trainer.entry.record == {"algorithm": "td", "init": "widen", "widened_from": [6]}
    res = train(cfg, str(tmp_path / "run"), **quiet())
    out, _ = load_bundle(res.last_path)
    assert out.only.net.spec.hidden == (12,)
    assert float(out.only.net.body[2].weight.detach()[:, 6:].abs().max()) > 1e-4  # the new units now feed the outputs
    with pytest.raises(Exception, match="config key 'init'"):
        SupervisedTrainer(cfg.with_overrides({"hidden": [3]}))
    # more inputs: tesauro198 -> extended (its first 198 units are tesauro198's), same values at the start
    grown = SupervisedTrainer(cfg.with_overrides({"encoding": "extended"}))
    assert grown.entry.encoder.name == "extended" and grown.net.spec.n_inputs == 219
    assert grown.entry.record["widened_from_encoding"] == "tesauro198"
    assert grown.validation_loss() == pytest.approx(narrow.validation_loss(), abs=1e-6)
    with pytest.raises(Exception, match="does not extend it"):
        SupervisedTrainer(cfg.with_overrides({"encoding": "contact"}))
    # through a chain: tesauro198 -> extended -> extended-gnubg
    assert SupervisedTrainer(cfg.with_overrides({"encoding": "extended-gnubg"})).net.spec.n_inputs == 269
    with pytest.raises(Exception, match="widen keeps the net's activation 'sigmoid'; the model section has 'relu'"):
        SupervisedTrainer(cfg.with_overrides({"activation": "relu"}))
    # a races-only encoding on a net of every class: refused before any training
    with pytest.raises(Exception, match="'extended-race' takes race positions only; net 'all' evaluates"):
        SupervisedTrainer(cfg.with_overrides({"encoding": "extended-race"}))
    with pytest.raises(Exception, match="widen grows the net of a warm start"):
        SupervisedTrainer(config(data["path"], init="widen"))
    # the trained net's record keeps where it came from
    rec = read_checkpoint(res.last_path)["nets"][0]["record"]
    assert rec["init"] == "widen" and rec["widened_from"] == [6] and rec["algorithm"] == "supervised"
