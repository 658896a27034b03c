"""GNU Backgammon's 0-ply evaluator as a bgai agent, through the optional ``gnubg-nn`` package.

GNU Backgammon (gnubg) 0-ply = its neural nets (contact, crashed, race) plus its bear-off databases, no
look-ahead: the strong reference every bgai model is compared with.  ``gnubg_nn.probabilities(board, 0)`` takes
one position at a time in gnubg's layout ``[[opponent 25], [side on roll 25]]`` (bgai's rows reversed) and returns
``(win, win gammon, win backgammon, lose gammon, lose backgammon)`` for the side on roll; gnubg-nn has no batched
entry point, so this agent loops in Python over the **distinct** positions of a batch.  Install it with
``pip install 'bgai[gnubg]'`` (the ``gnubg-nn`` package).
"""

from __future__ import annotations

import numpy as np

from bgai.agents.base import ProbabilityAgent, finished_or_evaluate
from bgai.core.board import as_batch
from bgai.errors import AgentSpecError


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
    """GNU Backgammon 0-ply (cubeless money equity from its 5 probabilities), via gnubg-nn.

    Finished positions (one side has borne off all its checkers) are scored exactly here, not by gnubg.

    Raises:
        AgentSpecError: on construction, when gnubg-nn is not installed.
    """

    name = "gnubg"
    #: gnubg-nn evaluates one position per call: batches gain little beyond a few dozen games (about 115 games/s
    #: against pubeval in batches of 64, 137 in batches of 256).
    batch_games = 64
    batch_invariant = True  # one position per gnubg-nn call: the same in any batch

    def __init__(self) -> None:
        self._g = import_gnubg_nn()

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """``(N, 5)`` float64 gnubg 0-ply probabilities for the side on roll of each ``(N, 2, 25)`` board."""
        return finished_or_evaluate(as_batch(boards), self._evaluate)

    def _evaluate(self, boards: np.ndarray) -> np.ndarray:
        """gnubg 0-ply probabilities ``(N, 5)`` of unfinished positions, one gnubg call per distinct position."""
        uniq, inverse = np.unique(boards.reshape(boards.shape[0], -1), axis=0, return_inverse=True)
        probs = np.empty((uniq.shape[0], 5), dtype=np.float64)
        evaluate = self._g.probabilities
        for i, flat in enumerate(uniq.reshape(-1, 2, 25).tolist()):
            probs[i] = evaluate([flat[1], flat[0]], 0)
        return probs[inverse.reshape(-1)]
