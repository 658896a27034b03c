"""Model bundles: the shipped format-1 checkpoint, format-2 files, routing by position class (GNU Backgammon's
classes, bgai.model.classes), and refusing non-finite weights and oversized nets before building anything."""

from __future__ import annotations

import os
import time
import zipfile

import numpy as np
import pytest
import torch

from bgai.agents.neural import NeuralAgent
from bgai.agents.registry import make_agent
from bgai.cli import main
from bgai.core.board import flip
from bgai.core.movegen import afterstates
from bgai.errors import CheckpointError
from bgai.model import classes
from bgai.model.bundle import (
    FORMAT_VERSION,
    BundleNet,
    ModelBundle,
    bundle_file,
    load_bundle,
    read_checkpoint,
    save_checkpoint,
)
from bgai.model.classes import CLASS_BEAROFF, CLASS_CONTACT, CLASS_CRASHED, CLASS_RACE, classify
from bgai.model.features import get_encoder
from bgai.model.nets import NetSpec, ValueNet

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(ROOT, "checkpoints", "bgai-td128.pt")
REF = np.load(os.path.join(ROOT, "tests", "data", "reference_positions.npz"))["boards"]


def random_positions(n: int, seed: int) -> np.ndarray:
    """Positions of random games from the reference positions, races and bear-offs included (side on roll)."""
    rng = np.random.default_rng(seed)
    cur, pool = REF, [REF]
    while sum(len(p) for p in pool) < n:
        dice = rng.integers(1, 7, size=(len(cur), 2))
        after, src = afterstates(cur, dice)
        counts = np.bincount(src, minlength=len(cur))
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        nxt = flip(after[starts + (rng.random(len(cur)) * counts).astype(np.int64)])
        nxt = nxt[(nxt.sum(axis=2) > 0).all(axis=1)]
        if len(nxt) == 0:
            cur = REF
            continue
        pool.append(nxt)
        cur = nxt
    return np.concatenate(pool)[:n]


def net_for(encoding: str, hidden, seed: int, scale: float = 3.0) -> tuple[ValueNet, object]:
    enc = get_encoder(encoding)
    net = ValueNet(NetSpec(enc.size, tuple(hidden), "sigmoid"), torch.Generator().manual_seed(seed))
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(scale)
    return net, enc


def two_net_bundle() -> ModelBundle:
    contact, e1 = net_for("extended", (12,), 1)
    race, e2 = net_for("tesauro198", (6,), 2)
    return ModelBundle([
        BundleNet("contact", ("contact", "crashed"), contact, e1, {"algorithm": "test"}),
        BundleNet("race", ("race", "bearoff"), race, e2, {}),
    ])


def test_shipped_format_1_checkpoint_loads_as_a_one_net_bundle():
    raw = torch.load(SHIPPED, map_location="cpu", weights_only=True)
    assert raw["format_version"] == 1  # the shipped file stays in the old format
    bundle, ckpt = load_bundle(SHIPPED)
    assert ckpt["format_version"] == FORMAT_VERSION and ckpt["upgraded_from"] == 1
    assert bundle.names() == ["all"] and bundle.only.encoder.name == "extended"
    assert bundle.only.net.spec.hidden == (128,) and ckpt["games_trained"] == raw["games_trained"] == 898320
    # the weights are the file's, and the bundle evaluates as the plain torch network does
    boards = random_positions(300, 1)
    with torch.no_grad():
        net = ValueNet(NetSpec.from_dict(raw["net"]["spec"]))
        net.load_state_dict(raw["net"]["state_dict"])
        want = net(torch.from_numpy(get_encoder("extended")(boards))).numpy()
    np.testing.assert_allclose(bundle.probabilities(boards), want, atol=2e-6)


def test_format_2_round_trip_and_routing(tmp_path):
    bundle = two_net_bundle()
    path = tmp_path / "two.pt"
    save_checkpoint(bundle_file(bundle, config={"algorithm": "td"}, games_trained=7, evals=[{"ppg": 0.1}]), path)
    back, ckpt = load_bundle(path)
    assert back.names() == ["contact", "race"] and back.classifier == "gnubg"
    assert ckpt["games_trained"] == 7 and ckpt["nets"][0]["record"] == {"algorithm": "test"}
    boards = random_positions(2000, 2)
    cls = classify(boards)
    assert {CLASS_CONTACT, CLASS_CRASHED, CLASS_RACE, CLASS_BEAROFF} <= set(cls.tolist())
    got = back.probabilities(boards)
    race = np.isin(cls, [CLASS_RACE, CLASS_BEAROFF])
    with torch.no_grad():
        for k, mask in ((0, ~race), (1, race)):
            n = bundle.nets[k]
            want = n.net(torch.from_numpy(n.encoder(boards[mask]))).numpy()
            np.testing.assert_allclose(got[mask], want, atol=2e-6)
    # one network call per net present in the batch
    calls = []
    for n in back.nets:
        enc = n.encoder
        n.encoder = type(enc)(enc.name, enc.version, enc.size, lambda b, f=enc.encode: calls.append(len(b)) or f(b))
    back.probabilities(boards)
    assert sorted(calls) == sorted([int((~race).sum()), int(race.sum())])
    # the agent plays the bundle; its afterstate values use both nets
    agent = NeuralAgent(back, ply=0)
    np.testing.assert_allclose(agent.probabilities(boards[:50]), got[:50], atol=1e-6)


def test_class_rule_errors():
    contact, e1 = net_for("tesauro198", (4,), 1)
    with pytest.raises(CheckpointError, match="no net for the position class.*race"):
        ModelBundle([BundleNet("c", ("contact", "crashed", "bearoff"), contact, e1)])
    with pytest.raises(CheckpointError, match="'race' is given to two nets"):
        ModelBundle([BundleNet("a", ("all",), contact, e1), BundleNet("r", ("race",), contact, e1)])
    with pytest.raises(CheckpointError, match="unknown position class 'endgame'"):
        ModelBundle([BundleNet("a", ("endgame",), contact, e1)])
    with pytest.raises(CheckpointError, match="2 nets"):
        two_net_bundle().only


def test_only_bundles_routed_by_the_classifier_load_its_kernel(monkeypatch):
    net, enc = net_for("tesauro198", (4,), 3)
    one = ModelBundle.single(net, enc)
    one_db = one.with_bearoff_database()
    two = two_net_bundle()
    three = ModelBundle([BundleNet("contact", ("contact",), *net_for("tesauro198", (4,), 5)),
                         BundleNet("crashed", ("crashed",), *net_for("tesauro198", (4,), 6)),
                         BundleNet("race", ("race", "bearoff"), *net_for("tesauro198", (4,), 7))])
    assert one_db.rule.n_nets == 2  # the database counts as an entry ...
    assert [b.rule.uses_classifier for b in (one, one_db, two, three, two.with_bearoff_database())] == [
        False, False, True, True, True]  # ... but is split off by the all-home test
    # route() really does not call the classifier when uses_classifier is False
    boards = random_positions(2000, 2)
    live = np.ones(len(boards), dtype=bool)
    home = {int(i) for i in np.flatnonzero(classify(boards) == CLASS_BEAROFF)}
    assert home and len(home) < len(boards)

    def refuse(b):
        raise AssertionError("classifier called")

    monkeypatch.setattr(one_db.rule, "classify", refuse)
    parts = dict((k, set(i.tolist())) for k, i in one_db.rule.route(boards, live))
    assert parts == {0: set(range(len(boards))) - home, 1: home}
    # use_compiled_encoders loads classify's kernel only for the bundles that call it
    calls = []
    monkeypatch.setattr(classes, "use_compiled", lambda on=True: calls.append(on) or True)
    for b in (one, one_db, two, three):
        for n in b.nets:
            n.encoder = type(n.encoder)(n.encoder.name, n.encoder.version, n.encoder.size,
                                        lambda x, compiled=None: None)
        calls.clear()
        b.use_compiled_encoders()
        assert calls == ([True] if b.rule.uses_classifier else [])


def _nan_checkpoint(tmp_path) -> str:
    """A one-net file whose weights hold a NaN, written past the writer's own check (as a foreign tool could)."""
    net, enc = net_for("tesauro198", (8,), 4)
    ckpt = bundle_file(ModelBundle.single(net, enc))
    ckpt["nets"][0]["state_dict"]["body.0.weight"][3, 5] = float("nan")
    path = str(tmp_path / "nan.pt")
    torch.save(ckpt, path)
    return path


def test_non_finite_weights_are_refused_at_load(tmp_path, capsys):
    path = _nan_checkpoint(tmp_path)
    with pytest.raises(CheckpointError, match=r"non-finite weights \(NaN or infinity\) in 'body.0.weight'"):
        read_checkpoint(path)
    with pytest.raises(CheckpointError, match="non-finite"):
        make_agent(path)
    assert main(["eval", path, "pubeval", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "non-finite weights" in err and "Traceback" not in err
    assert main(["serve", "http", "--port", "0", "--agent", path]) == 2
    assert "non-finite weights" in capsys.readouterr().err
    # the writer refuses such weights too (a run that diverged keeps its last good checkpoint)
    net, enc = net_for("tesauro198", (8,), 4)
    with torch.no_grad():
        net.body[0].bias[0] = float("inf")
    with pytest.raises(CheckpointError, match="non-finite"):
        save_checkpoint(bundle_file(ModelBundle.single(net, enc)), tmp_path / "inf.pt")
    assert not (tmp_path / "inf.pt").exists()


def test_oversized_networks_are_refused_before_allocation(tmp_path):
    net, enc = net_for("tesauro198", (8,), 4)
    ckpt = bundle_file(ModelBundle.single(net, enc))
    ckpt["nets"][0]["spec"]["hidden"] = [10**9]
    path = tmp_path / "huge.pt"
    torch.save(ckpt, path)
    t0 = time.perf_counter()
    with pytest.raises(CheckpointError, match=r"network too large: hidden=\[1000000000\]"):
        load_bundle(path)
    with pytest.raises(CheckpointError, match="network too large"):
        make_agent(str(path))
    assert time.perf_counter() - t0 < 5  # no attempt at an 876 GB allocation
    ckpt["nets"][0]["spec"]["hidden"] = [5000, 5000, 5000, 5000, 5000]  # each layer allowed, 100 M parameters not
    torch.save(ckpt, path)
    with pytest.raises(CheckpointError, match="parameters"):
        load_bundle(path)


def test_a_full_disk_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    import errno

    from bgai.util import fileio

    net, enc = net_for("tesauro198", (8,), 4)
    path = tmp_path / "m.pt"
    save_checkpoint(bundle_file(ModelBundle.single(net, enc), games_trained=1), path)
    before = path.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio.os, "fsync", full)
    with pytest.raises(CheckpointError, match=r"cannot write .*m\.pt.*no space left on device"):
        save_checkpoint(bundle_file(ModelBundle.single(net, enc), games_trained=2), path)
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["m.pt"]
    assert zipfile.is_zipfile(path)
