"""Self-play shards: a slice of the parallel games, played and learned from in one process.

The trainer (:class:`bgai.train.td.SelfPlayTrainer`) splits its ``parallel_games`` games into
``config.td.workers`` contiguous shards.  Each :class:`GameShard` owns its games' positions, trajectories and
finished games waiting for the next update, and its own random generator (dice, opening rolls, exploration),
seeded from ``(config.run.seed, 7, shard index)``.  Per training step a shard

1. when the trainer has decided to update, returns the gradient of ``sum_t 0.5 * ||V(s_t) - G_t||^2`` over
   the positions of the games that finished in earlier steps (:meth:`GameShard.gradient`; ``G_t`` the
   lambda-returns of :func:`bgai.train.td.lambda_returns`), then
2. plays one move in every one of its games (:meth:`GameShard.play_step`: one ply of the game loop's core
   :class:`bgai.game.play.GameBatch`, with one network call for all afterstates, the 0-ply choice and
   exploration; a finished game's slot starts a new game at once), both with the same weights.

Both come in one request per step, so the processes meet once per step.  The trainer adds the shards'
gradients in shard order, divides by the number of positions and takes one optimiser step, so an update is the
same as one over all finished games together.  Shard 0 runs in the
trainer's process on the trainer's network; shards 1.. run in worker processes (:class:`RemoteShard`, started
with ``multiprocessing``'s ``spawn`` method, one thread each) on networks whose parameters are views of one
shared-memory block (:class:`SharedExchange`): the trainer copies its weights there after each update, and each
worker writes its gradient into its own slot of the same block, so only a few bytes of control travel through
the pipe per step (no weights or gradients are pickled).  Every message is answered before the trainer goes on
(the pipe's send and receive order the memory accesses), and all random draws are the shards' own, so a run
depends on the seed and the number of workers, never on timing.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing as mp
import signal
import threading
import traceback
import uuid
import weakref
from dataclasses import dataclass
from multiprocessing import shared_memory

import numpy as np
import torch
from torch.nn.utils import parameters_to_vector

from bgai.agents.neural import NeuralAgent
from bgai.core.movegen import afterstates
from bgai.game.play import GameBatch, SharedDice
from bgai.model.features import get_encoder
from bgai.model.nets import NetSpec, ValueNet
from bgai.train.config import TrainConfig
from bgai.train.targets import lambda_returns, terminal_targets
from bgai.util.threads import limit_threads

__all__ = ["FinishedGame", "GameSummary", "ShardGradient", "GameShard", "RemoteShard", "SelfPlayWorkerError", "SharedExchange",
           "flat_parameters", "set_flat_parameters", "unflatten"]


class SelfPlayWorkerError(RuntimeError):
    """A self-play worker process failed or stopped unexpectedly (the message names the worker and the cause)."""


@dataclass
class FinishedGame:
    """A finished self-play game: its positions ``(L, 2, 25)`` int8 (side on roll in row 0, in play order) and
    the winner's result kind ``points`` (1 single, 2 gammon, 3 backgammon)."""

    positions: np.ndarray
    points: int


@dataclass(frozen=True)
class GameSummary:
    """What the trainer reports of a finished game: its length in plies (positions on roll) and result kind."""

    plies: int
    points: int


@dataclass
class ShardGradient:
    """A shard's contribution to an update.

    ``grad``: ``(P,)`` float32, the gradient of ``sum 0.5 * ||V - G||^2`` over ``positions`` positions, in
    :func:`flat_parameters` order (None in a worker's reply: the gradient is in its :class:`SharedExchange` slot); ``sq_error``: the summed squared TD error (over positions and the 5 outputs);
    ``games``: finished games used.
    """

    grad: np.ndarray
    sq_error: float
    positions: int
    games: int


def flat_parameters(net: torch.nn.Module) -> np.ndarray:
    """All parameters of ``net`` as one ``(P,)`` float32 vector (``net.parameters()`` order, each flattened)."""
    return parameters_to_vector(net.parameters()).detach().numpy()


def unflatten(flat: torch.Tensor, params: list[torch.Tensor]) -> list[torch.Tensor]:
    """Views of a ``(P,)`` :func:`flat_parameters`-ordered vector shaped like each of ``params``.

    Raises:
        ValueError: the vector's length is not the parameters' total size.
    """
    sizes = [p.numel() for p in params]
    if flat.numel() != sum(sizes):
        raise ValueError(f"parameter vector has {flat.numel()} values, the network {sum(sizes)}")
    return [part.view_as(p) for part, p in zip(torch.split(flat, sizes), params)]


def set_flat_parameters(net: torch.nn.Module, flat: np.ndarray) -> None:
    """Copy a :func:`flat_parameters` vector into ``net``'s parameters, in place (views of them stay valid, unlike
    with ``torch.nn.utils.vector_to_parameters``, which rebinds them).

    Raises:
        ValueError: the vector's length is not the parameters' total size.
    """
    params = list(net.parameters())
    with torch.no_grad():
        for p, part in zip(params, unflatten(torch.from_numpy(np.asarray(flat, dtype=np.float32)), params)):
            p.copy_(part)


def shard_bounds(parallel_games: int, shards: int) -> list[tuple[int, int]]:
    """Contiguous ``[start, stop)`` game ranges of ``shards`` shards of ``parallel_games`` games (sizes differ
    by at most one)."""
    cuts = np.linspace(0, parallel_games, shards + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


class GameShard:
    """``n_games`` self-play games with their own random generator, played and learned from in this process.

    Args:
        config: the run's :class:`~bgai.train.config.TrainConfig` (encoding, exploration, seed).
        net: the network that chooses the plays and whose gradient :meth:`gradient` returns (not copied).
        index: the shard's index (its random stream is ``SeedSequence(config.run.seed, spawn_key=(7, index))``).
        n_games: number of parallel games.
    """

    def __init__(self, config, net: ValueNet, index: int, n_games: int):
        self.config = config
        self.index = int(index)
        self.encoder = get_encoder(config.model.encoding)
        self.net = net
        self.agent = NeuralAgent(net, self.encoder, ply=0, name="self-play")  # sees the net's current weights
        self.exploration = float(config.td.exploration)
        self.rng = np.random.default_rng(np.random.SeedSequence(int(config.run.seed), spawn_key=(7, self.index)))
        n = int(n_games)
        # the game loop's core, on this shard's generator: every ply rolls all games at once (roll_dice), then
        # choose() draws the exploration; no ply limit (the trajectories grow as needed)
        self.games = GameBatch(n, SharedDice(self.rng), max_plies=None)
        self.games.start(np.arange(n))
        self.traj = np.zeros((n, 128, 2, 25), dtype=np.int8)
        self.traj[:, 0] = self.games.boards
        self.lengths = np.ones(n, dtype=np.int64)
        self.pending: list[FinishedGame] = []

    @property
    def boards(self) -> np.ndarray:
        """``(n_games, 2, 25)`` int8 the current position of each game, side on roll in row 0."""
        return self.games.boards

    # -- self-play --
    def choose(self, slots: np.ndarray, players: np.ndarray, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """The shard's checker play (a :data:`bgai.game.play.Chooser`, the same player on both sides): 0-ply
        greedy plays (:meth:`bgai.agents.neural.NeuralAgent.pick_0ply`), with probability
        ``config.td.exploration`` a uniformly random legal play instead (two uniforms per game drawn from the
        shard's generator first, when exploring).

        Args:
            slots, players: the games and the player on roll in each (not used: both sides are the same player).
            boards: ``(N, 2, 25)`` int8, side on roll in row 0.
            dice: ``(N, 2)`` int.

        Returns:
            ``(N, 2, 25)`` int8 the chosen afterstates, mover's view.
        """
        n = boards.shape[0]
        u = self.rng.random((n, 2)) if self.exploration > 0 else None
        after, src = afterstates(boards, dice, validate=False)
        best = self.agent.pick_0ply(after, src, n)
        if u is not None:
            explore = np.flatnonzero(u[:, 0] < self.exploration)
            if explore.size:
                starts = np.searchsorted(src, np.arange(n), side="left")
                counts = np.diff(np.append(starts, src.size))
                best[explore] = starts[explore] + (u[explore, 1] * counts[explore]).astype(np.int64)
        return after[best]

    def play_step(self) -> list[FinishedGame]:
        """One ply in every game (:meth:`bgai.game.play.GameBatch.step` with :meth:`choose`); finished games are
        kept for the next :meth:`gradient`, returned, and their slots restarted from the starting position (so
        every slot plays every ply)."""
        ply = self.games.step(self.choose)
        slots = ply.slots
        done = slots[ply.done]
        finished = [FinishedGame(self.traj[i, : self.lengths[i]].copy(), int(p))
                    for i, p in zip(done, ply.points[ply.done])]
        live = slots[~ply.done]
        if live.size:
            if int(self.lengths[live].max()) >= self.traj.shape[1]:
                grow = np.zeros((self.traj.shape[0], self.traj.shape[1] * 2, 2, 25), dtype=np.int8)
                grow[:, : self.traj.shape[1]] = self.traj
                self.traj = grow
            self.traj[live, self.lengths[live]] = self.games.boards[live]
            self.lengths[live] += 1
        if done.size:
            self.games.start(done)
            self.traj[done, 0] = self.games.boards[done]
            self.lengths[done] = 1
        self.pending.extend(finished)
        return finished

    def pending_positions(self) -> int:
        """Positions of the finished games waiting for the next update."""
        return sum(g.positions.shape[0] for g in self.pending)

    # -- learning --
    def gradient(self, lam: float) -> ShardGradient:
        """Gradient of ``sum_t 0.5 * ||V(s_t) - G_t||^2`` over the waiting games' positions (lambda-returns
        ``G_t`` with ``lam``, targets held constant), computed with the network's current weights; the waiting
        games are then dropped."""
        games, self.pending = self.pending, []
        if not games:
            zero = np.zeros(sum(p.numel() for p in self.net.parameters()), dtype=np.float32)
            return ShardGradient(zero, 0.0, 0, 0)
        lengths = np.array([g.positions.shape[0] for g in games], dtype=np.int64)
        positions = np.concatenate([g.positions for g in games])
        outcomes = terminal_targets(np.array([g.points for g in games]))
        x = self.encoder(positions)
        hidden, v = self._forward(x)
        targets = lambda_returns(v, lengths, outcomes, lam)
        flat, sq = self._backward(x, hidden, v, targets)
        return ShardGradient(flat, sq, int(lengths.sum()), len(games))

    def _layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(weight (out, in), bias (out,))`` float32 numpy views of the network's linear layers, in order."""
        lin = [m for m in self.net.body if isinstance(m, torch.nn.Linear)]
        return [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in lin]

    def _forward(self, x: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """The network on ``x`` ``(N, F)`` float32 in numpy: ``(hidden activations per hidden layer, outputs (N, 5))``
        (the same function as ``ValueNet.forward``; float32, matrix products by numpy's BLAS)."""
        layers = self._layers()
        relu = self.net.spec.activation == "relu"
        hidden = []
        h = x
        for i, (w, b) in enumerate(layers):
            z = h @ w.T
            z += b
            t = torch.from_numpy(z)
            if i < len(layers) - 1 and relu:
                torch.relu_(t)
            else:
                torch.sigmoid_(t)
            if i < len(layers) - 1:
                hidden.append(z)
            h = z
        return hidden, h

    def _backward(self, x, hidden, v, targets) -> tuple[np.ndarray, float]:
        """Gradient ``(P,)`` float32 (:func:`flat_parameters` order) of ``sum 0.5 * ||v - targets||^2`` with the
        targets held constant, by backpropagation through :meth:`_forward`'s layers, and the summed squared
        error.  Sigmoid outputs: ``dL/dz = (v - G) v (1 - v)``; a hidden layer's ``h (1 - h)`` (sigmoid) or
        ``[h > 0]`` (relu)."""
        layers = self._layers()
        relu = self.net.spec.activation == "relu"
        err = v - targets
        sq = float(np.dot(err.ravel(), err.ravel()))
        d = err * v * (1.0 - v)  # dL/dz of the output layer
        sizes = [w.size + b.size for w, b in layers]
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        flat = np.empty(int(offsets[-1]), dtype=np.float32)
        inputs = [x] + hidden
        for i in range(len(layers) - 1, -1, -1):
            w, b = layers[i]
            o = int(offsets[i])
            np.matmul(d.T, inputs[i], out=flat[o : o + w.size].reshape(w.shape))
            np.sum(d, axis=0, out=flat[o + w.size : o + w.size + b.size])
            if i > 0:
                h = inputs[i]
                d = d @ w
                d *= (h > 0) if relu else h * (1.0 - h)
        return flat, sq

    # -- checkpoint state --
    def state_dict(self) -> dict:
        """The shard's games, waiting games and generator state (tensors, ints, lists, the generator's dict)."""
        tmax = int(self.lengths.max())
        return {
            "rng": self.rng.bit_generator.state,
            "boards": torch.from_numpy(self.games.boards.copy()),
            "first": torch.from_numpy(self.games.opening_due.copy()),
            "on_roll": torch.from_numpy(self.games.on_roll.copy()),
            "traj": torch.from_numpy(self.traj[:, :tmax].copy()),
            "lengths": torch.from_numpy(self.lengths.copy()),
            "pending_positions": torch.from_numpy(
                np.concatenate([g.positions for g in self.pending]) if self.pending else np.zeros((0, 2, 25), np.int8)
            ),
            "pending_lengths": [int(g.positions.shape[0]) for g in self.pending],
            "pending_points": [int(g.points) for g in self.pending],
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` output.

        Raises:
            KeyError, TypeError, ValueError: malformed state (the trainer turns them into a CheckpointError).
        """
        boards = state["boards"].numpy().astype(np.int8).copy()
        if boards.shape != self.games.boards.shape:
            raise ValueError(f"shard {self.index} holds {boards.shape[0]} games, expected {self.games.boards.shape[0]}")
        self.rng.bit_generator.state = state["rng"]
        first = state["first"].numpy().astype(np.bool_)
        g = self.games
        g.boards[:] = boards
        g.first_ply[:] = first
        g.opening_due[:] = first
        # the player on roll only names the sides (both are this shard's player); not saved before it was kept
        g.on_roll[:] = state["on_roll"].numpy() if "on_roll" in state else 0
        traj = state["traj"].numpy().astype(np.int8)
        cap = max(128, traj.shape[1] * 2)
        self.traj = np.zeros((traj.shape[0], cap, 2, 25), dtype=np.int8)
        self.traj[:, : traj.shape[1]] = traj
        self.lengths = state["lengths"].numpy().astype(np.int64).copy()
        g.plies[:] = self.lengths - 1  # a game's positions: the starting one and one after each ply
        pos = state["pending_positions"].numpy().astype(np.int8)
        self.pending = []
        off = 0
        for ln, pts in zip(state["pending_lengths"], state["pending_points"]):
            self.pending.append(FinishedGame(pos[off : off + ln].copy(), int(pts)))
            off += ln


class SharedExchange:
    """One shared-memory block of ``slots`` float32 vectors of ``size`` values: slot 0 the trainer's weights
    (:func:`flat_parameters` order), slot ``k`` the gradient of shard ``k`` (shard 0's slot is unused).

    The trainer creates it (``SharedExchange(size, slots)``) and owns it (:meth:`close` frees it); a worker
    attaches by name (``SharedExchange(size, slots, name=...)``) and binds its network's parameters to views of
    slot 0 (:meth:`bind`), so it always plays with the weights the trainer last published (:meth:`publish`).
    Who reads and writes what, when, is ordered by the request/reply messages of :class:`RemoteShard`.
    """

    def __init__(self, size: int, slots: int, name: str | None = None):
        self.size, self.slots = int(size), int(slots)
        nbytes = max(4, 4 * self.size * self.slots)
        if name is None:
            self.shm = shared_memory.SharedMemory(name=f"bgai-sp-{uuid.uuid4().hex[:16]}", create=True, size=nbytes)
            self.owner = True
        else:
            self.shm = shared_memory.SharedMemory(name=name)
            self.owner = False
        self.name = self.shm.name
        self.array = np.ndarray((self.slots, self.size), dtype=np.float32, buffer=self.shm.buf)

    def publish(self, net: torch.nn.Module) -> None:
        """Copy ``net``'s weights into slot 0."""
        with torch.no_grad():
            torch.cat([p.reshape(-1) for p in net.parameters()], out=torch.from_numpy(self.array[0]))

    def bind(self, net: torch.nn.Module) -> None:
        """Make ``net``'s parameters views of slot 0 (in place: modules keep their parameter objects)."""
        params = list(net.parameters())
        with torch.no_grad():
            for p, part in zip(params, unflatten(torch.from_numpy(self.array[0]), params)):
                p.data = part

    def close(self) -> None:
        """Detach (and, by the trainer, free) the block; views of it must not be used afterwards."""
        self.array = None
        try:
            self.shm.close()
        except BufferError:  # pragma: no cover - a view still alive (a worker's net): freed with the process
            pass
        if self.owner:
            try:
                self.shm.unlink()
            except FileNotFoundError:  # pragma: no cover
                pass
            self.owner = False


# --- worker processes ------------------------------------------------------------------------------------------

def _reply(conn, status: str, payload) -> bool:
    """Send a reply; False when the trainer is gone (then the worker just ends)."""
    try:
        conn.send((status, payload))
        return True
    except (BrokenPipeError, OSError):
        return False


def _worker_main(conn, config_dict: dict, spec_dict: dict, index: int, n_games: int, shared: tuple) -> None:
    """Body of a worker process: a :class:`GameShard` on a network bound to the trainer's shared weights
    (``shared``: the :class:`SharedExchange`'s ``(name, size, slots)``), driven by messages on ``conn``."""
    # Ctrl-C and SIGTERM (also when sent to the whole process group) are the trainer's to handle: it asks for our
    # games to save its checkpoint, then stops us; if the trainer dies, recv() ends and so do we.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:

        config = TrainConfig.from_dict(config_dict)
        net = ValueNet(NetSpec.from_dict(spec_dict))
        exchange = SharedExchange(shared[1], shared[2], name=shared[0])
        exchange.bind(net)
        grad_out = exchange.array[index]
        shard = GameShard(config, net, index, n_games)
        limit_threads(1)
    except BaseException:  # noqa: BLE001 - reported to the trainer
        _reply(conn, "error", traceback.format_exc())
        return
    if not _reply(conn, "ready", None):
        return
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the trainer is gone
            return
        op = msg[0]
        try:
            if op == "step":  # the weights are the shared ones: gradient into our slot, then one move
                grad = None
                if msg[1] is not None:
                    g = shard.gradient(msg[1])
                    grad_out[:] = g.grad
                    grad = ShardGradient(None, g.sq_error, g.positions, g.games)
                finished = shard.play_step()
                reply = (grad, [(g.positions.shape[0], g.points) for g in finished], shard.pending_positions())
            elif op == "state":
                reply = shard.state_dict()
            elif op == "load":
                shard.load_state_dict(msg[1])
                reply = None
            elif op == "stop":
                _reply(conn, "ok", None)
                return
            else:  # pragma: no cover - programming error
                raise ValueError(f"unknown message {op!r}")
        except BaseException:  # noqa: BLE001 - reported to the trainer
            _reply(conn, "error", traceback.format_exc())
            return
        if not _reply(conn, "ok", reply):
            return


class RemoteShard:
    """A :class:`GameShard` in a worker process (``spawn``), driven by request/reply messages over a pipe.

    A request is :meth:`send` followed by :meth:`receive`, so that the trainer can let all workers work at once.
    The process ignores SIGINT and SIGTERM (the trainer handles them), runs torch and BLAS single-threaded, and
    ends with :meth:`close` or when the trainer's process ends.

    Raises:
        SelfPlayWorkerError: the worker failed (its traceback is in the message) or died.
    """

    def __init__(self, config, spec: NetSpec, index: int, n_games: int, exchange: SharedExchange):
        ctx = mp.get_context("spawn")
        self.index = int(index)
        self.exchange = exchange
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(
            target=_worker_main,
            args=(child, config.to_dict(), spec.to_dict(), self.index, int(n_games),
                  (exchange.name, exchange.size, exchange.slots)),
            name=f"bgai-selfplay-{self.index}",
            daemon=True,
        )
        with _signals_ignored():  # so that the worker ignores them from its first instruction (see _worker_main)
            self.proc.start()
        child.close()
        self._ready = False
        _LIVE.add(self)

    def wait_ready(self) -> None:
        """Wait until the worker has built its shard (raises if it could not)."""
        if not self._ready:
            try:
                self.receive()
            except SelfPlayWorkerError as exc:
                raise SelfPlayWorkerError(
                    f"{exc}; worker processes start by importing the main script, so a script that trains with "
                    "workers > 1 must start the trainer under 'if __name__ == \"__main__\":'"
                ) from None
            self._ready = True

    def send(self, *msg) -> None:
        """Send one request: ``('step', lam|None)`` (gradient of the waiting games with ``lam`` unless None,
        written into the shard's slot of the :class:`SharedExchange`, then one move in every game, with the
        weights in its slot 0), ``('state',)``, ``('load', state)`` or ``('stop',)``."""
        try:
            self.conn.send(msg)
        except (BrokenPipeError, OSError) as exc:
            raise SelfPlayWorkerError(f"self-play worker {self.index} is gone ({exc})") from None

    def receive(self):
        """The reply to the last request (to a step: ``(ShardGradient with grad None | None, [(plies, points)
        of the games finished], positions waiting)``; the gradient itself is in the shard's exchange slot)."""
        try:
            status, payload = self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(timeout=1.0)
            raise SelfPlayWorkerError(
                f"self-play worker {self.index} stopped unexpectedly (exit code {self.proc.exitcode})"
            ) from None
        if status == "error":
            raise SelfPlayWorkerError(f"self-play worker {self.index} failed:\n{payload}")
        return payload

    def close(self) -> None:
        """Stop the worker process: ask it to stop, and kill it if it has not within a few seconds (it ignores
        SIGTERM, so ``terminate()`` would not do)."""
        _LIVE.discard(self)
        if self.proc.is_alive():
            try:
                self.conn.send(("stop",))
                if self.conn.poll(2.0):
                    self.conn.recv()
            except (BrokenPipeError, EOFError, OSError):
                pass
            self.proc.join(timeout=2.0)
            if self.proc.is_alive():  # a stuck worker
                self.proc.kill()
                self.proc.join(timeout=5.0)
        self.conn.close()


#: Workers not closed yet: stopped at interpreter exit, before multiprocessing's own exit handler (which would
#: wait for ever on a worker that ignores its SIGTERM).
_LIVE: "weakref.WeakSet[RemoteShard]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for shard in list(_LIVE):
        shard.close()


@contextlib.contextmanager
def _signals_ignored():
    """SIGINT and SIGTERM ignored in this process while starting a worker (an ignored signal stays ignored in
    the new program, and Python keeps it so), then restored; a no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
