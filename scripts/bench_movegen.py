"""Benchmark bgai's batched move generator against GNU Backgammon's (gnubg_nn.moves), same positions, one run.

Positions: the reference fixture tests/data/reference_positions.npz (positions from real play, each with all
21 rolls), shuffled with a seed and repeated to fill the largest batch.  bgai runs batched at batch sizes
1, 1024, 4096 and 16384; gnubg_nn.moves is called once per position (its Python call included, as a user
would call it).  Prints afterstates per second for each (each generator's own count: gnubg lists nothing when
no play is legal, bgai returns the unchanged board), the ratio bgai/gnubg, and peak memory of one
afterstates() call at the largest batch (tracemalloc, numpy allocations) and the process's max RSS.

Usage: ``python scripts/bench_movegen.py [--seed 1] [--repeat 3] [--batches 1 1024 4096 16384]``
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import tracemalloc

import numpy as np

import gnubg_nn
from bgai.movegen import afterstates

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "reference_positions.npz")


def load_pairs(seed: int, total: int) -> tuple[np.ndarray, np.ndarray]:
    boards = np.load(FIXTURE)["boards"]
    rolls = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)])
    B = np.repeat(boards, len(rolls), axis=0)
    D = np.tile(rolls, (len(boards), 1))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(B))
    reps = -(-total // len(B))
    order = np.concatenate([order] * reps)[:total]
    return np.ascontiguousarray(B[order]), np.ascontiguousarray(D[order])


CLOCK = time.perf_counter


def bench_gnubg(B: np.ndarray, D: np.ndarray, repeat: int) -> tuple[float, int]:
    """Best time of ``repeat`` runs of gnubg_nn.moves over all pairs, and the afterstates it listed."""
    gbs = [[b[1].tolist(), b[0].tolist()] for b in B]  # conversion to gnubg's layout is not timed
    dice = D.tolist()
    best, count = float("inf"), 0
    moves = gnubg_nn.moves
    for _ in range(repeat):
        t = CLOCK()
        c = 0
        for gb, (d1, d2) in zip(gbs, dice):
            c += len(moves(gb, d1, d2))
        best = min(best, CLOCK() - t)
        count = c
    return best, count


def bench_bgai(B: np.ndarray, D: np.ndarray, batch: int, repeat: int, fast: bool) -> tuple[float, int]:
    """Best time of ``repeat`` runs of afterstates() over all pairs in batches, and the rows it returned."""
    best, count = float("inf"), 0
    for _ in range(repeat):
        t = CLOCK()
        c = 0
        for i in range(0, len(B), batch):
            after, _ = afterstates(B[i : i + batch], D[i : i + batch], validate=not fast)
            c += len(after)
        best = min(best, CLOCK() - t)
        count = c
    return best, count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 1024, 4096, 16384])
    ap.add_argument("--positions", type=int, default=32768, help="(position, roll) pairs timed per batch size")
    ap.add_argument("--no-validate", action="store_true", help="time afterstates(..., validate=False)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time with process CPU time instead of wall time (steadier on a loaded machine)")
    args = ap.parse_args()
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time
    total = max(args.positions, max(args.batches))
    B, D = load_pairs(args.seed, total)
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; pairs: {len(B)}; "
          f"validate={'off' if args.no_validate else 'on'}; clock: {'CPU' if args.cpu_time else 'wall'}")
    afterstates(B[:64], D[:64])  # warm-up (builds the delta table)
    g_time, g_count = bench_gnubg(B, D, args.repeat)
    g_rate = g_count / g_time
    print(f"gnubg_nn.moves per position : {g_rate / 1e6:7.3f} M afterstates/s  ({g_count} in {g_time:.3f} s)")
    for batch in args.batches:
        n = len(B) if batch >= 256 else min(len(B), 2000)
        t, c = bench_bgai(B[:n], D[:n], batch, args.repeat, args.no_validate)
        if n < len(B):
            gt, gc = bench_gnubg(B[:n], D[:n], args.repeat)
            ref = gc / gt
        else:
            ref = g_rate
        rate = c / t
        print(f"bgai batch {batch:6d}           : {rate / 1e6:7.3f} M afterstates/s  ({c} in {t:.3f} s)  "
              f"ratio {rate / ref:5.2f}x")
    big = max(args.batches)
    tracemalloc.start()
    afterstates(B[:big], D[:big], validate=not args.no_validate)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of one afterstates() call at batch {big}: {peak / 2**20:.1f} MiB (tracemalloc); "
          f"process max RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
