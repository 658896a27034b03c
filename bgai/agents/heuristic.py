"""Hand-written heuristic bots a club player recognises: the ``racer`` and the ``blocker``.

Each bot scores every legal afterstate with a short list of rules (a weighted sum of board features, written
out in the class docstring) and plays the best one; ties go to the first afterstate generated.  The features
are computed for whole batches of afterstates with numpy.  Points are numbered from the mover's view
(:mod:`bgai.core.board`): the mover's home board is points 1..6, the opponent's home board the mover's points 19..24.

Both bots are weak on purpose: they are yardsticks below pubeval, not opponents.
"""

from __future__ import annotations

import numpy as np

from bgai.agents.base import Agent, Capabilities, best_per_input
from bgai.agents.pubeval import is_race
from bgai.core.board import BAR, as_batch, pip_counts
from bgai.core.movegen import afterstates


def opponent_on_my_points(afterstates: np.ndarray) -> np.ndarray:
    """Opponent checkers indexed by the mover's point numbers, with the opponent's bar as point 0.

    Args:
        afterstates: ``(M, 2, 25)`` int8, mover in row 0.

    Returns:
        ``(M, 25)`` int16: column ``q`` (1..24) = opponent checkers on the mover's point ``q`` (opponent column
        ``24 - q``); column 0 = opponent checkers on the bar (they enter on the mover's points 1..6).
    """
    a = as_batch(afterstates)
    out = np.empty((a.shape[0], 25), dtype=np.int16)
    out[:, 0] = a[:, 1, BAR]
    out[:, 1:] = a[:, 1, 23::-1]
    return out


def exposed_blots(afterstates: np.ndarray) -> np.ndarray:
    """``(M, 24)`` bool: the mover's blots (single checkers, column = point - 1) within a direct shot (1..6 pips).

    A blot on the mover's point ``p`` is exposed when an opponent checker sits on one of the mover's points
    ``p - 6 .. p - 1`` (the opponent moves up the mover's numbering) or, for ``p <= 6``, on the bar.  Blocking
    points in between are ignored (a direct-shot count as players estimate it at a glance).
    """
    a = as_batch(afterstates)
    present = (opponent_on_my_points(a) > 0).astype(np.int16)  # (M, 25), index q = 0..24
    cs = np.concatenate([np.zeros((a.shape[0], 1), np.int16), np.cumsum(present, axis=1, dtype=np.int16)], axis=1)
    p = np.arange(1, 25)  # mover's points
    lo = np.maximum(p - 6, 0)
    shooters = cs[:, p] - cs[:, lo]  # opponent checkers' points in [p - 6, p - 1]
    return (a[:, 0, :24] == 1) & (shooters > 0)


def longest_prime(afterstates: np.ndarray) -> np.ndarray:
    """``(M,)`` int: length of the mover's longest run of consecutive made points (2+ checkers)."""
    made = as_batch(afterstates)[:, 0, :24] >= 2
    run = np.zeros(made.shape[0], dtype=np.int16)
    best = np.zeros_like(run)
    for c in range(24):
        run = np.where(made[:, c], run + 1, 0)
        best = np.maximum(best, run)
    return best


class HeuristicAgent(Agent):
    """A bot that scores afterstates with a fixed rule list (:meth:`evaluate_plays`) and plays the best one."""

    capabilities = Capabilities(play_scores=True, ply=0)
    batch_invariant = True  # a score per afterstate: the same in any batch

    def evaluate_plays(self, boards: np.ndarray, afterstates: np.ndarray, src: np.ndarray) -> np.ndarray:
        """Heuristic score of each afterstate (higher = better for the mover; arbitrary units, not ppg).

        Args:
            boards: ``(N, 2, 25)`` positions before the play.
            afterstates: ``(M, 2, 25)`` afterstates, mover's view.
            src: ``(M,)`` int, index into ``boards`` of each afterstate.
        """
        raise NotImplementedError

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:

        boards = as_batch(boards)
        after, src = afterstates(boards, dice)
        scores = self.evaluate_plays(boards, after, src)
        return after[best_per_input(scores, src, len(boards))]


class RacerAgent(HeuristicAgent):
    """``racer``: runs for home and keeps its checkers safe.

    Score of an afterstate (mover's view), summed:

    1. **pip lead**: opponent's pip count minus own pip count (a hit sends a checker back, which adds its
       travelled pips to the opponent's count, so the racer hits when it gains many pips);
    2. **-6 per exposed blot**: own single checker within a direct shot (1..6 pips) of an opponent checker;
    3. **-0.5 per checker outside the home board** (own points 7..24 and the bar): bring checkers home;
    4. **-2 per back checker** (own points 19..24, in the opponent's home board, and the bar): run the back
       checkers first;
    5. **+2 per checker borne off**: in the bear-off take checkers off rather than move them down.

    Rule 1 is the racer's nature: a pure running game.  It never builds blocks on purpose.
    """

    name = "racer"

    def evaluate_plays(self, boards: np.ndarray, afterstates: np.ndarray, src: np.ndarray) -> np.ndarray:
        return racer_scores(afterstates)


def racer_scores(afterstates: np.ndarray) -> np.ndarray:
    """``(M,)`` float64: the racer's score (rules 1-5 of :class:`RacerAgent`) of ``(M, 2, 25)`` afterstates."""
    a = as_batch(afterstates)
    pips = pip_counts(a).astype(np.float64)
    lead = pips[:, 1] - pips[:, 0]
    blots = exposed_blots(a).sum(axis=1)
    outside = a[:, 0, 6:].sum(axis=1, dtype=np.int16)
    back = a[:, 0, 18:].sum(axis=1, dtype=np.int16)
    off = 15 - a[:, 0].sum(axis=1, dtype=np.int16)
    return lead - 6.0 * blots - 0.5 * outside - 2.0 * back + 2.0 * off


#: Value of a made point for the blocker, by the mover's point number 1..24 (index 0 = the 1-point).
#: Home-board points and the bar point block best; the opponent's 5- and 4-points (mover's 20, 21) are the best
#: anchors.
BLOCK_POINT_VALUES = np.array(
    [0.5, 1.0, 1.5, 2.5, 3.0, 3.0, 2.5, 2.0, 1.0, 1.0, 0.5, 0.5,
     0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.5, 1.5, 1.0, 0.5, 0.5],
    dtype=np.float64,
)


class BlockerAgent(HeuristicAgent):
    """``blocker``: a prime-and-hit player.  Makes points, builds primes, hits, and keeps blots safe.

    Score of an afterstate (mover's view), summed:

    1. **made points**: each own point with 2+ checkers is worth :data:`BLOCK_POINT_VALUES` by point number: the
       6- and 5-points 3, the 4- and 7-(bar) points 2.5, the 8-point 2, ... ; the anchors on the opponent's 5- and
       4-points (own 20, 21) 1.5, other anchors in the opponent's home board 0.5..1;
    2. **prime**: +1.5 per point of the longest run of consecutive made points when it is 2 or longer, and +6 more
       for a full six-point prime;
    3. **hits**: +4 per opponent checker on the bar;
    4. **safety**: -3 per own blot within a direct shot of an opponent checker, -0.5 per other own blot;
    5. **progress**: +0.05 per pip of pip lead and +1 per checker borne off (tie-breaks that keep the game moving);
    6. **race**: when the position before the play is a race (no contact, :func:`bgai.agents.pubeval.is_race`),
       rules 1-5 give way to the racer's rules (:class:`RacerAgent`).
    """

    name = "blocker"

    def evaluate_plays(self, boards: np.ndarray, afterstates: np.ndarray, src: np.ndarray) -> np.ndarray:
        a = as_batch(afterstates)
        own = a[:, 0, :24]
        made = own >= 2
        points = made.astype(np.float64) @ BLOCK_POINT_VALUES
        prime = longest_prime(a).astype(np.float64)
        prime_bonus = np.where(prime >= 2, 1.5 * prime, 0.0) + np.where(prime >= 6, 6.0, 0.0)
        hits = a[:, 1, BAR].astype(np.float64)
        exposed = exposed_blots(a).sum(axis=1)
        blots = (own == 1).sum(axis=1)
        pips = pip_counts(a).astype(np.float64)
        off = 15 - a[:, 0].sum(axis=1, dtype=np.int16)
        lead = pips[:, 1] - pips[:, 0]
        contact = points + prime_bonus + 4.0 * hits - 3.0 * exposed - 0.5 * (blots - exposed) + 0.05 * lead + off
        return np.where(is_race(boards)[np.asarray(src)], racer_scores(a), contact)
