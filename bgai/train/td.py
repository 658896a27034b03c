"""TD(lambda) self-play, batched: many games in parallel, one network call per move for all of them.

The value function
------------------
``V(s)`` is the network's five outcome probabilities (:data:`bgai.core.equity.OUTPUTS`) for the side on roll in
position ``s``, before it rolls.  A game is the sequence of positions ``s_0, s_1, ..., s_{T-1}`` at which a
player was on roll (the side on roll alternates); from ``s_t`` the player rolls, looks at every legal
afterstate ``a``, evaluates it as ``swap_perspective(V(flip(a)))`` (the opponent is on roll in ``flip(a)``,
:class:`bgai.agents.base.ProbabilityAgent`'s rule) and plays the one of highest cubeless equity (0-ply greedy;
with probability ``exploration`` a uniformly random legal play instead).  Then ``s_{t+1} = flip(a)``.  When the
play bears off the last checker, the game ends and the mover's result at ``s_{T-1}`` is
``z = [1, gammon, backgammon, 0, 0]`` (:func:`bgai.core.board.result_kind`).

How lambda is implemented: forward-view lambda-returns over finished games
--------------------------------------------------------------------------
For each finished game the targets are the lambda-returns, computed backwards from the end::

    G_{T-1} = z
    G_t     = swap((1 - lambda) * V(s_{t+1}) + lambda * G_{t+1})        t = T-2, ..., 0

(``swap`` = :func:`bgai.core.equity.swap_perspective`, since ``s_{t+1}`` has the other side on roll; it is affine,
so it commutes with the weighted average).  ``lambda = 0`` is TD(0) (target = the next position's value),
``lambda = 1`` is Monte Carlo (target = the result).  One update then takes a gradient step on
``mean_t 0.5 * ||V(s_t) - G_t||^2`` over the positions of all games that finished since the last update, the
``V`` inside the targets held constant (a semi-gradient, as in TD).  Values are those of the network **at
update time** (one forward pass over the finished games' positions gives both ``V(s_t)`` and the targets).

This is exactly offline TD(lambda): with the weights fixed during a game, the summed increments of the
backward view with accumulating eligibility traces, ``sum_t delta_t e_t`` with ``e_t = sum_{k<=t}
lambda^{t-k} grad V(s_k)``, equal ``sum_k (G_k - V(s_k)) grad V(s_k)`` (Sutton & Barto, *Reinforcement
Learning*, 2nd ed., section 12.1-12.2); :func:`offline_trace_increments` computes the backward view and
``tests/test_td.py`` checks the two against each other.  Games are batched: while some games finish and update
the network, the other ``parallel_games - 1`` continue with the new weights (their earlier moves were chosen with
older weights, as in any asynchronous self-play).

Parallel games and worker processes
-----------------------------------
The parallel games are split into ``config.td.workers`` shards (:mod:`bgai.train.selfplay`), shard 0 in the
trainer's process and the others in worker processes, so that move generation, encoding, the network and the
gradients use every core.  Each shard draws its dice, opening rolls and exploration from its own generator,
seeded from the run's seed and the shard's index, in a fixed order per step; the shards' gradients are added in
shard order.  So a run depends on the seed and the number of workers only, and can be checkpointed and resumed
exactly (:meth:`SelfPlayTrainer.state_dict`).

The workers are local processes (``td.backend: local``; weights and gradients through shared memory,
:class:`bgai.train.selfplay.SharedExchange`) or Ray actors (``td.backend: ray``, :mod:`bgai.train.ray_selfplay`;
the weights through Ray's object store once per update).  Both give the same run, bit for bit: the backend
changes where a shard runs, never what it computes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from bgai.core.equity import swap_perspective
from bgai.errors import CheckpointError
from bgai.model.bundle import ModelBundle
from bgai.model.features import Encoder, get_encoder
from bgai.model.nets import NetSpec, ValueNet
from bgai.train.config import TrainConfig
from bgai.train.ray_selfplay import RayShard
from bgai.train.selfplay import (
    GameShard,
    GameSummary,
    RemoteShard,
    SelfPlayWorkerError,
    SharedExchange,
    flat_parameters,
    shard_bounds,
    unflatten,
)
from bgai.util import ray_backend
from bgai.util.threads import limit_threads


def offline_trace_increments(net: torch.nn.Module, x: torch.Tensor, outcome: torch.Tensor, lam: float) -> list:
    """Backward view: the summed TD(lambda) increments of one game with accumulating eligibility traces.

    The weights stay fixed during the game (offline TD(lambda)); each of the 5 outputs has its own trace.
    With ``delta_t = swap(V_{t+1}) - V_t`` (``z - V_{T-1}`` at the end) in the side-on-roll view of ``s_t``,
    and the trace following the alternating view (``e_t = grad V_t + lambda * S e_{t-1}``, ``S`` the linear
    part of :func:`~bgai.core.equity.swap_perspective`), the increment is ``sum_t delta_t . e_t``.  Used by the tests
    as the reference for :func:`lambda_returns` (the forward view); slow (one backward pass per position).

    Args:
        net: maps ``(T, F)`` features to ``(T, 5)`` values.
        x: ``(T, F)`` features of the game's positions.
        outcome: ``(5,)`` result for the side on roll at the last position.
        lam: lambda.

    Returns:
        One tensor per parameter of ``net``: ``sum_t sum_o delta_t[o] * e_t[o]`` (the direction of gradient
        *ascent* of the value towards the targets).
    """
    params = [p for p in net.parameters()]
    perm = [0, 3, 4, 1, 2]
    sign = torch.tensor([-1.0, 1.0, 1.0, 1.0, 1.0])
    with torch.no_grad():
        v = net(x)
    t_len = x.shape[0]
    traces = None
    total = [torch.zeros_like(p) for p in params]
    for t in range(t_len):
        grads = []
        for o in range(5):
            out = net(x[t : t + 1])[0, o]
            grads.append(torch.autograd.grad(out, params))
        # grads[o][k]: gradient of output o wrt parameter k
        if traces is None:
            traces = [[g.clone() for g in grads[o]] for o in range(5)]
        else:
            # view change: output o at time t corresponds to output perm[o] at t-1 (with sign for 'win')
            traces = [
                [grads[o][k] + lam * sign[o] * traces[perm[o]][k] for k in range(len(params))] for o in range(5)
            ]
        if t < t_len - 1:
            nxt = torch.as_tensor(swap_perspective(v[t + 1].numpy()))
        else:
            nxt = outcome
        delta = nxt - v[t]
        for k in range(len(params)):
            for o in range(5):
                total[k] += delta[o] * traces[o][k]
    return total


# --- schedules -------------------------------------------------------------------------------------------------

def linear_schedule(start: float, end: float, span: int, games: int) -> float:
    """``start`` at 0 games, ``end`` at ``span`` games and after, linear in between (``span`` 0: ``start``)."""
    if span <= 0:
        return float(start)
    f = min(max(games / span, 0.0), 1.0)
    return float(start + (end - start) * f)


# --- the trainer -----------------------------------------------------------------------------------------------

@dataclass
class UpdateStats:
    """What one update did: positions and games used, mean squared TD error (sum over the 5 outputs), lr, lambda."""

    positions: int
    games: int
    loss: float
    lr: float
    lam: float


class TDStep(NamedTuple):
    """What :meth:`SelfPlayTrainer.step` did: the games finished in the step and the step's update (or None).

    Also a :class:`bgai.train.trainer.StepResult`: ``units`` (games finished) and ``sums`` (``plies``,
    ``gammons``, ``backgammons``, ``sq_error``, ``positions``)."""

    finished: list[GameSummary]
    stats: UpdateStats | None

    @property
    def units(self) -> int:
        return len(self.finished)

    @property
    def sums(self) -> dict[str, float]:
        out = {
            "plies": float(sum(g.plies for g in self.finished)),
            "gammons": float(sum(g.points >= 2 for g in self.finished)),
            "backgammons": float(sum(g.points >= 3 for g in self.finished)),
        }
        if self.stats is not None:
            out["sq_error"] = self.stats.loss * self.stats.positions
            out["positions"] = float(self.stats.positions)
        return out


#: Version of :meth:`SelfPlayTrainer.state_dict`'s layout (2: one state per shard).
STATE_FORMAT = 2


def check_resumable(state: dict, config: TrainConfig) -> None:
    """Check that a checkpoint's training state (:meth:`SelfPlayTrainer.state_dict`) can continue with
    ``config``, before any worker process starts.

    Raises:
        CheckpointError: a state of another layout, or of another ``parallel_games`` or ``workers``.
    """

    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        version = state.get("format", 1) if isinstance(state, dict) else "?"
        raise CheckpointError(
            f"checkpoint's training state was written by an older bgai (format {version}, this bgai reads "
            f"{STATE_FORMAT}); its weights load as a model, but the run cannot be resumed"
        )
    for key in ("parallel_games", "workers"):
        try:
            value = int(state[key])
        except (KeyError, TypeError, ValueError):
            raise CheckpointError(f"checkpoint's training state lacks a valid {key!r}") from None
        if value != getattr(config.td, key):
            raise CheckpointError(
                f"checkpoint was trained with {key}={value}, config has {getattr(config.td, key)}; resume with the "
                "checkpoint's value"
            )


class SelfPlayTrainer:
    """Self-play TD(lambda) training: network, optimiser, the parallel games in shards, counters; a
    :class:`bgai.train.trainer.Trainer` (unit ``'game'``).

    Args:
        config: the run's :class:`TrainConfig` (sections ``model``, ``run``, ``td``).
        net: a network to continue from (else a fresh one initialised from ``config.run.seed``).
        processes: run shards 1.. in worker processes (default); ``False`` runs every shard in this process, one
            after the other, with the same results (tests and debugging).

    The ``parallel_games`` games are split into ``config.td.workers`` shards (:mod:`bgai.train.selfplay`), each with
    its own random stream, so a run is determined by the seed and the number of workers. The main entry point is
    :meth:`step` (an update from the games that finished in earlier steps, when enough of their positions wait, and
    one move in every parallel game); :meth:`state_dict` / :meth:`load_state_dict` capture everything needed to
    resume exactly. Call :meth:`close` (or use the trainer as a context manager) to stop the worker processes (or
    Ray actors, with ``config.td.backend == 'ray'``: :mod:`bgai.train.ray_selfplay`). Every
    process, this one included (:func:`bgai.util.threads.limit_threads`), runs torch and BLAS single-threaded. Worker
    processes are started with ``multiprocessing``'s ``spawn`` method, which imports the main script: a script that
    makes a trainer with ``workers > 1`` must do so under ``if __name__ == "__main__":``.

    Raises:
        SelfPlayWorkerError: a worker process or Ray actor failed (from any method that talks to the workers).
        BgaiError: ``td.backend: ray`` without the ray package, or a Ray cluster that cannot be joined.
    """

    algorithm = "td"
    unit = "game"

    def __init__(self, config: TrainConfig, net: ValueNet | None = None, *, processes: bool = True):
        self.config = config
        td = config.td
        # this process plays a shard too: single-threaded kernels, like the workers (a second BLAS or torch
        # thread only competes with them for the cores)
        limit_threads(1)
        self.encoder: Encoder = get_encoder(config.model.encoding)
        if net is None:
            gen = torch.Generator().manual_seed(int(config.run.seed))
            spec = NetSpec(self.encoder.size, tuple(config.model.hidden), config.model.activation)
            net = ValueNet(spec, generator=gen)
        self.net = net
        self._bundle = ModelBundle.single(net, self.encoder)
        if td.optimizer == "adam":
            self.opt = torch.optim.Adam(net.parameters(), lr=td.lr)
        else:
            self.opt = torch.optim.SGD(net.parameters(), lr=td.lr)
        bounds = shard_bounds(td.parallel_games, td.workers)
        self.shards: list = []
        # local workers: weights to them and their gradients back through shared memory (bgai.train.selfplay);
        # Ray actors: the weights through the object store once per update (bgai.train.ray_selfplay)
        self._exchange = None
        on_ray = processes and len(bounds) > 1 and td.backend == "ray"
        if on_ray:
            ray_backend.connect(config.run.ray or "auto")  # BgaiError when ray is not installed
        elif processes and len(bounds) > 1:
            self._exchange = SharedExchange(sum(p.numel() for p in net.parameters()), len(bounds))
        self._published = False  # the workers hold the network's weights (False again after every update)
        self._remote: list = []
        try:
            for k, (a, b) in enumerate(bounds):
                if k == 0 or not processes:
                    # shards in this process play with the trainer's network itself (views, no copies)
                    self.shards.append(GameShard(config, net, k, b - a))
                elif on_ray:
                    self.shards.append(RayShard(config, net.spec, k, b - a))
                else:
                    self.shards.append(RemoteShard(config, net.spec, k, b - a, self._exchange))
                if not isinstance(self.shards[-1], GameShard):
                    self._remote.append(self.shards[-1])
        except BaseException:
            self.close()
            raise
        self._update_due = False  # enough finished positions wait: the next step starts with an update
        self.games = 0  # finished games
        self.steps = 0
        self.updates = 0
        self.positions_trained = 0
        try:
            for s in self._remote:
                s.wait_ready()
        except BaseException:
            self.close()
            raise

    # -- life cycle --
    def close(self) -> None:
        """Stop the worker processes and free the shared memory (idempotent)."""
        for s in self._remote:
            s.close()
        self._remote = []
        if self._exchange is not None:
            self._exchange.close()
            self._exchange = None

    def __enter__(self) -> "SelfPlayTrainer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    @classmethod
    def create(cls, config: TrainConfig, bundle: ModelBundle | None = None, state: dict | None = None):
        """The trainer of a run: fresh, or (``bundle``, ``state``) from a checkpoint, its training state checked
        (:func:`check_resumable`) before any worker process starts and then loaded.

        Raises:
            CheckpointError: a bundle of several nets or another encoding; a state that cannot continue.
        """
        net = None
        if bundle is not None:
            only = bundle.only
            if only.encoder.name != config.model.encoding:
                raise CheckpointError(f"checkpoint's net has encoding {only.encoder.name!r}, the config "
                                      f"{config.model.encoding!r}")
            net = only.net
            net.train()
        if state is not None:
            check_resumable(state, config)
        trainer = cls(config, net=net)
        if state is not None:
            try:
                trainer.load_state_dict(state)
            except BaseException:
                trainer.close()
                raise
        return trainer

    # -- the Trainer protocol --
    @property
    def done(self) -> int:
        """Games finished."""
        return self.games

    @property
    def total(self) -> int:
        """``config.run.games``."""
        return self.config.run.games

    def finished(self) -> bool:
        """Whether ``config.run.games`` games are played."""
        return self.games >= self.config.run.games

    def counters(self) -> dict[str, int]:
        """``{'games_trained'}``."""
        return {"games_trained": int(self.games)}

    def scalars(self, sums: dict[str, float]) -> dict[str, float]:
        """Self-play game length, gammon and backgammon rates, mean squared TD error, learning rate and lambda."""
        out: dict[str, float] = {}
        games = sums.get("games", 0.0)
        if games:
            out["charts/game_length_plies"] = sums.get("plies", 0.0) / games
            out["charts/selfplay_gammon_rate"] = sums.get("gammons", 0.0) / games
            out["charts/selfplay_backgammon_rate"] = sums.get("backgammons", 0.0) / games
        out["charts/lr"] = self.lr()
        out["charts/lambda"] = self.lam()
        if sums.get("positions"):
            out["losses/td_error"] = sums["sq_error"] / sums["positions"]
        return out

    def bundle(self) -> ModelBundle:
        """The trained one-net bundle (live weights), its record: algorithm, games, updates, config sections."""
        self._bundle.nets[0].record = {
            "algorithm": "td",
            "games_trained": int(self.games),
            "updates": int(self.updates),
            "positions_trained": int(self.positions_trained),
            "config": {k: v for k, v in self.config.to_dict().items() if k in ("model", "td")},
        }
        return self._bundle

    # -- schedules --
    def lr(self) -> float:
        c = self.config.td
        return linear_schedule(c.lr, c.lr_end, c.lr_decay_games, self.games)

    def lam(self) -> float:
        c = self.config.td
        return linear_schedule(c.lam, c.lam_end, c.lam_decay_games, self.games)

    # -- one step --
    def _apply(self, parts: list, lr: float, lam: float) -> UpdateStats:
        """One optimiser step on the lambda-return error of the shards' waiting games (module docstring): the
        shards' gradients added in shard order, divided by the number of positions."""
        positions = sum(p.positions for p in parts)
        games = sum(p.games for p in parts)
        if positions == 0:
            return UpdateStats(0, 0, 0.0, lr, lam)
        grad = parts[0].grad.copy()
        for p in parts[1:]:
            grad += p.grad
        grad /= np.float32(positions)
        params = list(self.net.parameters())
        for prm, part in zip(params, unflatten(torch.from_numpy(grad), params)):
            prm.grad = part.clone()
        for group in self.opt.param_groups:
            group["lr"] = lr
        self.opt.step()
        self._published = False
        self.updates += 1
        self.positions_trained += positions
        return UpdateStats(positions, games, sum(p.sq_error for p in parts) / positions, lr, lam)

    def step(self) -> TDStep:
        """One training step: an update from the games that finished in earlier steps, when at least
        ``min_update_states`` of their positions wait, and one move in every game, with the same weights.

        Each shard computes its gradient and then plays its move, all shards at once (one request per worker per
        step); the summed gradient then makes the update, so the next step plays with the new weights.  A game
        that finishes in step ``t`` is learned from in step ``t + 1``.

        Returns:
            :class:`TDStep`: ``(summaries of the games finished in this step, statistics of this step's update or
            None)``.
        """
        due = self._update_due
        lr, lam = self.lr(), self.lam()
        if self._remote and not self._published:
            self._publish()
        for s in self._remote:
            s.send("step", lam if due else None)
        parts = []
        finished: list[GameSummary] = []
        waiting = 0
        for s in self.shards:
            if not isinstance(s, GameShard):
                grad, done, pending = s.receive()
                if grad is not None and grad.grad is None:  # a local worker's: in shared memory
                    grad.grad = self._exchange.array[s.index]  # read (not kept) before the next step
                done = [GameSummary(plies, points) for plies, points in done]
            else:
                grad = s.gradient(lam) if due else None
                done = [GameSummary(g.positions.shape[0], g.points) for g in s.play_step()]
                pending = s.pending_positions()
            parts.append(grad)
            finished.extend(done)
            waiting += pending
        stats = self._apply(parts, lr, lam) if due else None
        self.steps += 1
        self.games += len(finished)
        self._update_due = self._due(waiting)
        return TDStep(finished, stats)

    def _publish(self) -> None:
        """The network's weights to the workers: into the shared memory, or once into Ray's object store."""
        if self._exchange is not None:
            self._exchange.publish(self.net)
        else:
            import ray  # only Ray actors are left (the optional extra bgai[ray])

            ref = ray.put(flat_parameters(self.net))
            for s in self._remote:
                s.weights = ref
        self._published = True

    def _due(self, waiting: int) -> bool:
        return waiting > 0 and waiting >= self.config.td.min_update_states

    # -- checkpoint state --
    def state_dict(self) -> dict:
        """Everything needed to resume exactly: optimiser, counters and every shard's games and generator."""
        for s in self._remote:
            s.send("state")
        shards = [s.state_dict() if isinstance(s, GameShard) else s.receive() for s in self.shards]
        return {
            "format": STATE_FORMAT,
            "optimizer": self.opt.state_dict(),
            "shards": shards,
            "games": int(self.games),
            "steps": int(self.steps),
            "updates": int(self.updates),
            "positions_trained": int(self.positions_trained),
            "parallel_games": int(self.config.td.parallel_games),
            "workers": int(self.config.td.workers),
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` output (the network's weights are loaded separately, before this call).

        Raises:
            CheckpointError: a state of another layout, another ``parallel_games`` or ``workers``, or malformed.
        """

        check_resumable(state, self.config)
        try:
            self.opt.load_state_dict(state["optimizer"])
            for s, sub in zip(self.shards, state["shards"], strict=True):
                if isinstance(s, GameShard):
                    s.load_state_dict(sub)
                else:
                    s.send("load", sub)
            for s in self._remote:
                s.receive()
            self._published = False
            self._update_due = self._due(sum(sum(int(n) for n in sub["pending_lengths"]) for sub in state["shards"]))
            self.games = int(state["games"])
            self.steps = int(state["steps"])
            self.updates = int(state["updates"])
            self.positions_trained = int(state["positions_trained"])
        except CheckpointError:
            raise
        except SelfPlayWorkerError as exc:
            raise CheckpointError(f"checkpoint's training state is malformed ({exc})") from None
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as exc:
            raise CheckpointError(f"checkpoint's training state is incomplete or malformed ({exc})") from None
