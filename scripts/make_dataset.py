#!/usr/bin/env python
"""Make a supervised dataset: positions from self-play of one agent, labelled by another's probabilities.

Usage: ``python scripts/make_dataset.py --teacher gnubg --player default --positions 20000 --out data/x.npz``

``--player`` (any agent spec, default ``default``, the shipped model) plays ``--games`` games at a time from the
starting position; with probability ``--explore`` a move is a uniformly random legal play instead, so the
positions are more varied than the player's own games.  Every position with a side on roll (before it rolls)
is kept, once, until ``--positions`` distinct ones are collected (finished games are not: their value is exact).  The ``--teacher``
(an agent with probabilities: ``gnubg``, a checkpoint ``.pt``, an export) labels them; the file is an ``.npz``
with ``boards`` and ``targets`` (:func:`bgai.train.supervised.save_dataset`, written atomically), for
``configs/supervised.yaml``.  Everything random comes from ``--seed``.
"""

from __future__ import annotations

import sys
import time

from bgai.cli.args import BgaiArgumentParser


def main(argv=None) -> int:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teacher", required=True, help="agent spec with probabilities: gnubg, model.pt[:ply=N], ...")
    ap.add_argument("--player", default="default", help="agent spec that plays the games (default: the shipped model)")
    ap.add_argument("--positions", type=int, default=20000, help="positions to collect")
    ap.add_argument("--games", type=int, default=256, help="games played at a time")
    ap.add_argument("--explore", type=float, default=0.1, help="probability of a random legal play")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="the .npz file to write")
    args = ap.parse_args(argv)

    import numpy as np

    from bgai.agents.base import ProbabilityAgent
    from bgai.agents.registry import make_agent
    from bgai.core.board import flip, starting_board
    from bgai.core.movegen import afterstates
    from bgai.errors import BgaiError
    from bgai.train.supervised import save_dataset

    try:
        teacher, player = make_agent(args.teacher), make_agent(args.player)
        if not isinstance(teacher, ProbabilityAgent):
            raise BgaiError(f"teacher {args.teacher!r} gives no probabilities; use gnubg or a model")
        rng = np.random.default_rng(args.seed)
        boards = np.broadcast_to(starting_board(), (args.games, 2, 25)).copy()
        kept, seen, t0 = [], set(), time.perf_counter()
        while len(kept) < args.positions:
            for b in boards:
                key = b.tobytes()
                if key not in seen:
                    seen.add(key)
                    kept.append(b.copy())
            dice = rng.integers(1, 7, size=(len(boards), 2))
            chosen = player.choose(boards, dice, rng)
            explore = np.flatnonzero(rng.random(len(boards)) < args.explore)
            if explore.size:
                after, src = afterstates(boards[explore], dice[explore])
                counts = np.bincount(src, minlength=explore.size)
                starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
                chosen[explore] = after[starts + (rng.random(explore.size) * counts).astype(np.int64)]
            boards = flip(chosen)
            over = (boards.sum(axis=2) == 0).any(axis=1)
            boards[over] = starting_board()
        positions = np.stack(kept[: args.positions])
        targets = teacher.probabilities(positions)
        save_dataset(args.out, positions, targets)
    except BgaiError as exc:
        print(f"make_dataset: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {len(positions)} positions labelled by {args.teacher} "
          f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
