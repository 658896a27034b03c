"""Export: ONNX model (names, dynamic batch, opset, metadata), golden file, and the agreement of onnxruntime,
the numpy-only path and the torch checkpoint on 10,000 positions (same probabilities to 1e-5, same plays)."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from bgai.agents.numpy_bot import NumpyAgent, load_model
from bgai.cli import main
from bgai.core.board import flip
from bgai.core.equity import cubeless_equity
from bgai.core.movegen import afterstates
from bgai.errors import CheckpointError
from bgai.model.features import get_encoder
from bgai.model.nets import NetSpec, ValueNet

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF = np.load(os.path.join(ROOT, "tests", "data", "reference_positions.npz"))["boards"]


def _positions(n: int, seed: int = 3) -> np.ndarray:
    """``n`` positions reached by random play from the reference positions (side on roll's view)."""
    rng = np.random.default_rng(seed)
    pool = [REF]
    cur = REF
    while sum(len(p) for p in pool) < n:
        dice = rng.integers(1, 7, size=(len(cur), 2))
        after, src = afterstates(cur, dice)
        counts = np.bincount(src, minlength=len(cur))
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pick = starts + (rng.random(len(cur)) * counts).astype(np.int64)
        nxt = flip(after[pick])
        nxt = nxt[(nxt.sum(axis=2) > 0).all(axis=1)]  # keep unfinished games
        pool.append(nxt)
        cur = nxt
    return np.concatenate(pool)[:n]


def _make_checkpoint(path: str, encoding: str, hidden, activation: str, seed: int) -> str:
    from bgai.model.bundle import build_checkpoint, save_checkpoint

    enc = get_encoder(encoding)
    net = ValueNet(NetSpec(enc.size, tuple(hidden), activation), torch.Generator().manual_seed(seed))
    with torch.no_grad():  # a decisive net (random init is nearly flat): scale the weights up
        for p in net.parameters():
            p.mul_(4.0)
    save_checkpoint(build_checkpoint(net, enc, {}, 0, []), path)
    return path


def _shipped() -> list[str]:
    return sorted(glob.glob(os.path.join(ROOT, "checkpoints", "*.pt")))


@pytest.fixture(
    scope="module",
    params=[
        ("tesauro198", (40,), "sigmoid"),
        ("extended", (64, 32), "relu"),
        *[("shipped", p, None) for p in _shipped()[-1:]],
    ],
    ids=lambda p: p[0],
)
def exported(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    enc, hidden, act = request.param
    if enc == "shipped":
        ckpt = hidden
    else:
        ckpt = _make_checkpoint(str(d / "model.pt"), enc, hidden, act, seed=7)
    out = str(d / "model.onnx")
    assert main(["export", ckpt, "--format", "onnx", "--out", out]) == 0
    return ckpt, out


def test_onnx_interface_and_metadata(exported):
    import onnx

    ckpt, out = exported
    m = onnx.load(out)
    onnx.checker.check_model(m)
    (inp,), (outp,) = m.graph.input, m.graph.output
    assert inp.name == "features" and outp.name == "probs"
    dims = [d.dim_param or d.dim_value for d in inp.type.tensor_type.shape.dim]
    from bgai.model.bundle import load_net

    _, enc, _ = load_net(ckpt)
    assert dims == ["batch", enc.size]
    assert [d.dim_param or d.dim_value for d in outp.type.tensor_type.shape.dim] == ["batch", 5]
    assert [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] == [17]
    meta = {p.key: p.value for p in m.metadata_props}
    assert meta["encoding"] == enc.name and meta["encoding_version"] == str(enc.version)
    assert meta["encoding_size"] == str(enc.size)
    assert meta["outputs"] == "win,win_gammon,win_backgammon,lose_gammon,lose_backgammon"
    assert meta["source"] == os.path.basename(ckpt) and len(meta["source_sha256"]) == 64
    assert int(meta["games_trained"]) >= 0


def test_golden_file_matches_onnxruntime_and_the_encoder(exported):
    import onnxruntime as ort

    from bgai.core.position_id import decode_position_id

    _, out = exported
    golden = json.load(open(out[:-5] + ".golden.json"))
    feats = np.array(golden["features"], dtype=np.float32)
    boards = np.stack([decode_position_id(p) for p in golden["positions"]])
    enc = get_encoder(golden["encoding"]["name"])
    np.testing.assert_array_equal(enc(boards), feats)
    sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    probs = sess.run(["probs"], {"features": feats})[0]
    np.testing.assert_allclose(probs, np.array(golden["probs"]), atol=golden["tolerance"])
    assert golden["outputs"] == ["win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"]


def test_onnxruntime_numpy_and_torch_agree_on_10000_positions_and_choose_the_same_plays(exported):
    import onnxruntime as ort

    from bgai.agents.neural import NeuralAgent

    ckpt, out = exported
    boards = _positions(10_000)
    assert len(boards) == 10_000
    torch_agent = NeuralAgent.load(ckpt, ply=0)
    np_agent = NumpyAgent.load(out)
    feats = np_agent.encoder(boards)
    sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    p_ort = sess.run(["probs"], {"features": feats})[0]  # the whole batch at once: dynamic batch axis
    p_np = np_agent.model(feats)
    with torch.no_grad():
        p_torch = torch_agent.net(torch.from_numpy(feats)).numpy()
    assert np.abs(p_ort - p_torch).max() < 1e-5
    assert np.abs(p_np - p_torch).max() < 1e-5
    np.testing.assert_allclose(np_agent.probabilities(boards), torch_agent.probabilities(boards), atol=1e-5)

    rng = np.random.default_rng(1)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    a_torch = torch_agent.choose(boards, dice, np.random.default_rng(0))
    a_np = np_agent.choose(boards, dice, np.random.default_rng(0))
    same = (a_torch == a_np).all(axis=(1, 2))
    # a different choice is allowed only between plays the torch net values equally (to 1e-6)
    if not same.all():
        e_t = cubeless_equity(torch_agent.afterstate_probabilities(a_torch[~same]))
        e_n = cubeless_equity(torch_agent.afterstate_probabilities(a_np[~same]))
        assert np.abs(e_t - e_n).max() < 1e-6
    assert same.mean() > 0.999, same.mean()
    print(f"same plays: {same.sum()} of {len(same)}")


def test_numpy_path_runs_without_torch_or_onnx(exported, tmp_path):
    """A fresh interpreter in which torch, onnx and onnxruntime cannot be imported plays with the export."""
    _, out = exported
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'onnx', 'onnxruntime', 'fastapi', 'uvicorn', 'yaml', 'gnubg_nn'):
            raise ImportError('blocked: ' + name)
        return None
sys.meta_path.insert(0, Block())
import json, numpy as np
from bgai.agents.numpy_bot import NumpyAgent
from bgai.core.position_id import decode_position_id
bot = NumpyAgent.load({out!r})
golden = json.load(open({out[:-5] + '.golden.json'!r}))
b = np.stack([decode_position_id(p) for p in golden['positions']])
p = bot.probabilities(b)
assert np.abs(p - np.array(golden['probs'])).max() < 1e-5, np.abs(p - np.array(golden['probs'])).max()
play = bot.best_play(b[0], (3, 1))
print('OK', play.steps, sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'onnx', 'onnxruntime')))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("OK ") and r.stdout.rstrip().endswith("[]")


def test_export_errors(tmp_path, capsys):
    assert main(["export", str(tmp_path / "missing.pt"), "--out", str(tmp_path / "m.onnx")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    assert main(["export", str(tmp_path / "junk.pt"), "--out", str(tmp_path / "m.onnx")]) == 2
    assert "is corrupt or not a bgai checkpoint (not a torch zip file)" in capsys.readouterr().err
    assert not (tmp_path / "m.onnx").exists()
    with pytest.raises(CheckpointError, match="no numpy weights"):
        load_model(tmp_path / "nothing.onnx")
    np.savez(tmp_path / "foreign.npz", x=np.zeros(3))
    with pytest.raises(CheckpointError, match="not a bgai numpy export"):
        load_model(tmp_path / "foreign.npz")


def test_npz_only_export(tmp_path):
    ckpt = _make_checkpoint(str(tmp_path / "m.pt"), "tesauro198", (20,), "sigmoid", seed=1)
    assert main(["export", ckpt, "--format", "npz", "--out", str(tmp_path / "w.npz")]) == 0
    assert (tmp_path / "w.npz").exists() and not (tmp_path / "w.onnx").exists()
    assert NumpyAgent.load(tmp_path / "w.npz").model.n_inputs == 198


def test_exporting_an_export_says_so(tmp_path, capsys):
    """An exported .npz / .onnx given to ``bgai export``: named as an export, not as a corrupt checkpoint."""
    ckpt = _make_checkpoint(str(tmp_path / "m.pt"), "tesauro198", (20,), "sigmoid", seed=1)
    assert main(["export", ckpt, "--format", "npz", "--out", str(tmp_path / "w.npz")]) == 0
    capsys.readouterr()
    for given in ("w.npz", "w.onnx"):
        assert main(["export", str(tmp_path / given), "--out", str(tmp_path / "again.npz")]) == 2
        err = capsys.readouterr().err
        assert err == f"bgai: error: {str(tmp_path / given)!r} is already an exported model; bgai export takes a " \
                      "checkpoint (.pt), such as the one it was exported from\n"
    assert not (tmp_path / "again.npz").exists()


def test_export_refuses_missing_directory_and_writes_usual_permissions(tmp_path, capsys):
    """Like ``eval --json``: a missing output directory is an error (never created), before any work."""
    import stat

    ckpt = _make_checkpoint(str(tmp_path / "m.pt"), "tesauro198", (20,), "sigmoid", seed=1)
    out = tmp_path / "nonexist" / "dir" / "m.onnx"
    assert main(["export", ckpt, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgai: error: cannot write ") and "does not exist" in err and "nonexist/dir" in err
    assert not (tmp_path / "nonexist").exists()
    old = os.umask(0o022)
    try:
        assert main(["export", ckpt, "--out", str(tmp_path / "ok.onnx")]) == 0
    finally:
        os.umask(old)
    modes = {n: stat.S_IMODE(os.stat(tmp_path / n).st_mode) for n in ("ok.onnx", "ok.npz", "ok.golden.json")}
    assert modes == {"ok.onnx": 0o644, "ok.npz": 0o644, "ok.golden.json": 0o644}
    assert sorted(os.listdir(tmp_path)) == ["m.pt", "ok.golden.json", "ok.npz", "ok.onnx"]
