"""GNU Backgammon's evaluator as a bgai agent, through the optional ``gnubg-nn`` package.

GNU Backgammon (gnubg) 0-ply = its neural nets (contact, crashed, race) plus its bear-off databases, no
look-ahead: the strong reference every bgai model is compared with.  ``gnubg_nn.probabilities(board, n)`` takes
one position at a time in gnubg's layout ``[[opponent 25], [side on roll 25]]`` (bgai's rows reversed) and returns
``(win, win gammon, win backgammon, lose gammon, lose backgammon)`` for the side on roll, at ``n`` plies; gnubg-nn
has no batched entry point, so this agent loops in Python over the **distinct** positions of a batch.  Install it
with ``pip install 'bgai[gnubg]'`` (the ``gnubg-nn`` package).

``gnubg:ply=N`` (N = 1 or 2) is gnubg's own N-ply search, in the numbering gnubg and bgai share (1-ply: the
average over the opponent's 21 rolls of his best 0-ply reply): plays are chosen by ``gnubg_nn.bestmove(board,
die1, die2, n=N)``, gnubg's move filters included (for 1-ply, the best 0-ply plays re-evaluated at 1-ply), and
probabilities and play values are ``gnubg_nn.probabilities(board, N)``.  So, as in gnubg, the play chosen is the
best of the plays the filter kept, which is not always the best of all plays by :meth:`evaluate_afterstates`.
"""

from __future__ import annotations

import numpy as np

from bgai.agents.base import Capabilities, ProbabilityAgent, finished_or_evaluate
from bgai.core.board import as_batch
from bgai.core.movegen import afterstates
from bgai.errors import AgentSpecError

#: Deepest search the ``gnubg`` agent offers (gnubg's 3-ply and 4-ply take seconds a play in gnubg-nn).
MAX_PLY = 2


def import_gnubg_nn():
    """Import and return the ``gnubg_nn`` module.

    Raises:
        AgentSpecError: gnubg-nn is not installed (with the command that installs it).
    """
    try:
        import gnubg_nn
    except ImportError as exc:
        raise AgentSpecError(
            "agent 'gnubg' needs the optional package gnubg-nn, which is not installed "
            "(pip install 'bgai[gnubg]' or pip install gnubg-nn)"
        ) from exc
    return gnubg_nn


def apply_gnubg_move(board: list[list[int]], move) -> None:
    """Play a gnubg-nn move (e.g. from ``gnubg_nn.pub_best_move`` or ``gnubg_nn.best_move``) on a gnubg board.

    Args:
        board: gnubg's layout ``[[opponent 25], [side on roll 25]]`` (0-based points, index 24 the bar), lists of
            ints, changed in place.
        move: gnubg-nn's flat ``(from, to, from, to, ...)`` sequence, 0-based, bar 24, off -1.  A single checker on
            the landing point is hit: it goes to the opponent's bar.
    """
    opp, me = board
    for f, t in zip(move[::2], move[1::2]):
        me[f] -= 1
        if t >= 0:
            me[t] += 1
            if opp[23 - t] == 1:
                opp[23 - t] = 0
                opp[24] += 1


class GnubgAgent(ProbabilityAgent):
    """GNU Backgammon at ``ply`` (cubeless money equity from its 5 probabilities), via gnubg-nn.

    Finished positions (one side has borne off all its checkers) are scored exactly here, not by gnubg.

    Args:
        ply: 0 (gnubg's nets and bear-off databases, the default) .. :data:`MAX_PLY` (its search; module
            docstring).

    Raises:
        AgentSpecError: on construction, when gnubg-nn is not installed or ``ply`` is out of range.
    """

    batch_invariant = True  # one position per gnubg-nn call: the same in any batch

    def __init__(self, ply: int = 0) -> None:
        if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or not 0 <= ply <= MAX_PLY:
            raise AgentSpecError(f"gnubg ply must be 0..{MAX_PLY}, got {ply!r}")
        self._g = import_gnubg_nn()
        self.ply = int(ply)
        self.name = "gnubg" if self.ply == 0 else f"gnubg:ply={self.ply}"
        #: gnubg-nn evaluates one position per call: batches gain little beyond a few dozen games (at 0-ply about
        #: 115 games/s against pubeval in batches of 64, 137 in batches of 256); a 1-ply play takes about 6 ms.
        self.batch_games = 64 if self.ply == 0 else 16

    @property
    def capabilities(self) -> Capabilities:
        """Probabilities, play values and cube decisions, evaluated at this agent's ``ply``."""
        return Capabilities(play_scores=True, probabilities=True, cube=True, ply=self.ply)

    def at_ply(self, ply: int) -> "GnubgAgent":
        """gnubg evaluating at ``ply``; ``self`` when that is its own.

        Raises:
            AgentSpecError: ``ply`` out of 0..:data:`MAX_PLY`.
        """
        return self if ply == self.ply else GnubgAgent(ply)

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """At 0-ply the best afterstate by gnubg's 0-ply equity; at ``ply >= 1`` gnubg's own play,
        ``gnubg_nn.bestmove(..., n=ply)``: ``(N, 2, 25)`` int8 afterstates, mover's view; the unchanged position
        where no play is legal.

        Raises:
            InvalidPositionError, InvalidDiceError: as :func:`bgai.core.movegen.afterstates`.
            RuntimeError: gnubg-nn answered a board that is not one of the legal afterstates (a gnubg-nn fault).
        """
        if self.ply == 0:
            return super().choose(boards, dice, rng)
        after, src = afterstates(boards, dice)  # checks the boards and the dice
        b = as_batch(boards)
        d = np.asarray(dice).reshape(b.shape[0], 2).astype(np.int64)
        out = np.empty_like(b)
        best, from_key = self._g.bestmove, self._g.boardfromkey
        for i, (board, (d1, d2)) in enumerate(zip(b.tolist(), d.tolist())):
            _, key = best([board[1], board[0]], d1, d2, n=self.ply, b=1)
            chosen = np.asarray(from_key(key), dtype=np.int8)  # the afterstate, mover's row first as bgai's
            legal = after[src == i]
            if not (legal == chosen).all(axis=(1, 2)).any():
                raise RuntimeError(f"gnubg-nn's {self.ply}-ply play of position {i} is not a legal afterstate")
            out[i] = chosen
        return out

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 5)`` float64 gnubg probabilities at this agent's ply for the side on roll of each ``(N, 2, 25)``
        board."""
        return finished_or_evaluate(as_batch(boards), self._evaluate)

    def _evaluate(self, boards: np.ndarray) -> np.ndarray:
        """gnubg probabilities ``(N, 5)`` of unfinished positions, one gnubg call per distinct position."""
        uniq, inverse = np.unique(boards.reshape(boards.shape[0], -1), axis=0, return_inverse=True)
        probs = np.empty((uniq.shape[0], 5), dtype=np.float64)
        evaluate, ply = self._g.probabilities, self.ply
        for i, flat in enumerate(uniq.reshape(-1, 2, 25).tolist()):
            probs[i] = evaluate([flat[1], flat[0]], ply)
        return probs[inverse.reshape(-1)]
