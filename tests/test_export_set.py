"""Export sets: several nets (one graph each, the class rule in the metadata), all files or none on a failed
write, consistent output names, and an .onnx without its .npz played through onnxruntime."""

from __future__ import annotations

import errno
import json
import os

import numpy as np
import pytest
import torch
from test_bundle import net_for, random_positions, two_net_bundle

from bgai.agents.numpy_bot import NumpyAgent
from bgai.agents.registry import make_agent
from bgai.cli import main
from bgai.errors import BgaiError
from bgai.model.bundle import ModelBundle, bundle_file, save_checkpoint
from bgai.model.export import export_bundle, export_checkpoint
from bgai.util import fileio


def one_net_checkpoint(path, seed: int = 4) -> str:
    net, enc = net_for("tesauro198", (10,), seed)
    save_checkpoint(bundle_file(ModelBundle.single(net, enc), games_trained=3), path)
    return str(path)


def test_two_net_export_plays_like_the_bundle(tmp_path):
    import onnx
    import onnxruntime as ort

    bundle = two_net_bundle()
    save_checkpoint(bundle_file(bundle), tmp_path / "two.pt")
    written = export_checkpoint(tmp_path / "two.pt", tmp_path / "m.onnx")
    assert written == {"onnx": str(tmp_path / "m.onnx"), "onnx:race": str(tmp_path / "m.race.onnx"),
                       "npz": str(tmp_path / "m.npz"), "npz:race": str(tmp_path / "m.race.npz"),
                       "golden": str(tmp_path / "m.golden.json")}
    meta = {p.key: p.value for p in onnx.load(tmp_path / "m.race.onnx").metadata_props}
    assert meta["net_name"] == "race" and meta["net_classes"] == "race,bearoff" and meta["encoding"] == "tesauro198"
    rule = json.loads(meta["class_rule"])
    assert rule["classifier"] == "gnubg"
    assert [(n["name"], n["classes"], n["onnx"], n["npz"]) for n in rule["nets"]] == [
        ("contact", ["contact", "crashed"], "m.onnx", "m.npz"), ("race", ["race", "bearoff"], "m.race.onnx", "m.race.npz")]
    boards = random_positions(3000, 5)
    want = bundle.probabilities(boards)
    for member in ("m.onnx", "m.npz", "m.race.npz", "m.race.onnx"):  # any file of the set loads the whole set
        agent = make_agent(str(tmp_path / member))
        assert isinstance(agent, NumpyAgent) and len(agent.nets) == 2
        np.testing.assert_allclose(agent.probabilities(boards), want, atol=1e-5)
    # each graph on its own: onnxruntime on the positions of its classes
    golden = json.load(open(tmp_path / "m.golden.json"))
    for i, (k, feats) in enumerate(zip(golden["net"], golden["features"])):
        sess = ort.InferenceSession(str(tmp_path / rule["nets"][k]["onnx"]), providers=["CPUExecutionProvider"])
        probs = sess.run(["probs"], {"features": np.array([feats], np.float32)})[0][0]
        np.testing.assert_allclose(probs, golden["probs"][i], atol=golden["tolerance"])
    assert golden["class"][-2:] == ["race", "bearoff"] and golden["net"][-2:] == [1, 1] and golden["net"][0] == 0
    # without the numpy files, the set plays through onnxruntime
    for f in ("m.npz", "m.race.npz"):
        os.unlink(tmp_path / f)
    np.testing.assert_allclose(make_agent(str(tmp_path / "m.onnx")).probabilities(boards), want, atol=1e-5)


def test_onnx_without_npz_plays_through_onnxruntime(tmp_path):
    pytest.importorskip("onnxruntime")
    from bgai.agents.neural import NeuralAgent

    ckpt = one_net_checkpoint(tmp_path / "m.pt")
    export_checkpoint(ckpt, tmp_path / "m.onnx")
    os.unlink(tmp_path / "m.npz")
    agent = make_agent(str(tmp_path / "m.onnx"))
    boards = random_positions(500, 6)
    np.testing.assert_allclose(agent.probabilities(boards), NeuralAgent.load(ckpt).probabilities(boards), atol=1e-5)


@pytest.mark.parametrize("args, message", [
    (["--format", "npz", "--out", "w.onnx"], "--format npz writes a .npz file, but the destination '{d}/w.onnx' ends in .onnx"),
    (["--format", "onnx", "--out", "w.npz"], "--format onnx writes a .onnx file, but the destination '{d}/w.npz' ends in .npz"),
    (["--out", "model.txt"], "export destination '{d}/model.txt' must end in .onnx or .npz"),
    (["--format", "onnx", "--out", "model.txt"], "export destination '{d}/model.txt' must end in .onnx ("),
])
def test_mismatched_output_names_are_refused(tmp_path, capsys, args, message):
    ckpt = one_net_checkpoint(tmp_path / "m.pt")
    args = [a if not a.endswith(("onnx", "npz", "txt")) or a.startswith("-") or a in ("onnx", "npz")
            else str(tmp_path / a) for a in args]
    assert main(["export", ckpt, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgai: error: " + message.format(d=tmp_path)) and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["m.pt"]


def test_output_naming_follows_the_ending(tmp_path, capsys):
    ckpt = one_net_checkpoint(tmp_path / "m.pt")
    assert main(["export", ckpt, "--out", str(tmp_path / "w.npz")]) == 0  # the format from the ending
    assert main(["export", ckpt, "--format", "onnx", "--out", str(tmp_path / "x.onnx")]) == 0
    assert sorted(os.listdir(tmp_path)) == ["m.pt", "w.npz", "x.golden.json", "x.npz", "x.onnx"]
    assert "npz    " + str(tmp_path / "w.npz") in capsys.readouterr().out


@pytest.mark.parametrize("fail_at", ["write", "rename"])
def test_a_failed_export_keeps_the_old_set(tmp_path, monkeypatch, fail_at):
    """A full disk while writing the second file, or a failure renaming it: no file of the set changes, no
    temporary is left."""
    old = one_net_checkpoint(tmp_path / "old.pt", seed=1)
    new = one_net_checkpoint(tmp_path / "new.pt", seed=2)
    export_checkpoint(old, tmp_path / "m.onnx")
    names = ["m.golden.json", "m.npz", "m.onnx"]
    before = {n: (tmp_path / n).read_bytes() for n in names}
    calls = {"n": 0}
    if fail_at == "write":
        real = fileio.os.fsync

        def fsync(fd):
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
            real(fd)

        monkeypatch.setattr(fileio.os, "fsync", fsync)
    else:
        real = fileio.os.replace

        def replace(src, dst):
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(errno.EIO, "Input/output error")
            real(src, dst)

        monkeypatch.setattr(fileio.os, "replace", replace)
    with pytest.raises(BgaiError, match="cannot write"):
        export_checkpoint(new, tmp_path / "m.onnx")
    monkeypatch.undo()
    assert {n: (tmp_path / n).read_bytes() for n in names} == before
    assert sorted(os.listdir(tmp_path)) == sorted(names + ["old.pt", "new.pt"])
    # and without the failure the whole set is replaced
    export_checkpoint(new, tmp_path / "m.onnx")
    assert all((tmp_path / n).read_bytes() != before[n] for n in names)


def test_export_bundle_refuses_a_missing_directory_before_writing(tmp_path):
    net, enc = net_for("tesauro198", (4,), 1)
    with pytest.raises(BgaiError, match="does not exist"):
        export_bundle(ModelBundle.single(net, enc), tmp_path / "none" / "m.onnx")
    assert os.listdir(tmp_path) == []
    with torch.no_grad():
        assert export_bundle(ModelBundle.single(net, enc), tmp_path / "m.npz") == {"npz": str(tmp_path / "m.npz")}


def test_the_shipped_default_exports_and_plays_like_the_bundle(tmp_path, monkeypatch, capsys):
    """``bgai export default`` on the model checkpoints/models.json names (bgai-sl8: a 512-unit contact net beside
    128-unit crashed and race nets, the bear-off database): every file of the set, with ``:bearoff=db``, values
    positions of every class as the torch bundle does and chooses the same plays."""
    monkeypatch.delenv("BGAI_MODEL", raising=False)
    assert main(["export", "default", "--out", str(tmp_path / "m.onnx")]) == 0
    assert sorted(os.listdir(tmp_path)) == ["m.contact.npz", "m.contact.onnx", "m.golden.json", "m.npz", "m.onnx",
                                            "m.race.npz", "m.race.onnx"]
    torch_agent = make_agent("default:bearoff=db")
    assert {n.name: list(n.net.spec.hidden) for n in torch_agent.bundle.nets} == {
        "crashed": [128], "contact": [512], "race": [128]}
    boards = random_positions(2000, 11)
    want = torch_agent.probabilities(boards)
    rng = np.random.default_rng(3)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    plays = torch_agent.choose(boards, dice, np.random.default_rng(0))
    for spec in (f"{tmp_path / 'm.onnx'}:bearoff=db", f"{tmp_path / 'm.contact.npz'}:bearoff=db"):
        agent = make_agent(spec)
        assert isinstance(agent, NumpyAgent) and len(agent.nets) == 3
        np.testing.assert_allclose(agent.probabilities(boards), want, atol=1e-5)
        assert (agent.choose(boards, dice, np.random.default_rng(0)) == plays).all(axis=(1, 2)).mean() > 0.999
    assert main(["export", "default:ply=1", "--out", str(tmp_path / "x.onnx")]) == 2
    assert "takes a model file, not agent options: 'default:ply=1' has ply=1" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "x.onnx")
