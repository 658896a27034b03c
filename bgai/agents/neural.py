"""The neural agent: a trained value network at 0-ply, or with 1-ply / 2-ply lookahead, batched.

``NeuralAgent.load('checkpoints/MODEL.pt', ply=1)`` builds the network and its input encoder from the checkpoint
(:mod:`bgai.model.bundle`; the architecture comes from the file, never from flags).

Search (GNU Backgammon's n-ply scheme, cubeless): the ``n``-ply probabilities of a position ``s`` with a side
on roll (before it rolls) are

* ``E_0(s)`` = the network's output;
* ``E_n(s)`` = the average over the 21 distinct rolls (weights 1/36 for doubles, 2/36 otherwise) of
  ``swap(E_{n-1}(flip(a*)))``, where ``a*`` is the play the side on roll would make with that roll judged at
  0-ply (as gnubg picks the reply in its lookahead), and ``swap`` = :func:`bgai.core.equity.swap_perspective`.

An afterstate is valued by the ``ply``-level probabilities of the position it leaves to the opponent
(:class:`~bgai.agents.base.ProbabilityAgent`'s rule).  Each level is one batched call: every roll of every
position goes through the move generator, the encoder and the network together (the network in chunks of
:data:`EVAL_CHUNK` rows that stay in the CPU caches, with the same result as one call).

Move filters (as GNU Backgammon's, which keep the best 8 within 0.16 at 0-ply): when choosing a play at
``ply >= 1`` the candidates are first pruned at 0-ply (keep at most ``prune_keep`` plays within
``prune_margin`` equity of the 0-ply best); at 2-ply the survivors are then valued at 1-ply -- the first level
of their 2-ply search, so nearly free -- and only the best :attr:`NeuralAgent.filter_keep` (4) within
:attr:`NeuralAgent.filter_margin` (0.10) of the 1-ply best are searched to 2-ply.  Measured with
``scripts/bench_search.py --quality`` (shipped model, 800 (position, roll) pairs from self-play, seeds 1 and 3):
the 2-ply play is the one a 2-ply search of every 0-ply candidate chooses in 799 of 800 pairs (0.002 ppg given
up in the other one), for 60% of that search's 2-ply work.

A finished position (the side on roll has no checker... i.e. the opponent has borne off all) is valued
exactly: a loss, a gammon or a backgammon loss, never by the network.
"""

from __future__ import annotations

import os

import numpy as np
import torch

from bgai.agents.base import ProbabilityAgent
from bgai.core.board import as_batch, flip
from bgai.core.equity import cubeless_equity, finished_probabilities, swap_perspective
from bgai.core.movegen import afterstates
from bgai.errors import AgentSpecError
from bgai.model.bundle import load_net
from bgai.model.features import Encoder
from bgai.model.nets import FastForward, ValueNet


def _rolls() -> tuple[np.ndarray, np.ndarray]:
    dice, w = [], []
    for a in range(1, 7):
        for b in range(a, 7):
            dice.append((a, b))
            w.append(1.0 / 36.0 if a == b else 2.0 / 36.0)
    return np.array(dice, dtype=np.int64), np.array(w, dtype=np.float64)


#: Positions searched together at ply >= 1 (larger batches only cost memory: one 1-ply move already evaluates
#: thousands of positions).
SEARCH_CHUNK = 32

#: Rows per network call in the search (see :meth:`NeuralAgent._forward`): about 2 MB of encoded inputs, which
#: stay in the CPU's cache between the encoder and the first matrix product.  A multiple of 256 (the chunks must
#: start where the BLAS kernels' row blocks start).
EVAL_CHUNK = 2048

#: The 21 distinct rolls ``(21, 2)`` and their probabilities ``(21,)`` (sum 1).
ROLLS, ROLL_WEIGHTS = _rolls()


class NeuralAgent(ProbabilityAgent):
    """A value network as an agent (cubeless checker play).

    Args:
        net: the network (evaluated in inference mode).
        encoder: its input encoder.
        ply: lookahead depth, 0, 1 or 2.
        prune_keep: at ``ply >= 1``, plays kept per position after the 0-ply pre-selection.
        prune_margin: ... and only those within this cubeless equity (ppg) of the 0-ply best.
        name: for reports.

    Raises:
        AgentSpecError: ``ply`` not 0, 1 or 2.
    """

    #: At ``ply == 2``, the candidates left by the 0-ply filter are evaluated at 1-ply (almost free: it is the
    #: first level of their 2-ply search) and only the best ``filter_keep`` within ``filter_margin`` cubeless
    #: equity (ppg) of the 1-ply best go on to 2-ply (gnubg's move filters work the same way between plies).
    #: Class attributes (set them on an instance to change one agent); see ``scripts/bench_search.py --quality``
    #: for how often this keeps the play a 2-ply search of every 0-ply candidate would choose.
    filter_keep: int = 4
    filter_margin: float = 0.10

    def __init__(
        self,
        net: ValueNet,
        encoder: Encoder,
        *,
        ply: int = 0,
        prune_keep: int = 8,
        prune_margin: float = 0.16,
        name: str | None = None,
    ):
        if ply not in (0, 1, 2):
            raise AgentSpecError(f"ply must be 0, 1 or 2, got {ply!r}")
        self.net = net.eval()
        self.encoder = encoder
        self.ply = int(ply)
        self.prune_keep = int(prune_keep)
        self.prune_margin = float(prune_margin)
        self.name = name or f"neural-{ply}ply"
        self._fast = FastForward(net)

    @classmethod
    def load(cls, path: str | os.PathLike, ply: int = 0, **kwargs) -> "NeuralAgent":
        """Load a checkpoint (:func:`bgai.model.bundle.load_net`).

        Raises:
            CheckpointError: missing, corrupt or foreign file.
            AgentSpecError: bad ``ply``.
        """

        if ply not in (0, 1, 2):
            raise AgentSpecError(f"ply must be 0, 1 or 2, got {ply!r}")
        net, encoder, _ = load_net(path)
        name = kwargs.pop("name", None) or f"{os.path.basename(os.fspath(path))}:ply={ply}"
        return cls(net, encoder, ply=ply, name=name, **kwargs)

    def __getstate__(self):  # picklable for evaluation worker processes
        state = self.__dict__.copy()
        state.pop("_fast", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._fast = FastForward(self.net)

    # -- evaluation --
    def _net(self, boards: np.ndarray) -> np.ndarray:
        """0-ply probabilities ``(N, 5)`` float64, exact for finished games."""
        out = np.empty((boards.shape[0], 5), dtype=np.float64)
        if boards.shape[0] == 0:
            return out
        over, exact = finished_probabilities(boards)
        if over.any():
            live = np.flatnonzero(~over)
            if live.size:
                out[live] = self._forward(boards[live])
            out[over] = exact
        else:
            self._forward(boards, out)
        return out

    def _forward(self, boards: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The network's probabilities ``(N, 5)`` float64 of ``(N, 2, 25)`` live boards, in chunks.

        Chunks of :data:`EVAL_CHUNK` rows (the last one up to ``2 * EVAL_CHUNK - 1``; one chunk when ``N`` is
        smaller) keep the encoded inputs and hidden units in the CPU caches and spare the page faults of one huge
        input matrix.  With single-threaded BLAS the result is bit for bit that of one call on all rows: the chunks
        start at multiples of :data:`EVAL_CHUNK` rows, so every row meets the same matrix-product kernels (checked
        in ``tests/test_neural_agent.py``).  With several BLAS threads a few rows can differ in the last bit, as
        they already do between batch sizes (OpenBLAS splits each product among its threads).
        """
        n = boards.shape[0]
        if out is None:
            out = np.empty((n, 5), dtype=np.float64)
        bounds = [i * EVAL_CHUNK for i in range(max(1, n // EVAL_CHUNK))] + [n]
        with torch.inference_mode():
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                out[lo:hi] = self._fast(self.encoder(boards[lo:hi]))
        return out

    def _replies(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The 0-ply reply to every roll of live positions (side on roll in row 0), one batched level.

        Returns:
            ``(probs, chosen)``: for each position and each roll of :data:`ROLLS` (position-major, ``N * 21``
            rows), the play the side on roll makes at 0-ply: ``chosen`` ``(N * 21, 2, 25)`` the resulting
            position with the opponent on roll, ``probs`` ``(N * 21, 5)`` float64 its 0-ply probabilities (for the
            opponent).
        """
        n = boards.shape[0]
        rep = np.repeat(boards, 21, axis=0)
        dice = np.tile(ROLLS, (n, 1))
        after, src = afterstates(rep, dice, validate=False)
        nxt = flip(after)
        p0 = self._net(nxt)  # opponent on roll: 0-ply, used to pick the reply
        best = group_argmax(-cubeless_equity(p0), src, rep.shape[0])
        return p0[best], nxt[best]

    def _expect(self, boards: np.ndarray, depth: int) -> np.ndarray:
        """``E_depth`` probabilities ``(N, 5)`` for the side on roll (see the module docstring)."""
        if depth == 0 or boards.shape[0] == 0:
            return self._net(boards)
        over, exact = finished_probabilities(boards)
        out = np.empty((boards.shape[0], 5), dtype=np.float64)
        out[over] = exact
        live = np.flatnonzero(~over)
        if live.size == 0:
            return out
        probs, chosen = self._replies(boards[live])
        v = probs if depth == 1 else self._expect(chosen, depth - 1)
        out[live] = _roll_average(v, live.size)
        return out

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """``ply``-level probabilities ``(N, 5)`` float64 for the side on roll (module docstring)."""
        return self._expect(as_batch(boards), self.ply)

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Best play per position: 0-ply directly; at ``ply >= 1`` after the move filters (module docstring)."""

        boards = as_batch(boards)
        n = boards.shape[0]
        if self.ply >= 1 and n > SEARCH_CHUNK:  # bound the memory of the search (21 rolls x candidates x plays)
            return np.concatenate(
                [self.choose(boards[i : i + SEARCH_CHUNK], np.asarray(dice)[i : i + SEARCH_CHUNK], rng)
                 for i in range(0, n, SEARCH_CHUNK)]
            )
        after, src = afterstates(boards, dice)
        nxt = flip(after)
        eq0 = -cubeless_equity(self._net(nxt))  # mover's equity at 0-ply
        if self.ply == 0:
            return after[_group_argmax(eq0, src, n)]
        keep = _prune(eq0, src, n, self.prune_keep, self.prune_margin)
        cand = nxt[keep]
        # 1-ply of the candidates; their replies are kept for 2-ply (the first level of E_2 is that of E_1)
        over, exact = finished_probabilities(cand)
        live = np.flatnonzero(~over)
        probs, chosen = self._replies(cand[live])
        e = np.empty((keep.size, 5), dtype=np.float64)
        e[over] = exact
        e[live] = _roll_average(probs, live.size)
        if self.ply == 2:
            sub = _prune(-cubeless_equity(e), src[keep], n, self.filter_keep, self.filter_margin)
            deep = ~over[sub]  # finished candidates keep their exact value
            slot = np.cumsum(~over) - 1  # row of each live candidate in ``chosen`` (in 21-row blocks)
            rows = (slot[sub[deep]][:, None] * 21 + np.arange(21)).ravel()
            e2 = e[sub]
            e2[deep] = _roll_average(self._expect(chosen[rows], 1), int(deep.sum()))
            keep, e = keep[sub], e2
        eq = np.full(after.shape[0], -np.inf)
        eq[keep] = -cubeless_equity(e)
        return after[_group_argmax(eq, src, n)]


def _roll_average(v: np.ndarray, n: int) -> np.ndarray:
    """``(n, 5)`` mover's probabilities from the ``(n * 21, 5)`` opponent's ones after each roll of
    :data:`ROLLS` (position-major): swapped to the mover's view and averaged with :data:`ROLL_WEIGHTS`."""
    mover = swap_perspective(v).reshape(n, 21, 5)
    return np.einsum("nrk,r->nk", mover, ROLL_WEIGHTS)


def group_argmax(scores: np.ndarray, src: np.ndarray, n: int) -> np.ndarray:
    """First index of the maximum score within each group of a sorted ``src`` (every ``0..n-1`` present).

    Same answer as :func:`bgai.agents.base.best_per_input`, in O(M) without a sort.

    Args:
        scores: ``(M,)`` float.
        src: ``(M,)`` int, non-decreasing group of each score.
        n: number of groups.

    Returns:
        ``(n,)`` int64 indices into ``scores``.
    """
    starts = np.searchsorted(src, np.arange(n), side="left")
    gmax = np.maximum.reduceat(scores, starts)
    is_max = np.flatnonzero(scores >= gmax[src])
    return is_max[np.searchsorted(src[is_max], np.arange(n), side="left")]


_group_argmax = group_argmax


def _prune(eq: np.ndarray, src: np.ndarray, n: int, keep: int, margin: float) -> np.ndarray:
    """Indices of the candidates kept per group: the best ``keep`` within ``margin`` of the group's best."""
    order = np.lexsort((-eq, src))  # by group, best first
    s = src[order]
    starts = np.searchsorted(s, np.arange(n), side="left")
    rank = np.arange(order.size) - starts[s]
    best = eq[order[starts]]
    ok = (rank < keep) & (eq[order] >= best[s] - margin)
    return np.sort(order[ok])
