"""TD(lambda) self-play, batched: many games in parallel, one network call per move for all of them.

The value function
------------------
``V(s)`` is the network's five outcome probabilities (:data:`bgai.equity.OUTPUTS`) for the side on roll in
position ``s``, before it rolls.  A game is the sequence of positions ``s_0, s_1, ..., s_{T-1}`` at which a
player was on roll (the side on roll alternates); from ``s_t`` the player rolls, looks at every legal
afterstate ``a``, evaluates it as ``swap_perspective(V(flip(a)))`` (the opponent is on roll in ``flip(a)``,
:class:`bgai.agents.base.ProbabilityAgent`'s rule) and plays the one of highest cubeless equity (0-ply greedy;
with probability ``exploration`` a uniformly random legal play instead).  Then ``s_{t+1} = flip(a)``.  When the
play bears off the last checker, the game ends and the mover's result at ``s_{T-1}`` is
``z = [1, gammon, backgammon, 0, 0]`` (:func:`bgai.board.result_kind`).

How lambda is implemented: forward-view lambda-returns over finished games
--------------------------------------------------------------------------
For each finished game the targets are the lambda-returns, computed backwards from the end::

    G_{T-1} = z
    G_t     = swap((1 - lambda) * V(s_{t+1}) + lambda * G_{t+1})        t = T-2, ..., 0

(``swap`` = :func:`bgai.equity.swap_perspective`, since ``s_{t+1}`` has the other side on roll; it is affine,
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

Everything random comes from one ``np.random.Generator`` (dice, opening rolls, exploration), drawn in a fixed
order per step, so a run is reproducible and can be checkpointed and resumed exactly
(:meth:`SelfPlayTrainer.state_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bgai.agents.neural import group_argmax
from bgai.board import flip, result_kind, starting_board
from bgai.equity import cubeless_equity, finished_probabilities, swap_perspective
from bgai.features import Encoder, get_encoder
from bgai.nets import FastForward, NetSpec, ValueNet
from bgai.train.config import TrainConfig


# --- lambda-returns --------------------------------------------------------------------------------------------

def terminal_targets(points: np.ndarray) -> np.ndarray:
    """Outcome vector of the winner, ``(N, 5)`` float32, from result kinds ``points`` (1, 2, 3)."""
    p = np.asarray(points)
    z = np.zeros((p.shape[0], 5), dtype=np.float32)
    z[:, 0] = 1.0
    z[:, 1] = p >= 2
    z[:, 2] = p >= 3
    return z


def lambda_returns(values: np.ndarray, lengths: np.ndarray, outcomes: np.ndarray, lam: float) -> np.ndarray:
    """Lambda-return targets for a batch of finished games (see the module docstring).

    Args:
        values: ``(S, 5)`` ``V(s_t)`` of every position of every game, games concatenated in order, each game's
            positions in time order (side on roll alternating).
        lengths: ``(G,)`` int, positions per game (>= 1), summing to ``S``.
        outcomes: ``(G, 5)`` result for the side on roll at each game's last position (it made the winning
            play), e.g. :func:`terminal_targets`.
        lam: lambda in [0, 1].

    Returns:
        ``(S, 5)`` float32 targets ``G_t`` in the same order.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    values = np.asarray(values, dtype=np.float32)
    g = lengths.shape[0]
    if g == 0:
        return np.zeros((0, 5), dtype=np.float32)
    tmax = int(lengths.max())
    # right-align every game in a (G, tmax) grid so that all end in the last column
    ends = np.cumsum(lengths)
    starts = ends - lengths
    col0 = tmax - lengths  # column of each game's first position
    flat_game = np.repeat(np.arange(g), lengths)
    flat_col = np.arange(values.shape[0]) - np.repeat(starts, lengths) + np.repeat(col0, lengths)
    grid = np.zeros((g, tmax, 5), dtype=np.float32)
    grid[flat_game, flat_col] = values
    # Work in one fixed view per game, the last mover's: positions an odd number of plies before the end have
    # the other side on roll, so swap them; swap is an affine involution, so in the fixed view the recursion is
    # the plain H_t = (1 - lambda) W_{t+1} + lambda H_{t+1}, H_{T-1} = z, and G_t = H_t swapped back.
    odd = (tmax - 1 - np.arange(tmax)) % 2 == 1
    grid[:, odd] = swap_perspective(grid[:, odd])
    ret = np.empty_like(grid)
    h = np.asarray(outcomes, dtype=np.float32).copy()
    ret[:, tmax - 1] = h
    lam = np.float32(lam)
    one_minus = np.float32(1.0) - lam
    for t in range(tmax - 2, -1, -1):
        h *= lam
        h += one_minus * grid[:, t + 1]
        ret[:, t] = h
    ret[:, odd] = swap_perspective(ret[:, odd])
    return ret[flat_game, flat_col]


def offline_trace_increments(net: torch.nn.Module, x: torch.Tensor, outcome: torch.Tensor, lam: float) -> list:
    """Backward view: the summed TD(lambda) increments of one game with accumulating eligibility traces.

    The weights stay fixed during the game (offline TD(lambda)); each of the 5 outputs has its own trace.
    With ``delta_t = swap(V_{t+1}) - V_t`` (``z - V_{T-1}`` at the end) in the side-on-roll view of ``s_t``,
    and the trace following the alternating view (``e_t = grad V_t + lambda * S e_{t-1}``, ``S`` the linear
    part of :func:`~bgai.equity.swap_perspective`), the increment is ``sum_t delta_t . e_t``.  Used by the tests
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
class FinishedGame:
    """A finished self-play game: its positions ``(L, 2, 25)`` int8 (side on roll in row 0) and result."""

    positions: np.ndarray
    points: int


@dataclass
class UpdateStats:
    """What one update did: positions and games used, mean squared TD error (sum over the 5 outputs), lr, lambda."""

    positions: int
    games: int
    loss: float
    lr: float
    lam: float


class SelfPlayTrainer:
    """Self-play TD(lambda) training state: network, optimiser, parallel games, random generator, counters.

    Args:
        config: the run's :class:`TrainConfig`.
        net: a network to continue from (else a fresh one initialised from ``config.seed``).

    The main entry point is :meth:`step` (one move in every parallel game, then an update if enough finished
    positions are waiting); :meth:`state_dict` / :meth:`load_state_dict` capture everything needed to resume
    exactly.
    """

    def __init__(self, config: TrainConfig, net: ValueNet | None = None):
        self.config = config
        self.encoder: Encoder = get_encoder(config.encoding)
        if net is None:
            gen = torch.Generator().manual_seed(int(config.seed))
            net = ValueNet(NetSpec(self.encoder.size, tuple(config.hidden), config.activation), generator=gen)
        self.net = net
        self.fast = FastForward(net)
        self._pool = None  # worker threads for choose(), made on first use when config.threads > 1
        if config.optimizer == "adam":
            self.opt = torch.optim.Adam(net.parameters(), lr=config.lr)
        else:
            self.opt = torch.optim.SGD(net.parameters(), lr=config.lr)
        self.rng = np.random.default_rng(np.random.SeedSequence(int(config.seed), spawn_key=(7,)))
        n = config.parallel_games
        self.boards = np.broadcast_to(starting_board(), (n, 2, 25)).copy()
        self.first = np.ones(n, dtype=np.bool_)  # next roll is the game's opening roll (no doubles)
        self.traj = np.zeros((n, 128, 2, 25), dtype=np.int8)
        self.traj[:, 0] = self.boards
        self.lengths = np.ones(n, dtype=np.int64)
        self.pending: list[FinishedGame] = []
        self.games = 0  # finished games
        self.steps = 0
        self.updates = 0
        self.positions_trained = 0

    # -- schedules --
    def lr(self) -> float:
        c = self.config
        return linear_schedule(c.lr, c.lr_end, c.lr_decay_games, self.games)

    def lam(self) -> float:
        c = self.config
        return linear_schedule(c.lam, c.lam_end, c.lam_decay_games, self.games)

    # -- self-play --
    def _roll(self) -> np.ndarray:
        n = self.boards.shape[0]
        dice = self.rng.integers(1, 7, size=(n, 2))
        redo = self.first & (dice[:, 0] == dice[:, 1])
        while redo.any():  # the opening roll is two different numbers
            idx = np.flatnonzero(redo)
            dice[idx] = self.rng.integers(1, 7, size=(idx.size, 2))
            redo[idx] = dice[idx, 0] == dice[idx, 1]
        return dice

    def choose(self, boards: np.ndarray, dice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """0-ply greedy plays (with exploration): ``(next positions (N, 2, 25) with the opponent on roll,
        mover_won (N,) bool)``.

        With ``config.threads > 1`` the positions are split into that many contiguous chunks, chosen in worker
        threads (numpy, OpenBLAS and torch release the GIL in their kernels) and joined in order; the random
        draws are made here first, so the choice does not depend on the threads' timing.
        """
        n = boards.shape[0]
        u = self.rng.random((n, 2)) if self.config.exploration > 0 else None
        k = self.config.threads
        if k <= 1 or n < 2 * k:
            return self._choose_chunk(boards, dice, u)
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=k, thread_name_prefix="bgai-selfplay")
        cuts = np.linspace(0, n, k + 1).astype(np.int64)
        jobs = [
            self._pool.submit(self._choose_chunk, boards[a:b], dice[a:b], None if u is None else u[a:b])
            for a, b in zip(cuts[:-1], cuts[1:])
        ]
        parts = [j.result() for j in jobs]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _choose_chunk(
        self, boards: np.ndarray, dice: np.ndarray, u: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        from bgai.movegen import afterstates

        n = boards.shape[0]
        after, src = afterstates(boards, dice, validate=False)
        nxt = flip(after)
        probs = self.fast(self.encoder(nxt)).astype(np.float64)  # for the opponent, on roll in nxt
        over, exact = finished_probabilities(nxt)  # the mover bore off all: the exact result, not the net's
        probs[over] = exact
        equity = cubeless_equity(swap_perspective(probs))  # for the mover
        best = group_argmax(equity, src, n)
        if u is not None:
            explore = np.flatnonzero(u[:, 0] < self.config.exploration)
            if explore.size:
                starts = np.searchsorted(src, np.arange(n), side="left")
                counts = np.diff(np.append(starts, src.size))
                best[explore] = starts[explore] + (u[explore, 1] * counts[explore]).astype(np.int64)
        won = after[best, 0].sum(axis=1, dtype=np.int16) == 0
        return nxt[best], won

    def play_step(self) -> list[FinishedGame]:
        """One move in every parallel game; finished games are returned and their slots restarted."""
        dice = self._roll()
        nxt, won = self.choose(self.boards, dice)
        self.first[:] = False
        finished: list[FinishedGame] = []
        done = np.flatnonzero(won)
        if done.size:
            _, points = result_kind(nxt[done])  # the mover (row 1 of nxt) has borne off all
            for k, i in enumerate(done):
                finished.append(FinishedGame(self.traj[i, : self.lengths[i]].copy(), int(points[k])))
        live = np.flatnonzero(~won)
        if live.size:
            if int(self.lengths[live].max()) >= self.traj.shape[1]:
                grow = np.zeros((self.traj.shape[0], self.traj.shape[1] * 2, 2, 25), dtype=np.int8)
                grow[:, : self.traj.shape[1]] = self.traj
                self.traj = grow
            self.traj[live, self.lengths[live]] = nxt[live]
            self.lengths[live] += 1
        self.boards = nxt
        if done.size:
            self.boards[done] = starting_board()
            self.traj[done, 0] = starting_board()
            self.lengths[done] = 1
            self.first[done] = True
        self.steps += 1
        return finished

    # -- learning --
    def update(self, games: list[FinishedGame]) -> UpdateStats:
        """One gradient step on the lambda-return error of the positions of ``games`` (see the module docstring)."""
        lengths = np.array([g.positions.shape[0] for g in games], dtype=np.int64)
        positions = np.concatenate([g.positions for g in games])
        outcomes = terminal_targets(np.array([g.points for g in games]))
        lr, lam = self.lr(), self.lam()
        for group in self.opt.param_groups:
            group["lr"] = lr
        x = torch.from_numpy(self.encoder(positions))
        v = self.net(x)
        targets = lambda_returns(v.detach().numpy(), lengths, outcomes, lam)
        loss = 0.5 * ((v - torch.from_numpy(targets)) ** 2).sum(dim=1).mean()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.updates += 1
        self.positions_trained += int(lengths.sum())
        return UpdateStats(int(lengths.sum()), len(games), float(loss.detach()) * 2.0, lr, lam)

    def step(self) -> tuple[list[FinishedGame], UpdateStats | None]:
        """Play one move in every game, count the finished games, and update when enough positions wait.

        Returns:
            ``(finished games of this step, update statistics or None)``.
        """
        finished = self.play_step()
        self.games += len(finished)
        self.pending.extend(finished)
        stats = None
        if self.pending and sum(g.positions.shape[0] for g in self.pending) >= self.config.min_update_states:
            stats = self.update(self.pending)
            self.pending = []
        return finished, stats

    # -- checkpoint state --
    def state_dict(self) -> dict:
        """Everything needed to resume exactly: tensors, plain ints/floats/strs and the generator's state."""
        n = self.boards.shape[0]
        tmax = int(self.lengths.max())
        pend_len = [int(g.positions.shape[0]) for g in self.pending]
        return {
            "optimizer": self.opt.state_dict(),
            "rng": self.rng.bit_generator.state,
            "boards": torch.from_numpy(self.boards.copy()),
            "first": torch.from_numpy(self.first.copy()),
            "traj": torch.from_numpy(self.traj[:, :tmax].copy()),
            "lengths": torch.from_numpy(self.lengths.copy()),
            "pending_positions": torch.from_numpy(
                np.concatenate([g.positions for g in self.pending]) if self.pending else np.zeros((0, 2, 25), np.int8)
            ),
            "pending_lengths": pend_len,
            "pending_points": [int(g.points) for g in self.pending],
            "games": int(self.games),
            "steps": int(self.steps),
            "updates": int(self.updates),
            "positions_trained": int(self.positions_trained),
            "parallel_games": n,
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` output (the network's weights are loaded separately)."""
        from bgai.errors import CheckpointError

        try:
            if int(state["parallel_games"]) != self.config.parallel_games:
                raise CheckpointError(
                    f"checkpoint was trained with parallel_games={state['parallel_games']}, config has "
                    f"{self.config.parallel_games}; resume with the checkpoint's config"
                )
            self.opt.load_state_dict(state["optimizer"])
            self.rng.bit_generator.state = state["rng"]
            self.boards = state["boards"].numpy().astype(np.int8).copy()
            self.first = state["first"].numpy().astype(np.bool_).copy()
            traj = state["traj"].numpy().astype(np.int8)
            cap = max(128, traj.shape[1] * 2)
            self.traj = np.zeros((traj.shape[0], cap, 2, 25), dtype=np.int8)
            self.traj[:, : traj.shape[1]] = traj
            self.lengths = state["lengths"].numpy().astype(np.int64).copy()
            pos = state["pending_positions"].numpy().astype(np.int8)
            self.pending = []
            off = 0
            for ln, pts in zip(state["pending_lengths"], state["pending_points"]):
                self.pending.append(FinishedGame(pos[off : off + ln].copy(), int(pts)))
                off += ln
            self.games = int(state["games"])
            self.steps = int(state["steps"])
            self.updates = int(state["updates"])
            self.positions_trained = int(state["positions_trained"])
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise CheckpointError(f"checkpoint's training state is incomplete or malformed ({exc})") from None
