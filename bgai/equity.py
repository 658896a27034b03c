"""Outcome probabilities and cubeless equity: the one place where perspective is swapped.

Probabilities follow GNU Backgammon's convention, an array ``(..., 5)`` float of
``[P(win), P(win gammon), P(win backgammon), P(lose gammon), P(lose backgammon)]`` for one side, cumulative:
P(win) includes gammons and backgammons, P(win gammon) includes backgammons; P(lose) = 1 - P(win).
(GNU Backgammon manual, "Evaluation"; also PROTOCOLS.md section 4.)
"""

from __future__ import annotations

import numpy as np

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
