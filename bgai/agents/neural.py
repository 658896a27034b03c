"""The neural agent: a trained value network at 0-ply, or with 1-ply / 2-ply lookahead, batched.

``NeuralAgent.load('checkpoints/MODEL.pt', ply=1)`` builds the model bundle from the file (:mod:`bgai.model.bundle`:
one or more nets, each with its input encoder, routed by position class; the architecture comes from the file,
never from flags).  ``NeuralAgent(bundle)`` or ``NeuralAgent(net, encoder)`` (a one-net bundle) plays with nets in
memory.

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

from bgai.agents.base import Capabilities, ProbabilityAgent, best_k_per_input, best_per_input, finished_or_evaluate
from bgai.core.board import as_batch, flip
from bgai.core.dice import ROLL_WEIGHTS, ROLLS
from bgai.core.equity import cubeless_equity, finished_probabilities, swap_perspective
from bgai.core.movegen import afterstates
from bgai.errors import AgentSpecError
from bgai.model.bundle import ModelBundle, load_model_bundle
from bgai.model.features import Encoder
from bgai.model.nets import ValueNet

#: Positions searched together at ply >= 1 (larger batches only cost memory: one 1-ply move already evaluates
#: thousands of positions).
SEARCH_CHUNK = 32

#: Rows per network call in the search (see :meth:`NeuralAgent._forward`): about 2 MB of encoded inputs, which
#: stay in the CPU's cache between the encoder and the first matrix product.  A multiple of 256 (the chunks must
#: start where the BLAS kernels' row blocks start).
EVAL_CHUNK = 2048


class NeuralAgent(ProbabilityAgent):
    """A model bundle (one or more value nets) as an agent (cubeless checker play).

    Args:
        model: a :class:`~bgai.model.bundle.ModelBundle`, or a :class:`~bgai.model.nets.ValueNet` (then
            ``encoder`` is its input encoder and the agent plays a one-net bundle).  Evaluated without autograd;
            the agent sees the current weights (no copy), also while a trainer updates them.
        encoder: the input encoder of a ``ValueNet`` (not with a bundle).
        ply: lookahead depth, 0, 1 or 2.
        prune_keep: at ``ply >= 1``, plays kept per position after the 0-ply pre-selection.
        prune_margin: ... and only those within this cubeless equity (ppg) of the 0-ply best.
        name: for reports.

    Raises:
        AgentSpecError: ``ply`` not 0, 1 or 2, or a ``ValueNet`` without its encoder.
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
        model: ModelBundle | ValueNet,
        encoder: Encoder | None = None,
        *,
        ply: int = 0,
        prune_keep: int = 8,
        prune_margin: float = 0.16,
        name: str | None = None,
    ):
        if ply not in (0, 1, 2):
            raise AgentSpecError(f"ply must be 0, 1 or 2, got {ply!r}")
        if isinstance(model, ModelBundle):
            if encoder is not None:
                raise AgentSpecError("a model bundle carries its encoders: give no encoder with it")
            self.bundle = model
        else:
            if encoder is None:
                raise AgentSpecError("a value network needs its input encoder")
            self.bundle = ModelBundle.single(model, encoder)
        for n in self.bundle.nets:
            n.net.eval()
        self.ply = int(ply)
        self.prune_keep = int(prune_keep)
        self.prune_margin = float(prune_margin)
        self.name = name or f"neural-{ply}ply"
        self.batch_games = 500 if ply == 0 else 2 * SEARCH_CHUNK  # a search fills its batches (Agent.batch_games)

    @property
    def net(self) -> ValueNet:
        """The network of a one-net bundle (:attr:`ModelBundle.only`; CheckpointError for several nets)."""
        return self.bundle.only.net

    @property
    def encoder(self) -> Encoder:
        """The input encoder of a one-net bundle (CheckpointError for several nets)."""
        return self.bundle.only.encoder

    @property
    def exact_bearoff(self) -> bool:
        """Whether bear-off positions are valued exactly, by the bear-off database of the bundle
        (:attr:`bgai.model.bundle.ModelBundle.exact_bearoff`); rollouts then end trials there."""
        return self.bundle.exact_bearoff

    @classmethod
    def load(cls, path: str | os.PathLike, ply: int = 0, bearoff: str | None = None, **kwargs) -> "NeuralAgent":
        """Load a bundle file (:func:`bgai.model.bundle.load_model_bundle`: every failure one short line).

        Args:
            path: the bundle file (``.pt``).
            ply: 0, 1 or 2.
            bearoff: None = bear-offs as the file routes them; ``'db'`` = by the exact bear-off database
                (:meth:`~bgai.model.bundle.ModelBundle.with_bearoff_database`); ``'net'`` = by the bundle's race
                net even if the file gives them to the database
                (:meth:`~bgai.model.bundle.ModelBundle.without_databases`).
            kwargs: more arguments of :class:`NeuralAgent`.

        Raises:
            CheckpointError: missing, corrupt or foreign file, non-finite weights, a net above the size limits.
            AgentSpecError: bad ``ply`` or ``bearoff``; a configuration file given as the model.
        """

        if ply not in (0, 1, 2):
            raise AgentSpecError(f"ply must be 0, 1 or 2, got {ply!r}")
        if bearoff not in (None, "db", "net"):
            raise AgentSpecError(f"bearoff must be 'db' (the exact database) or 'net', got {bearoff!r}")
        bundle, _ = load_model_bundle(os.fspath(path))
        if bearoff == "db":
            bundle = bundle.with_bearoff_database()
        elif bearoff == "net":
            bundle = bundle.without_databases()
        tag = "+bearoff-db" if bundle.exact_bearoff else ""
        name = kwargs.pop("name", None) or f"{os.path.basename(os.fspath(path))}{tag}:ply={ply}"
        return cls(bundle, ply=ply, name=name, **kwargs)

    @property
    def capabilities(self) -> Capabilities:
        """Probabilities, play values and cube decisions, evaluated at this agent's ``ply``."""
        return Capabilities(play_scores=True, probabilities=True, cube=True, ply=self.ply)

    def at_ply(self, ply: int) -> "NeuralAgent":
        """The same model evaluating at ``ply`` (0, 1 or 2); ``self`` when that is its own ply.

        Raises:
            AgentSpecError: ``ply`` not 0, 1 or 2.
        """
        if ply == self.ply:
            return self
        return NeuralAgent(self.bundle, ply=ply, prune_keep=self.prune_keep,
                           prune_margin=self.prune_margin, name=f"{self.name.rsplit(':ply=', 1)[0]}:ply={ply}")

    # -- evaluation --
    def _net(self, boards: np.ndarray) -> np.ndarray:
        """0-ply probabilities ``(N, 5)`` float64, exact for finished games (:meth:`ModelBundle.probabilities`).

        In chunks of :data:`EVAL_CHUNK` rows (the last one up to ``2 * EVAL_CHUNK - 1``; one chunk when ``N`` is
        smaller): they keep the encoded inputs and hidden units in the CPU caches and spare the page faults of one
        huge input matrix.  With single-threaded BLAS the result is that of one call on all rows up to float32
        rounding (checked in ``tests/test_neural_agent.py``): the chunks start at multiples of :data:`EVAL_CHUNK`
        rows, so on most CPUs every row meets the same matrix-product kernels and the bits agree; on some (an AMD
        EPYC) the kernels of a block's last rows depend on the row count and a few values differ by about 6e-8.
        """
        n = boards.shape[0]
        # (no torch.inference_mode() here: the bundle's evaluation takes no gradients, its FastForward works on
        # numpy views of the weights; entering the mode costs 3-45 us a call, as much as a small batch's net)
        if n < 2 * EVAL_CHUNK:
            return self.bundle.probabilities(boards)
        out = np.empty((n, 5), dtype=np.float64)
        bounds = [i * EVAL_CHUNK for i in range(n // EVAL_CHUNK)] + [n]
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            out[lo:hi] = self.bundle.probabilities(boards[lo:hi])
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
        best = best_per_input(-cubeless_equity(p0), src, rep.shape[0])
        return p0[best], nxt[best]

    def _expect(self, boards: np.ndarray, depth: int) -> np.ndarray:
        """``E_depth`` probabilities ``(N, 5)`` for the side on roll (see the module docstring)."""
        if depth == 0 or boards.shape[0] == 0:
            return self._net(boards)
        return finished_or_evaluate(boards, lambda live: self._search(live, depth))

    def _search(self, boards: np.ndarray, depth: int) -> np.ndarray:
        """``E_depth`` (``depth >= 1``) of ``(N, 2, 25)`` positions of unfinished games: the 21 rolls, each
        replied to at 0-ply, valued at ``depth - 1``."""
        probs, chosen = self._replies(boards)
        v = probs if depth == 1 else self._expect(chosen, depth - 1)
        return _roll_average(v, boards.shape[0])

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """``ply``-level probabilities ``(N, 5)`` float64 for the side on roll (module docstring)."""
        return self._expect(as_batch(boards), self.ply)

    def pick_0ply(self, after: np.ndarray, src: np.ndarray, n: int) -> np.ndarray:
        """The 0-ply choice among generated afterstates: index of the best per position (ties: the first).

        Args:
            after: ``(M, 2, 25)`` int8 afterstates of ``n`` positions, mover in row 0
                (:func:`bgai.core.movegen.afterstates`).
            src: ``(M,)`` int, non-decreasing, the position of each afterstate (every ``0..n-1`` present).
            n: number of positions.

        Returns:
            ``(n,)`` int64 indices into ``after``: the afterstate of highest cubeless equity for the mover, every
            position's candidates valued in one batched call (self-play uses this too).
        """
        return best_per_input(-cubeless_equity(self._net(flip(after))), src, n)

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
        if self.ply == 0:
            return after[self.pick_0ply(after, src, n)]
        nxt = flip(after)
        eq0 = -cubeless_equity(self._net(nxt))  # mover's equity at 0-ply
        keep = best_k_per_input(eq0, src, n, self.prune_keep, self.prune_margin)
        cand = nxt[keep]
        # 1-ply of the candidates; their replies are kept for 2-ply (the first level of E_2 is that of E_1)
        over, exact = finished_probabilities(cand)
        live = np.flatnonzero(~over)
        probs, chosen = self._replies(cand[live])
        e = np.empty((keep.size, 5), dtype=np.float64)
        e[over] = exact
        e[live] = _roll_average(probs, live.size)
        if self.ply == 2:
            sub = best_k_per_input(-cubeless_equity(e), src[keep], n, self.filter_keep, self.filter_margin)
            deep = ~over[sub]  # finished candidates keep their exact value
            slot = np.cumsum(~over) - 1  # row of each live candidate in ``chosen`` (in 21-row blocks)
            rows = (slot[sub[deep]][:, None] * 21 + np.arange(21)).ravel()
            e2 = e[sub]
            e2[deep] = _roll_average(self._expect(chosen[rows], 1), int(deep.sum()))
            keep, e = keep[sub], e2
        eq = np.full(after.shape[0], -np.inf)
        eq[keep] = -cubeless_equity(e)
        return after[best_per_input(eq, src, n)]


def _roll_average(v: np.ndarray, n: int) -> np.ndarray:
    """``(n, 5)`` mover's probabilities from the ``(n * 21, 5)`` opponent's ones after each roll of
    :data:`ROLLS` (position-major): swapped to the mover's view and averaged with :data:`ROLL_WEIGHTS`, then
    clipped to ``[0, 1]`` (a weighted sum of ones can come out at ``1 + 2e-16``, whose complement would show as a
    probability of ``-0.0``)."""
    mover = swap_perspective(v).reshape(n, 21, 5)
    return np.clip(np.einsum("nrk,r->nk", mover, ROLL_WEIGHTS), 0.0, 1.0) + 0.0  # + 0.0: no negative zeros



