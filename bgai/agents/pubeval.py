"""Tesauro's public evaluation function (pubeval), vectorised over batches of afterstates.

pubeval is a linear function of a raw board encoding with one weight vector for contact positions and another
for races, published by Gerald Tesauro in 1993 (``pubeval.c``, posted to rec.games.backgammon) as a benchmark
opponent; GNU Backgammon ships the same figures in ``pub_eval.c``.  The weights live in
``bgai/data/pubeval_weights.json``.

Encoding (Tesauro's, restated on bgai's board layout, :mod:`bgai.board`): the afterstate is seen by the player
who moved ("the computer", row 0).  For each of its points 1..24 there are five inputs: opponent blot on the
point; own count == 1; own count >= 2; own count == 3; ``(own count - 3) / 2`` when >= 4.  Input 120 is the
opponent's checkers on the bar / 2, input 121 the computer's checkers borne off / 15.  The computer's own
checkers on the bar are not an input (as in the original).  An afterstate with all 15 checkers off scores
99999999.  Whether the race or the contact weights are used is decided by the position **before** the play
(Tesauro: "race ... should be set based on the INITIAL position BEFORE the move"), with GNU Backgammon's
definition of a race (:func:`is_race`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

import numpy as np

from bgai.agents.base import Agent, best_per_input
from bgai.board import BAR, as_batch

#: Score of an afterstate with every checker borne off (Tesauro's constant).
WIN_SCORE = 99999999.0


@lru_cache(maxsize=1)
def weights() -> dict[str, np.ndarray]:
    """pubeval's weights: ``{'race': (122,) float64, 'contact': (122,) float64}`` in Tesauro's input order."""
    text = resources.files("bgai").joinpath("data/pubeval_weights.json").read_text(encoding="utf-8")
    raw = json.loads(text)
    out = {k: np.asarray(raw[k], dtype=np.float64) for k in ("race", "contact")}
    for k, w in out.items():
        if w.shape != (122,):  # pragma: no cover - shipped data
            raise RuntimeError(f"pubeval {k} weights have shape {w.shape}, expected (122,)")
    return out


@lru_cache(maxsize=1)
def _by_column() -> np.ndarray:
    """Weights rearranged for bgai's layout: ``(2, 7, 24)`` = [race/contact, input kind, own column].

    Kinds 0..4 are the five point inputs indexed by the computer's column (0 = its 1-point); kind 0 (opponent
    blot) is indexed by the **opponent's** column instead, which is the same block reversed.  Kinds 5 and 6 hold
    the bar and off weights in element 0.
    """
    out = np.zeros((2, 7, 24), dtype=np.float64)
    for r, key in enumerate(("race", "contact")):
        w = weights()[key]
        blocks = w[:120].reshape(24, 5)  # block k = computer's point 24 - k
        own = blocks[::-1]  # row c = computer's column c (point c + 1)
        out[r, 0] = blocks[:, 0]  # opponent blot: block k = computer point 24-k = opponent column k
        out[r, 1:5] = own[:, 1:5].T
        out[r, 5, 0] = w[120]
        out[r, 6, 0] = w[121]
    return out


def is_race(boards: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: no contact left, i.e. every checker of each side has passed every checker of the other.

    Same test as GNU Backgammon's ``ClassifyPosition(...) <= CLASS_RACE``: with ``a`` the column of the side to
    move's rearmost checker and ``b`` the opponent's (bar = column 24, -1 for none), contact iff ``a + b > 22``.
    Finished games count as races.
    """
    b = as_batch(boards)
    cols = np.arange(25)
    back0 = np.where(b[:, 0] > 0, cols, -1).max(axis=1)
    back1 = np.where(b[:, 1] > 0, cols, -1).max(axis=1)
    return (back0 + back1) <= 22


def pubeval_scores(afterstates: np.ndarray, race: np.ndarray | bool) -> np.ndarray:
    """pubeval score of each afterstate for the player who moved into it.

    Args:
        afterstates: ``(M, 2, 25)`` int8, row 0 the player who moved ("the computer").
        race: ``(M,)`` bool or one bool: use the race weights (decided by the position before the play).

    Returns:
        ``(M,)`` float64 scores, higher is better; :data:`WIN_SCORE` where all 15 checkers are off.
    """
    a = as_batch(afterstates)
    m = a.shape[0]
    race = np.broadcast_to(np.asarray(race, dtype=bool), (m,))
    wt = _by_column()[np.where(race, 0, 1)]  # (M, 7, 24)
    own = a[:, 0, :24].astype(np.float64)
    opp = a[:, 1, :24]
    feats = np.empty((m, 5, 24), dtype=np.float64)
    feats[:, 0] = opp == 1
    feats[:, 1] = own == 1
    feats[:, 2] = own >= 2
    feats[:, 3] = own == 3
    feats[:, 4] = np.maximum(own - 3.0, 0.0) / 2.0
    score = np.einsum("mkc,mkc->m", feats, wt[:, :5])
    off = 15 - a[:, 0].sum(axis=1, dtype=np.int16)
    score += wt[:, 5, 0] * (a[:, 1, BAR].astype(np.float64) / 2.0) + wt[:, 6, 0] * (off / 15.0)
    return np.where(off == 15, WIN_SCORE, score)


class PubevalAgent(Agent):
    """Plays the afterstate with the highest pubeval score (ties: the first generated).

    The strength benchmark of the 1990s literature: GNU Backgammon 0-ply wins about +0.63 ppg against it.
    """

    name = "pubeval"

    def evaluate_plays(self, boards: np.ndarray, afterstates: np.ndarray, src: np.ndarray) -> np.ndarray:
        """Scores of afterstates grouped by the position they come from.

        Args:
            boards: ``(N, 2, 25)`` positions before the play (choose the race or contact weights).
            afterstates: ``(M, 2, 25)`` afterstates, mover's view.
            src: ``(M,)`` int, index into ``boards`` of each afterstate.

        Returns:
            ``(M,)`` float64 pubeval scores (stand-in for equity; not in points per game).
        """
        return pubeval_scores(afterstates, is_race(boards)[np.asarray(src)])

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from bgai.movegen import afterstates

        boards = as_batch(boards)
        after, src = afterstates(boards, dice)
        scores = self.evaluate_plays(boards, after, src)
        return after[best_per_input(scores, src, len(boards))]
