"""TD self-play with its workers as Ray actors (td.backend: ray, bgai.train.ray_selfplay) on a local Ray cluster
started here: the same run as the local backend, bit for bit, and a checkpoint of one resumes on the other."""

from __future__ import annotations

import copy
import signal

import pytest
import torch

from bgai.agents.neural import NeuralAgent
from bgai.agents.random import RandomAgent
from bgai.evaluate.series import evaluate
from bgai.train.config import TrainConfig
from bgai.train.td import SelfPlayTrainer

ray = pytest.importorskip("ray", reason="ray is not installed (the optional extra bgai[ray]: pip install 'bgai[ray]')")

CONFIG = dict(encoding="tesauro198", hidden=[16], parallel_games=32, games=300, seed=3, lam=0.7, lr=0.01,
              exploration=0.0, workers=2)


@pytest.fixture(scope="module")
def cluster():
    term = signal.getsignal(signal.SIGTERM)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    signal.signal(signal.SIGTERM, term)
    yield
    ray.shutdown()


def config(**kw) -> TrainConfig:
    return TrainConfig.from_dict({**CONFIG, **kw})


def _same(a: SelfPlayTrainer, b: SelfPlayTrainer) -> None:
    assert a.games == b.games and a.updates == b.updates and a.positions_trained == b.positions_trained
    for x, y in zip(a.net.parameters(), b.net.parameters()):
        assert torch.equal(x, y)
    sa, sb = a.state_dict(), b.state_dict()
    for ka, kb in zip(sa["shards"], sb["shards"], strict=True):
        assert ka["rng"] == kb["rng"]
        assert torch.equal(ka["boards"], kb["boards"]) and torch.equal(ka["traj"], kb["traj"])


def test_ray_workers_train_the_same_run_as_local(cluster):
    """A few hundred games with an actor for shard 1 == the same run in one process (and so with a local worker
    process, tests/test_train.py); the trained net beats a random player."""
    with SelfPlayTrainer(config(backend="ray")) as on_ray:
        local = SelfPlayTrainer(config(), processes=False)
        assert len(on_ray._remote) == 1 and not local._remote
        while not on_ray.finished():
            fa, sa = on_ray.step()
            fb, sb = local.step()
            assert fa == fb and (sa is None) == (sb is None) and (sa is None or sa.loss == sb.loss)
        assert local.finished() and on_ray.games >= 300 and on_ray.updates > 50
        _same(on_ray, local)
        rep = evaluate(NeuralAgent(on_ray.net, on_ray.encoder), RandomAgent(), 100, 5)
        assert rep.ppg > 0.5, rep.table()  # an untrained net scores about 0 against random


def test_checkpoint_resumes_across_backends(cluster):
    """A Ray run's training state continues locally (and back) exactly as an uninterrupted run."""
    with SelfPlayTrainer(config(backend="ray")) as a:
        for _ in range(60):
            a.step()
        state = copy.deepcopy(a.state_dict())  # as written to a checkpoint (the optimiser's tensors are live)
        weights = [p.detach().clone() for p in a.net.parameters()]
        for _ in range(40):
            a.step()
        net = type(a.net)(a.net.spec)
        with torch.no_grad():
            for p, w in zip(net.parameters(), weights):
                p.copy_(w)
        b = SelfPlayTrainer(config(), net=net, processes=False)
        b.load_state_dict(state)
        for _ in range(40):
            b.step()
        _same(a, b)
        with SelfPlayTrainer(config(backend="ray"), net=b.net) as c:  # and back onto Ray
            c.load_state_dict(copy.deepcopy(b.state_dict()))
            for _ in range(20):
                a.step()
                c.step()
            _same(a, c)
