"""Training runs: config loading, a short self-play run, exact resume, interrupt, checkpoint files."""

import os
import signal

import numpy as np
import pytest
import torch

from bgai.errors import BgaiError, CheckpointError, ConfigError
from bgai.model.bundle import load_net, read_checkpoint, save_checkpoint
from bgai.train.config import TrainConfig, load_config, parse_override
from bgai.train.run import train
from bgai.train.td import SelfPlayTrainer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = dict(
    encoding="tesauro198",
    hidden=[8],
    parallel_games=8,
    games=24,
    eval_every=0,
    checkpoint_every=0,
    log_every=4,
    seed=5,
    lam=0.7,
    lr=0.01,
    exploration=0.1,
)


def tiny(**kw):
    d = dict(TINY)
    d.update(kw)
    return TrainConfig.from_dict(d)


# --- config -------------------------------------------------------------------------------------------------

def test_shipped_configs_load():
    for name in ("quick.yaml", "tdgammon.yaml"):
        cfg = load_config(os.path.join(ROOT, "configs", name))
        assert cfg.run.games > 0 and cfg.model.hidden


def test_config_overrides_and_errors(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("games: 100\nhidden: [16]\nlr: 0.01\n")
    cfg = load_config(p, ["lr=0.05", "hidden=[32, 8]", "encoding=tesauro198"])
    assert cfg.td.lr == 0.05 and cfg.model.hidden == [32, 8] and cfg.model.encoding == "tesauro198" and cfg.run.games == 100
    with pytest.raises(ConfigError, match="'learning_rate'"):
        load_config(p, ["learning_rate=0.1"])
    p.write_text("games: 100\nbogus_key: 3\n")
    with pytest.raises(ConfigError, match="'bogus_key'"):
        load_config(p)
    with pytest.raises(ConfigError, match="'lam'"):
        TrainConfig.from_dict({"lam": 1.5})
    with pytest.raises(ConfigError, match="'games'"):
        TrainConfig.from_dict({"games": "many"})
    with pytest.raises(ConfigError, match="'encoding'"):
        TrainConfig.from_dict({"encoding": "nope"})
    with pytest.raises(ConfigError, match="key=value"):
        parse_override("lr0.1")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    assert parse_override("games=1000") == ("games", 1000)


# --- self-play ----------------------------------------------------------------------------------------------

def test_selfplay_games_are_legal_and_finish():
    from bgai.core.movegen import afterstates

    tr = SelfPlayTrainer(tiny())
    shard = tr.shards[0]
    seen = games = 0
    while games < 8:
        before = shard.boards.copy()
        finished = shard.play_step()
        games += len(finished)
        # every new position is the flip of a legal afterstate of the old one (or a restart)
        for i in range(before.shape[0]):
            if shard.lengths[i] == 1:
                continue
            nxt = shard.boards[i]
            assert shard.traj[i, shard.lengths[i] - 1].tobytes() == nxt.tobytes()
            seen += 1
        for g in finished:
            assert g.points in (1, 2, 3)
            assert g.positions.shape[0] >= 2
            np.testing.assert_array_equal(g.positions[0], shard.traj[0, 0])  # starts from the start position
            # consecutive positions: s_{t+1} is the flip of a legal afterstate of s_t for some roll
            t = int(np.random.default_rng(0).integers(g.positions.shape[0] - 1))
            s, s1 = g.positions[t], g.positions[t + 1]
            rolls = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)])
            after, _ = afterstates(np.repeat(s[None], 21, axis=0), rolls)
            assert any(np.array_equal(a[::-1], s1) for a in after)
    assert seen > 0
    assert shard.pending_positions() == sum(g.positions.shape[0] for g in shard.pending) > 0


def test_short_run_learns_to_beat_random_and_logs(tmp_path):
    """400 self-play games: the network already crushes a random player; checkpoint and logs are written."""
    from bgai.agents.neural import NeuralAgent
    from bgai.evaluate.series import evaluate

    cfg = tiny(games=400, parallel_games=64, hidden=[16], encoding="extended", exploration=0.0, lr=0.01,
               seed=1, log_every=100)
    res = train(cfg, str(tmp_path / "run"), progress=False, tensorboard=True, evaluate=False)
    assert res.games >= 400 and not res.interrupted
    net, enc, ckpt = load_net(res.last_path)
    assert ckpt["games_trained"] == res.games and enc.name == "extended" and "trainer" in ckpt
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(tmp_path / "run"))
    rep = evaluate(NeuralAgent(net, enc), "random", 100, 3)
    assert rep.ppg > 0.8, rep.table()  # an untrained net scores about +0.5 against random


@pytest.mark.parametrize("workers", [1, 2])
def test_resume_is_exact(tmp_path, workers):
    """N games in one go == N/2 games, resume, N/2 more: identical weights, optimiser and generators (with one
    process, and with a worker process whose games are saved and restored through it)."""
    full = train(tiny(games=40, workers=workers), str(tmp_path / "full"), progress=False, tensorboard=False,
                 evaluate=False)
    half = train(tiny(games=20, workers=workers), str(tmp_path / "half"), progress=False, tensorboard=False,
                 evaluate=False)
    assert 20 <= half.games < 40
    rest = train(None, str(tmp_path / "half"), resume=True, overrides={"games": 40}, progress=False,
                 tensorboard=False, evaluate=False)
    assert rest.games == full.games
    a, b = read_checkpoint(full.last_path), read_checkpoint(rest.last_path)
    for k, v in a["nets"][0]["state_dict"].items():
        assert torch.equal(v, b["nets"][0]["state_dict"][k]), k
    assert len(a["trainer"]["shards"]) == workers
    for sa, sb in zip(a["trainer"]["shards"], b["trainer"]["shards"]):
        assert sa["rng"] == sb["rng"]
        assert torch.equal(sa["boards"], sb["boards"]) and torch.equal(sa["lengths"], sb["lengths"])
        live = torch.arange(sa["traj"].shape[1])[None, :] < sa["lengths"][:, None]  # the games' positions so far
        assert torch.equal(sa["traj"][live], sb["traj"][live])
    assert a["trainer"]["steps"] == b["trainer"]["steps"]
    sa, sb = a["trainer"]["optimizer"]["state"], b["trainer"]["optimizer"]["state"]
    for k in sa:
        assert torch.equal(sa[k]["exp_avg"], sb[k]["exp_avg"])
    # and training changed the weights at all
    fresh = SelfPlayTrainer(tiny()).net.state_dict()
    assert any(not torch.equal(fresh[k], v) for k, v in a["nets"][0]["state_dict"].items())


def test_worker_processes_play_the_same_games_as_one_process():
    """Two shards in two processes == the same two shards in one process: same games, same weights."""
    with SelfPlayTrainer(tiny(parallel_games=32, workers=2)) as a:
        b = SelfPlayTrainer(tiny(parallel_games=32, workers=2), processes=False)
        assert len(a._remote) == 1 and not b._remote
        for _ in range(120):
            fa, sa = a.step()
            fb, sb = b.step()
            assert fa == fb
            assert (sa is None) == (sb is None) and (sa is None or sa.loss == sb.loss)
        assert a.games == b.games > 0 and a.updates == b.updates > 0
        for x, y in zip(a.net.parameters(), b.net.parameters()):
            assert torch.equal(x, y)
        sa, sb = a.state_dict(), b.state_dict()
        for ka, kb in zip(sa["shards"], sb["shards"]):
            assert ka["rng"] == kb["rng"]
            assert torch.equal(ka["boards"], kb["boards"]) and torch.equal(ka["traj"], kb["traj"])


def test_one_update_over_all_shards_equals_one_over_all_games():
    """The shards' summed gradients / positions == the gradient of the mean loss over all their games."""
    from bgai.train.targets import lambda_returns, terminal_targets

    tr = SelfPlayTrainer(tiny(parallel_games=32, workers=3), processes=False)
    while sum(s.pending_positions() for s in tr.shards) < 200 or not all(s.pending for s in tr.shards):
        for s in tr.shards:
            s.play_step()
    games = [g for s in tr.shards for g in s.pending]
    lengths = np.array([g.positions.shape[0] for g in games])
    x = torch.from_numpy(tr.encoder(np.concatenate([g.positions for g in games])))
    v = tr.net(x)
    tgt = lambda_returns(v.detach().numpy(), lengths, terminal_targets(np.array([g.points for g in games])), 0.7)
    loss = 0.5 * ((v - torch.from_numpy(tgt)) ** 2).sum(dim=1).mean()
    want = torch.autograd.grad(loss, list(tr.net.parameters()))
    parts = [s.gradient(0.7) for s in tr.shards]
    got = sum(p.grad for p in parts) / sum(p.positions for p in parts)
    np.testing.assert_allclose(got, torch.cat([w.reshape(-1) for w in want]).numpy(), rtol=1e-4, atol=1e-7)
    assert sum(p.positions for p in parts) == lengths.sum() and not any(s.pending for s in tr.shards)


@pytest.mark.parametrize("activation", ["sigmoid", "relu"])
def test_shard_gradient_is_torch_autograd_of_the_lambda_return_loss(activation):
    """GameShard.gradient's numpy backpropagation == torch autograd on the same loss, two hidden layers."""
    from bgai.train.targets import lambda_returns, terminal_targets

    tr = SelfPlayTrainer(tiny(parallel_games=16, hidden=[12, 7], activation=activation, encoding="extended"),
                         processes=False)
    shard = tr.shards[0]
    while shard.pending_positions() < 150:
        shard.play_step()
    games = list(shard.pending)
    lengths = np.array([g.positions.shape[0] for g in games])
    v = tr.net(torch.from_numpy(tr.encoder(np.concatenate([g.positions for g in games]))))
    tgt = lambda_returns(v.detach().numpy(), lengths, terminal_targets(np.array([g.points for g in games])), 0.6)
    sq = ((v - torch.from_numpy(tgt)) ** 2).sum()
    want = torch.cat([w.reshape(-1) for w in torch.autograd.grad(0.5 * sq, list(tr.net.parameters()))]).numpy()
    got = shard.gradient(0.6)
    assert got.positions == lengths.sum() and got.games == len(games)
    np.testing.assert_allclose(got.grad, want, rtol=1e-4, atol=1e-6)
    assert got.sq_error == pytest.approx(float(sq.detach()), rel=1e-5)
    assert np.abs(want).max() > 1e-3  # a real gradient


def test_interrupt_leaves_loadable_checkpoint(tmp_path):
    out = str(tmp_path / "run")
    calls = {"n": 0}

    def ctrl_c(tr):
        calls["n"] += 1
        if calls["n"] == 30:
            os.kill(os.getpid(), signal.SIGINT)

    res = train(tiny(games=10_000), out, progress=False, tensorboard=False, evaluate=False, on_step=ctrl_c)
    assert res.interrupted and res.games < 10_000
    ckpt = read_checkpoint(res.last_path)
    assert ckpt["trainer"]["steps"] == 30 and ckpt["games_trained"] == res.games
    more = train(None, out, resume=True, overrides={"games": res.games + 8}, progress=False, tensorboard=False,
                 evaluate=False)
    assert more.games >= res.games + 8 and not more.interrupted


def test_refuses_to_overwrite_a_run(tmp_path):
    out = str(tmp_path / "run")
    train(tiny(games=8), out, progress=False, tensorboard=False, evaluate=False)
    with pytest.raises(ConfigError, match="--resume"):
        train(tiny(games=8), out, progress=False, tensorboard=False, evaluate=False)
    with pytest.raises(CheckpointError):
        train(None, str(tmp_path / "nothing"), resume=True, progress=False, tensorboard=False, evaluate=False)


# --- checkpoint files ---------------------------------------------------------------------------------------

def test_corrupt_and_foreign_files(tmp_path):
    out = str(tmp_path / "run")
    res = train(tiny(games=8), out, progress=False, tensorboard=False, evaluate=False)
    good = open(res.last_path, "rb").read()
    trunc = tmp_path / "trunc.pt"
    trunc.write_bytes(good[: len(good) // 2])
    with pytest.raises(CheckpointError, match="corrupt or not a bgai checkpoint") as info:
        read_checkpoint(trunc)
    assert "weights_only" not in str(info.value)  # never pass on torch's unsafe advice
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"hello, this is not a checkpoint")
    with pytest.raises(CheckpointError, match="not a torch zip file"):
        read_checkpoint(junk)
    foreign = tmp_path / "foreign.pt"
    torch.save({"state_dict": {"w": torch.zeros(3)}}, foreign)
    with pytest.raises(CheckpointError, match="not a bgai checkpoint"):
        read_checkpoint(foreign)
    evil = tmp_path / "evil.pt"
    torch.save({"format": "bgai-checkpoint", "x": np.random.default_rng(0)}, evil)  # needs unsafe unpickling
    with pytest.raises(CheckpointError, match="torch could not read it") as info:
        read_checkpoint(evil)
    assert "weights_only" not in str(info.value)
    with pytest.raises(CheckpointError, match="does not exist"):
        read_checkpoint(tmp_path / "none.pt")
    ck = read_checkpoint(res.last_path)
    ck["nets"][0]["state_dict"] = {k: v[:1] for k, v in ck["nets"][0]["state_dict"].items()}
    bad = tmp_path / "bad.pt"
    save_checkpoint(ck, bad)
    with pytest.raises(CheckpointError, match="do not fit"):
        load_net(bad)
    ck = read_checkpoint(res.last_path)
    ck["format_version"] = 99
    save_checkpoint(ck, bad)
    with pytest.raises(CheckpointError, match="format version"):
        read_checkpoint(bad)
    # no temporary files left behind
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]


def test_resume_refuses_another_worker_count_and_old_states(tmp_path):
    out = str(tmp_path / "run")
    train(tiny(games=8, workers=2), out, progress=False, tensorboard=False, evaluate=False)
    with pytest.raises(CheckpointError, match="workers=2, config has 1"):
        train(None, out, resume=True, overrides={"games": 16, "workers": 1}, progress=False, tensorboard=False,
              evaluate=False)
    # a training state in the layout of bgai before worker processes (one generator, no shards)
    ckpt = read_checkpoint(os.path.join(out, "last.pt"))
    ckpt["config"]["threads"] = 1
    del ckpt["config"]["td"]["workers"]
    ckpt["trainer"] = {k: v for k, v in ckpt["trainer"].items() if k not in ("format", "shards", "workers")}
    save_checkpoint(ckpt, os.path.join(out, "last.pt"))
    with pytest.raises(CheckpointError, match="older bgai"):
        train(None, out, resume=True, overrides={"games": 16}, progress=False, tensorboard=False, evaluate=False)
    with pytest.raises(ConfigError, match="'threads' was replaced by 'workers'"):
        tiny(threads=2)
    with pytest.raises(ConfigError, match="'workers'"):
        tiny(workers=0)
    with pytest.raises(ConfigError, match="must not exceed 'parallel_games'"):
        tiny(workers=9, parallel_games=8)


def test_a_dead_worker_is_reported_by_name():
    from bgai.train.selfplay import SelfPlayWorkerError

    with SelfPlayTrainer(tiny(parallel_games=16, workers=2)) as tr:
        tr.step()
        tr._remote[0].proc.kill()
        tr._remote[0].proc.join()
        with pytest.raises(SelfPlayWorkerError, match="worker 1 (stopped unexpectedly|is gone)"):
            for _ in range(3):
                tr.step()


def test_a_stuck_worker_is_killed_on_close():
    with SelfPlayTrainer(tiny(parallel_games=16, workers=2)) as tr:
        tr.step()
        proc = tr._remote[0].proc
        os.kill(proc.pid, signal.SIGSTOP)  # stuck: answers nothing, and ignores SIGTERM besides
    assert not proc.is_alive() and proc.exitcode == -signal.SIGKILL


def test_resume_keeps_the_network_and_bad_run_folders_are_refused_early(tmp_path):
    out = str(tmp_path / "run")
    train(tiny(games=8), out, progress=False, tensorboard=False, evaluate=False)
    for key, value in (("hidden", [16]), ("encoding", "extended"), ("activation", "relu")):
        with pytest.raises(ConfigError, match=f"config key '{key}' cannot change on --resume"):
            train(None, out, resume=True, overrides={"games": 16, key: value}, progress=False, tensorboard=False,
                  evaluate=False)
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    with pytest.raises(BgaiError, match="cannot create run folder .*afile.*: a file of that name exists"):
        train(tiny(games=8, workers=2), str(blocker), progress=False, tensorboard=False, evaluate=False)
    with pytest.raises(BgaiError, match="cannot create run folder .*afile/run"):
        train(tiny(games=8), str(blocker / "run"), progress=False, tensorboard=False, evaluate=False)


def test_flipped_bytes_in_a_checkpoint_are_caught(tmp_path):
    out = str(tmp_path / "run")
    res = train(tiny(games=8), out, progress=False, tensorboard=False, evaluate=False)
    data = bytearray(open(res.last_path, "rb").read())
    rng = np.random.default_rng(3)
    for i in rng.integers(len(data) // 4, len(data) // 2, size=50):  # inside the stored tensors
        data[i] ^= 0xFF
    bad = tmp_path / "flipped.pt"
    bad.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="is corrupt"):
        read_checkpoint(bad)


def test_a_run_folder_in_use_is_refused_and_odd_values_are_config_errors(tmp_path):
    from bgai.train.loop import lock_run_folder

    out = str(tmp_path / "run")
    train(tiny(games=8), out, progress=False, tensorboard=False, evaluate=False)
    held = lock_run_folder(out)  # as another 'bgai train' on the same folder would
    try:
        with pytest.raises(ConfigError, match="is in use by another 'bgai train'"):
            train(None, out, resume=True, overrides={"games": 16}, progress=False, tensorboard=False, evaluate=False)
    finally:
        held.close()
    more = train(None, out, resume=True, overrides={"games": 16}, progress=False, tensorboard=False, evaluate=False)
    assert more.games >= 16
    with pytest.raises(ConfigError, match="'seed' must be < 2\\*\\*63"):
        tiny(seed=2**64)
    with pytest.raises(ConfigError, match="'parallel_games' must be <= 65536"):
        tiny(parallel_games=100_000_000)
