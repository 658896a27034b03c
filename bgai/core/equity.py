"""Outcome probabilities and cubeless equity: the one place where perspective is swapped.

Probabilities follow GNU Backgammon's convention, an array ``(..., 5)`` float of
``[P(win), P(win gammon), P(win backgammon), P(lose gammon), P(lose backgammon)]`` for one side, cumulative:
P(win) includes gammons and backgammons, P(win gammon) includes backgammons; P(lose) = 1 - P(win).
(GNU Backgammon manual, "Evaluation"; also PROTOCOLS.md section 4.)
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from bgai.core.board import flip, result_kind

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


#: Byte offsets of 8-byte words that cover row 0 (bytes 0..24) and row 1 (bytes 25..49) of a flattened int8 board;
#: none reads past the board's last byte, so a C-contiguous batch is read as strided uint64 words without a copy.
_ROW_WORDS = ((0, 8, 16, 17), (25, 33, 41, 42))


#: Batches up to this size are checked by one ``any`` reduction in :func:`_empty_rows` (a few microseconds), larger
#: ones by reading words.
_FEW_ROWS = 64


def _empty_rows(b: np.ndarray, rows: tuple[int, ...]) -> list[np.ndarray]:
    """For each row in ``rows``: ``(N,)`` bool, that row of each board has no checker, i.e.
    ``b[:, row].sum(axis=1, dtype=np.int16) == 0``.  An int8 batch without negative counts: a large C-contiguous
    one is read as a few 8-byte words per board (several times faster than the sum), a small one (up to
    :data:`_FEW_ROWS` boards: one call, a few microseconds) or a strided one by ``any``; any other batch is
    summed."""
    n = b.shape[0]
    if n and b.dtype == np.int8 and b.ndim == 3 and b.shape[1:] == (2, 25) and b.min() >= 0:
        if n <= _FEW_ROWS or not b.flags.c_contiguous:  # (a few boards: one reduction beats the word reads)
            empty = ~b.any(axis=2)
            return [empty[:, row] for row in rows]
        out = []
        for row in rows:
            words = _ROW_WORDS[row]
            acc = np.ndarray((n,), dtype=np.uint64, buffer=b, offset=words[0], strides=(50,)).copy()
            for o in words[1:]:
                acc |= np.ndarray((n,), dtype=np.uint64, buffer=b, offset=o, strides=(50,))
            out.append(acc == 0)
        return out
    return [b[:, row].sum(axis=1, dtype=np.int16) == 0 for row in rows]


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
    (over,) = _empty_rows(b, (1,))
    probs = np.zeros((int(over.sum()), len(OUTPUTS)), dtype=np.float64)
    if probs.shape[0]:
        _, points = result_kind(b[over])
        probs[:, 3] = points >= 2
        probs[:, 4] = points >= 3
    return over, probs


def finished_or_evaluate(boards: np.ndarray, evaluate: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Outcome probabilities of positions, exact where the game is over, ``evaluate`` for the others.

    The one place where a finished position's probabilities override an evaluator's (every
    :class:`ProbabilityAgent` that has an evaluator of its own uses it).  Over: the opponent (row 1) has borne
    off all 15 checkers, a loss for the side on roll (:func:`bgai.core.equity.finished_probabilities`: single,
    gammon or backgammon by :func:`bgai.core.board.result_kind`); or the side on roll (row 0) has (a win, the
    same rule seen from the other side; it cannot arise from play, but a caller may ask).

    Args:
        boards: ``(N, 2, 25)`` int8, side on roll in row 0.
        evaluate: ``(K, 2, 25)`` int8 boards of unfinished games -> ``(K, 5)`` probabilities (any float dtype) for
            their side on roll; called once, with ``boards`` itself when no game is over, not at all when every
            game is (or ``N == 0``).

    Returns:
        ``(N, 5)`` float64 in :data:`bgai.core.equity.OUTPUTS` order, for the side on roll.

    Raises:
        InvalidPositionError: a board where neither side has a checker.
    """
    b = np.asarray(boards)
    out = np.empty((b.shape[0], 5), dtype=np.float64)
    if b.shape[0] == 0:
        return out
    empty0, lost = _empty_rows(b, (0, 1))
    if not (empty0.any() or lost.any()):  # the common case: no game over, one call on the whole batch
        out[:] = evaluate(b)
        return out
    _, exact = finished_probabilities(b)
    won = empty0 & ~lost
    out[lost] = exact
    if won.any():
        out[won] = swap_perspective(finished_probabilities(flip(b[won]))[1])
    over = lost | won
    if not over.all():
        out[~over] = evaluate(b[~over] if over.any() else b)
    return out
