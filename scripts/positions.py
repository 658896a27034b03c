"""Benchmark positions shared by the scripts (``bench_search.py``, ``bench_http.py``): distinct positions from
seeded pubeval self-play.  Import it from a script run as ``python scripts/NAME.py`` (its folder is on the path)."""

from __future__ import annotations

import numpy as np

from bgai.agents.pubeval import PubevalAgent
from bgai.core.board import flip, is_game_over, starting_board


def selfplay_positions(total: int, seed: int, games: int = 256) -> np.ndarray:
    """``total`` distinct positions ``(total, 2, 25)`` int8 (side on roll in row 0) from seeded pubeval self-play
    of ``games`` games at a time, past each game's first two plies, shuffled with the seed."""
    rng = np.random.default_rng(seed)
    agent = PubevalAgent()
    boards = np.broadcast_to(starting_board(), (games, 2, 25)).copy()
    age = np.zeros(games, dtype=np.int64)
    seen: dict[bytes, np.ndarray] = {}
    while len(seen) < total:
        for b in boards[age >= 2]:
            seen.setdefault(b.tobytes(), b.copy())
        dice = rng.integers(1, 7, size=(games, 2))
        boards = flip(agent.choose(boards, dice, rng))
        age += 1
        over = is_game_over(boards)
        boards[over] = starting_board()
        age[over] = 0
    out = np.array(list(seen.values()), dtype=np.int8)
    return out[rng.permutation(len(out))[:total]]
