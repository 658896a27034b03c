#!/usr/bin/env python
"""Rollout label speed: the per-position scheme against the batched one, on the same positions in one run.

Both label the positions one shard of a ``bgai label --kind rollout`` job samples
(:func:`bgai.train.labels.sample_positions`: ``--games`` self-play games of the model, each position kept with
probability ``--keep``, only ``--classes`` if given), with ``--trials`` trials, variance reduction, truncation
``--truncate`` (0 = none) at 0-ply, in this process on one thread:

* per position (datasets made before the batched scheme): one :func:`bgai.analysis.rollout.rollout_position` per
  position;
* batched (new datasets): one :func:`bgai.analysis.rollout.rollout_positions` for all of them.

Timed in CPU seconds (``time.process_time``) so that other load on the machine counts less, alternating the two
``--repeats`` times; prints labels per CPU second of each (median of the repeats) and the ratio.

Usage::

    python scripts/bench_labels.py [--model checkpoints/bgai-td128.pt[:bearoff=db]] [--games 10] [--keep 0.05]
        [--trials 144] [--truncate 0] [--classes race] [--seed 2] [--shard 0] [--repeats 2]
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from bgai.agents.registry import make_agent
from bgai.analysis.rollout import rollout_position, rollout_positions
from bgai.cli.args import BgaiArgumentParser
from bgai.train.labels import LabelSettings, parse_classes, position_seed, sample_positions, shard_seed
from bgai.util.threads import single_thread


def main() -> None:
    p = BgaiArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="checkpoints/bgai-td128.pt")
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--keep", type=float, default=0.05)
    p.add_argument("--trials", type=int, default=144)
    p.add_argument("--truncate", type=int, default=0)
    p.add_argument("--classes", default=None)
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--shard", type=int, default=0)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()
    settings = LabelSettings(model=args.model, kind="rollout", seed=args.seed, games_per_shard=args.games,
                             keep=args.keep, trials=args.trials, truncate=args.truncate,
                             classes=parse_classes(args.classes) if args.classes else ())
    agent = make_agent(args.model)
    boards = sample_positions(agent, settings, args.shard)
    n = len(boards)
    print(f"{n} positions (shard {args.shard}: {args.games} games, keep {args.keep}, classes {args.classes or 'all'}),"
          f" {args.trials} trials, VR, truncate {args.truncate or 'none'}, model {args.model}")
    trunc = args.truncate or None

    def per_position():
        return np.array([rollout_position(agent, b, trials=args.trials, truncate=trunc,
                                          seed=position_seed(args.seed, b)).equity for b in boards])

    def batched():
        return rollout_positions(agent, boards, trials=args.trials, truncate=trunc,
                                 seed=shard_seed(args.seed, args.shard)).equity

    times: dict[str, list[float]] = {"per position": [], "batched": []}
    with single_thread():
        for r in range(args.repeats):
            for name, fn in (("per position", per_position), ("batched", batched)):
                t0 = time.process_time()
                fn()
                dt = time.process_time() - t0
                times[name].append(dt)
                print(f"  repeat {r + 1} {name:12s} {dt:8.1f} CPU s  {n / dt:7.3f} labels/CPU s", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:12s} median {v:8.1f} CPU s  {n / v:7.3f} labels/CPU s")
    print(f"batched / per position speed: {med['per position'] / med['batched']:.2f}x")


if __name__ == "__main__":
    main()
