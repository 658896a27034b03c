"""The random bot: a uniformly random legal play (one of the distinct afterstates), seeded by the caller."""

from __future__ import annotations

import numpy as np

from bgai.agents.base import Agent
from bgai.core.board import as_batch
from bgai.core.movegen import afterstates


class RandomAgent(Agent):
    """Chooses uniformly among the distinct legal afterstates of each position.

    Uniform over distinct resulting positions (as produced by :func:`bgai.core.movegen.afterstates`), not over step
    orders.  All randomness comes from the ``rng`` passed to :meth:`choose`: one uniform draw per position, in
    input order, so the same generator state gives the same plays.
    """

    name = "random"

    def choose(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:

        boards = as_batch(boards)
        n = boards.shape[0]
        after, src = afterstates(boards, dice)
        counts = np.bincount(src, minlength=n)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pick = starts + np.minimum((rng.random(n) * counts).astype(np.int64), counts - 1)
        return after[pick]
