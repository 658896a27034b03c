"""Benchmark bgai's batched move generator against GNU Backgammon's (gnubg_nn.moves), same positions, one run.

Positions: the reference fixture tests/data/reference_positions.npz (positions from real play, each with all
21 rolls), shuffled with a seed and repeated to fill the largest batch.  bgai runs batched at batch sizes
1, 1024, 4096 and 16384; gnubg_nn.moves is called once per position (its Python call included, as a user
would call it).  Prints afterstates per second for each (each generator's own count: gnubg lists nothing when
no play is legal, bgai returns the unchanged board), the ratio bgai/gnubg, and peak memory of one
afterstates() call at the largest batch (tracemalloc, numpy allocations) and the process's max RSS.

Both are timed with the same clock, process CPU time by default (steadier than wall time on a shared machine;
the work is single-threaded), ``--wall`` for wall time.  Each figure is given twice: from the best round of
each block of pairs (the usual benchmark figure), and from the median round (what a loaded machine gives).

bgai's compiled generator (numba) is loaded first when available; ``BGAI_NUMBA=0`` times the numpy path.

``--old FILE`` (a saved copy of an earlier bgai/core/movegen.py) times that version too, in the same rounds
(the two taking turns going first), after checking that its output is identical.

Usage: ``python scripts/bench_movegen.py [--seed 1] [--repeat 5] [--batches 1 1024 4096 16384] [--wall]
[--old FILE]``
"""

from __future__ import annotations

import importlib.util
import os
import resource
import sys
import time
import tracemalloc

import gnubg_nn
import numpy as np

from bgai.cli.args import BgaiArgumentParser
from bgai.core.movegen import afterstates, use_compiled

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


def bench_bgai(B: np.ndarray, D: np.ndarray, batch: int, repeat: int, fast: bool, fn=afterstates) -> tuple[float, int]:
    """Best time of ``repeat`` passes of afterstates() over all pairs in batches, and the rows it returned."""
    best, count = float("inf"), 0
    for _ in range(repeat):
        t = CLOCK()
        c = 0
        for i in range(0, len(B), batch):
            after, _ = fn(B[i : i + batch], D[i : i + batch], validate=not fast)
            c += len(after)
        best = min(best, CLOCK() - t)
        count = c
    return best, count


def main() -> None:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5, help="rounds; each figure is the best round")
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 1024, 4096, 16384])
    ap.add_argument("--positions", type=int, default=32768, help="(position, roll) pairs timed per batch size")
    ap.add_argument("--no-validate", action="store_true", help="time afterstates(..., validate=False)")
    ap.add_argument("--wall", action="store_true", help="time with wall time instead of process CPU time")
    ap.add_argument("--cpu-time", action="store_true", help="(the default) time with process CPU time")
    ap.add_argument("--old", default=None,
                    help="a saved copy of an earlier bgai/core/movegen.py to time beside (outputs checked identical)")
    args = ap.parse_args()
    impls = {"bgai": afterstates}
    if args.old:
        spec = importlib.util.spec_from_file_location("movegen_old", args.old)
        old = importlib.util.module_from_spec(spec)
        sys.modules["movegen_old"] = old
        spec.loader.exec_module(old)
        impls["old"] = old.afterstates
    global CLOCK
    CLOCK = time.perf_counter if args.wall else time.process_time
    compiled = use_compiled()  # the compiled generator unless BGAI_NUMBA=0 or no numba (its load is not timed)
    total = max(args.positions, max(args.batches))
    B, D = load_pairs(args.seed, total)
    small = min(len(B), 2000)  # batch sizes below 256 are timed on the first 2000 pairs only
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; pairs: {len(B)} "
          f"({small} for batch < 256); validate={'off' if args.no_validate else 'on'}; "
          f"clock: {'wall' if args.wall else 'process CPU'}; rounds: {args.repeat}; "
          f"bgai generator: {'compiled (numba)' if compiled else 'numpy'}")
    for name, fn in impls.items():
        fn(B[:64], D[:64])  # warm-up (builds the delta table)
        if name != "bgai":
            for batch in args.batches:
                same = all(
                    np.array_equal(x, y)
                    for i in range(0, min(len(B), 4 * batch), batch)
                    for x, y in zip(fn(B[i : i + batch], D[i : i + batch]),
                                    afterstates(B[i : i + batch], D[i : i + batch]))
                )
                print(f"{name} batch {batch}: output identical to bgai's: {same}")
    # The pairs are timed in blocks of the largest batch size; in every round each block is timed with gnubg
    # and then with bgai at every batch size, so that a change in machine load hits both alike.  Each figure
    # sums, over the blocks, the best round of that block.
    big = max(args.batches)
    blocks = [(i, min(i + big, len(B))) for i in range(0, len(B), big)]
    small_blocks = [(0, small)]
    g_times: dict[tuple, list[float]] = {}
    g_count: dict[tuple, int] = {}
    b_times: dict[tuple, list[float]] = {}
    b_count: dict[tuple, int] = {}
    for rnd in range(args.repeat):
        for sub in sorted({batch < 256 for batch in args.batches}):
            for lo, hi in small_blocks if sub else blocks:
                t, c = bench_gnubg(B[lo:hi], D[lo:hi], 1)
                key = (sub, lo)
                g_times.setdefault(key, []).append(t)
                g_count[key] = c
                for batch in args.batches:
                    if (batch < 256) != sub:
                        continue
                    # two passes back to back, the second timed: steady state, as gnubg's loop is (the first
                    # pass after gnubg's loop pays for cold caches and a cold memory allocator); with --old the
                    # two implementations take turns going first
                    names = list(impls) if rnd % 2 == 0 else list(impls)[::-1]
                    for name in names:
                        t, c = bench_bgai(B[lo:hi], D[lo:hi], batch, 2, args.no_validate, impls[name])
                        key = (batch, lo) if name == "bgai" else (name, batch, lo)
                        b_times.setdefault(key, []).append(t)
                        b_count[key] = c

    def total(times: dict, count: dict, first, stat) -> tuple[float, int]:
        keys = [k for k in times if k[: len(first)] == first] if isinstance(first, tuple) else [
            k for k in times if k[0] == first
        ]
        return sum(stat(times[k]) for k in keys), sum(count[k] for k in keys)

    for label, stat in (("best round", min), ("median round", lambda v: float(np.median(v)))):
        print(f"-- {label} of each block:")
        gfirst = False if any(b >= 256 for b in args.batches) else True
        gt, gc = total(g_times, g_count, gfirst, stat)
        print(f"gnubg_nn.moves per position : {gc / gt / 1e6:7.3f} M afterstates/s  ({gc} in {gt:.3f} s)")
        for batch in args.batches:
            rt, rc = total(g_times, g_count, batch < 256, stat)
            t, c = total(b_times, b_count, batch, stat)
            print(f"bgai batch {batch:6d}           : {c / t / 1e6:7.3f} M afterstates/s  ({c} in {t:.3f} s)  "
                  f"ratio {(c / t) / (rc / rt):5.2f}x")
            if "old" in impls:
                ot, oc = total(b_times, b_count, ("old", batch), stat)
                print(f"old  batch {batch:6d}           : {oc / ot / 1e6:7.3f} M afterstates/s  ({oc} in {ot:.3f} s)  "
                      f"ratio {(oc / ot) / (rc / rt):5.2f}x   new/old {ot / t:5.2f}x")
    tracemalloc.start()
    afterstates(B[:big], D[:big], validate=not args.no_validate)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of one afterstates() call at batch {big}: {peak / 2**20:.1f} MiB (tracemalloc); "
          f"process max RSS {rss:.0f} MiB; load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
