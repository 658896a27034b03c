"""Outcome probabilities and cubeless equity: the one place where perspective is swapped.

Probabilities follow GNU Backgammon's convention, an array ``(..., 5)`` float of
``[P(win), P(win gammon), P(win backgammon), P(lose gammon), P(lose backgammon)]`` for one side, cumulative:
P(win) includes gammons and backgammons, P(win gammon) includes backgammons; P(lose) = 1 - P(win).
(GNU Backgammon manual, "Evaluation"; also PROTOCOLS.md section 4.)
"""

from __future__ import annotations

import numpy as np

from bgai.core.board import result_kind

#: Output order of every probability array in bgai.
OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")


def swap_perspective(probs: np.ndarray) -> np.ndarray:
    """The same outcome probabilities seen by the other side.

    Args:
        probs: ``(..., 5)`` probabilities for one side.

    Returns:
        ``(..., 5)`` for the other side: win -> 1 - win, win gammon <-> lose gammon, win bg <-> lose bg.
    """
    p = np.asarray(probs)
    out = np.empty_like(p)
    out[..., 0] = 1.0 - p[..., 0]
    out[..., 1] = p[..., 3]
    out[..., 2] = p[..., 4]
    out[..., 3] = p[..., 1]
    out[..., 4] = p[..., 2]
    return out


def cubeless_equity(probs: np.ndarray) -> np.ndarray:
    """Cubeless money equity in points per game: ``2 P(win) - 1 + P(wg) - P(lg) + P(wbg) - P(lbg)``.

    Args:
        probs: ``(..., 5)`` probabilities.

    Returns:
        ``(...)`` float64 equity in [-3, 3].
    """
    p = np.asarray(probs, dtype=np.float64)
    return 2.0 * p[..., 0] - 1.0 + p[..., 1] - p[..., 3] + p[..., 2] - p[..., 4]


def finished_probabilities(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact outcome probabilities of the positions whose game is over, for the side on roll.

    A position handed to an evaluator with the side on roll in row 0 is finished when the *opponent* (row 1)
    has borne off all 15 checkers: it is what the mover's last play left, seen by the side now "on roll", who
    has lost.  The loss is a single, a gammon or a backgammon as :func:`bgai.core.board.result_kind` rules (gammon:
    the loser has borne off nothing; backgammon: also a checker on the bar or in the winner's home board).
    Every value agent must value these boards exactly, never by its network (bgai.agents.neural and
    bgai.agents.numpy_bot share this function so they choose the same plays).

    Args:
        boards: ``(N, 2, 25)`` int8, side on roll in row 0 (:mod:`bgai.core.board` layout).  A board whose row 0
            is empty (the side on roll has already won) is not "over" here: it cannot arise from play.

    Returns:
        ``(over, probs)``: ``over`` ``(N,)`` bool, True where row 1 has no checker; ``probs`` ``(K, 5)``
        float64 in :data:`OUTPUTS` order for the ``K = over.sum()`` finished boards, in input order:
        ``[0, 0, 0, lose_gammon, lose_backgammon]`` with ``lose_gammon`` = 1 for a gammon or backgammon,
        ``lose_backgammon`` = 1 for a backgammon (cumulative, as every bgai probability array).

    Raises:
        InvalidPositionError: a board where both sides have no checker (from :func:`bgai.core.board.result_kind`).
    """
    b = np.asarray(boards)
    over = b[:, 1].sum(axis=1, dtype=np.int16) == 0
    probs = np.zeros((int(over.sum()), len(OUTPUTS)), dtype=np.float64)
    if probs.shape[0]:
        _, points = result_kind(b[over])
        probs[:, 3] = points >= 2
        probs[:, 4] = points >= 3
    return over, probs
