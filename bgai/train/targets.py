"""TD(lambda) targets: the winner's outcome vector and forward-view lambda-returns over finished games.

The derivation (and why this is exactly offline TD(lambda)) is in :mod:`bgai.train.td`'s docstring.
"""

from __future__ import annotations

import numpy as np

from bgai.core.equity import swap_perspective

__all__ = ["terminal_targets", "lambda_returns"]


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
    # Unrolled: H_t = sum_{k=t+1}^{T-1} (1 - lambda) lambda^(k-t-1) W_k + lambda^(T-1-t) z, one matrix product
    # over all games (float64 powers, so that long games with small lambda do not underflow into denormals).
    lam = float(lam)
    pw = lam ** np.arange(tmax, dtype=np.float64)  # lambda^j, with 0^0 = 1
    ahead = np.subtract.outer(np.arange(tmax), np.arange(tmax))  # t - k
    a = np.where(ahead < 0, (1.0 - lam) * pw[np.clip(-ahead - 1, 0, tmax - 1)], 0.0)  # (tmax, tmax), row t
    w = grid.transpose(1, 0, 2).reshape(tmax, g * 5).astype(np.float64)
    h = (a @ w).reshape(tmax, g, 5).transpose(1, 0, 2)
    h += pw[::-1][None, :, None] * np.asarray(outcomes, dtype=np.float64)[:, None, :]
    ret = h.astype(np.float32)
    ret[:, odd] = swap_perspective(ret[:, odd])
    return ret[flat_game, flat_col]
