"""Self-play shards as Ray actors: ``td.backend: ray`` of :class:`bgai.train.td.SelfPlayTrainer` (``bgai[ray]``).

With ``td.backend: ray`` the trainer joins the Ray cluster of ``run.ray`` (``'auto'`` when empty: the cluster
``ray start`` made on this machine, else a local one; :func:`bgai.util.ray_backend.connect`) and runs shards
``1 .. workers-1`` as Ray actors (:class:`RayShard`, one CPU each) instead of local worker processes; shard 0
stays in the trainer's process, as with the local backend.  Per training step:

* after an update the trainer puts its weights into Ray's object store **once** (one ``ray.put`` of the
  ``(P,)`` float32 vector, :func:`bgai.train.selfplay.flat_parameters`); every actor gets that reference with its
  next step and copies the weights into its own network (each node fetches the object once);
* each actor computes the gradient of its finished games with those weights (when an update is due), then plays
  one move in each of its games, and returns the gradient ``(P,)`` float32, the finished games' ``(plies,
  points)`` and the number of positions waiting (a task per actor per step);
* the trainer adds the gradients in shard order and takes the optimiser step.

Reproducible: yes.  Every random draw is a shard's own (its generator is seeded from ``(run.seed, 7, shard
index)``), the gradients are added in shard order, and every step waits for all shards, so a run depends on the
seed and ``td.workers`` only: it is bit for bit the run of the local backend with the same ``workers`` (weights,
games, optimiser state; ``tests/test_ray_selfplay.py``), wherever the actors run, and a checkpoint of either
backend resumes on the other.  (A run with another ``workers`` plays other games: the games are split
differently.)

Not supported: an actor that dies (its process killed, its node lost) stops the run with
:class:`~bgai.train.selfplay.SelfPlayWorkerError` (its games exist only in that actor); resume from the last
checkpoint, which continues exactly.  The lock-step costs a Ray task round trip per step (about a millisecond on
one machine; a step is 5-20 ms of work), so Ray pays off only across machines; on one machine the local backend's
shared memory is faster.
"""

from __future__ import annotations

import os

from bgai.model.nets import NetSpec, ValueNet
from bgai.train.config import TrainConfig
from bgai.train.selfplay import GameShard, SelfPlayWorkerError, set_flat_parameters
from bgai.util.ray_backend import release_workers
from bgai.util.threads import limit_threads

__all__ = ["RayShard", "ShardActor"]


class ShardActor:
    """The body of a self-play Ray actor: a :class:`~bgai.train.selfplay.GameShard` on its own network.

    Args:
        config_dict: the run's :meth:`TrainConfig.to_dict`.
        spec_dict: the network's :meth:`NetSpec.to_dict`.
        index: the shard's index (>= 1; it fixes the shard's random stream).
        n_games: the shard's parallel games.
    """

    def __init__(self, config_dict: dict, spec_dict: dict, index: int, n_games: int):
        self.net = ValueNet(NetSpec.from_dict(spec_dict))
        self.shard = GameShard(TrainConfig.from_dict(config_dict), self.net, index, n_games)
        limit_threads(1)

    def ready(self) -> int:
        """The actor's process id (once its shard is built)."""
        return os.getpid()

    def step(self, weights, lam):
        """New weights (``(P,)`` float32, or None to keep them), the gradient of the waiting games with ``lam``
        (None: no update due), then one move in every game.

        Returns:
            ``(ShardGradient | None, [(plies, points) of the games finished], positions waiting)``.
        """
        if weights is not None:
            set_flat_parameters(self.net, weights)
        grad = self.shard.gradient(lam) if lam is not None else None
        finished = self.shard.play_step()
        return grad, [(g.positions.shape[0], g.points) for g in finished], self.shard.pending_positions()

    def state(self) -> dict:
        """:meth:`GameShard.state_dict`."""
        return self.shard.state_dict()

    def load(self, state: dict) -> None:
        """:meth:`GameShard.load_state_dict`."""
        self.shard.load_state_dict(state)


_ACTOR = None


def _actor_class():
    global _ACTOR
    if _ACTOR is None:
        import ray  # the optional extra bgai[ray]

        # no restarts: a restarted actor would have lost its games (the module docstring)
        _ACTOR = ray.remote(num_cpus=1, max_restarts=0)(ShardActor)
    return _ACTOR


class RayShard:
    """A shard in a Ray actor, with :class:`~bgai.train.selfplay.RemoteShard`'s request/reply interface.

    Set :attr:`weights` to an object reference of the weights after each update (the trainer puts them once for
    all actors); the next ``('step', lam)`` request sends it, the ones after that send none.

    Raises:
        SelfPlayWorkerError: the actor failed (its traceback in the message) or died.
    """

    def __init__(self, config: TrainConfig, spec: NetSpec, index: int, n_games: int):
        self.index = int(index)
        release_workers()  # actors this driver kept after a work-unit job hold CPUs this actor may need
        self.actor = _actor_class().remote(config.to_dict(), spec.to_dict(), self.index, int(n_games))
        self.weights = None
        self._ref = self.actor.ready.remote()
        self._ready = False

    def _get(self, ref):
        import ray

        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            raise SelfPlayWorkerError(f"self-play Ray actor {self.index} died ({type(exc).__name__})") from None
        except ray.exceptions.RayTaskError as exc:
            raise SelfPlayWorkerError(f"self-play Ray actor {self.index} failed:\n{exc}") from None

    def wait_ready(self) -> None:
        """Wait until the actor has built its shard."""
        if not self._ready:
            self._get(self._ref)
            self._ready = True

    def send(self, *msg) -> None:
        """Send one request: ``('step', lam|None)``, ``('state',)`` or ``('load', state)``."""
        op = msg[0]
        if op == "step":
            self._ref = self.actor.step.remote(self.weights, msg[1])
            self.weights = None
        elif op == "state":
            self._ref = self.actor.state.remote()
        elif op == "load":
            self._ref = self.actor.load.remote(msg[1])
        else:  # pragma: no cover - programming error
            raise ValueError(f"unknown request {op!r}")

    def receive(self):
        """The reply to the last request (a step's: ``(ShardGradient | None, [(plies, points)], waiting)``)."""
        return self._get(self._ref)

    def close(self) -> None:
        """Stop the actor (idempotent)."""
        if self.actor is not None:
            import ray

            try:
                ray.kill(self.actor)
            except Exception:  # noqa: BLE001 - already gone, or Ray shut down
                pass
            self.actor = None
