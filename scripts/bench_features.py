"""Benchmark bgai's input encoders (bgai.model.features) on self-play afterstates, one run.

Positions: every afterstate of a few hundred moves of 512 parallel self-play games (each game plays a
uniformly random legal move, a finished game restarts), flipped to the side on roll as training encodes them,
shuffled with a seed and cut to each batch size.  Each encoder is called on the same fixed batch.

For every batch size the script prints microseconds per position (best round and median round) of
``tesauro198`` and ``extended``, and the ratio extended/tesauro198: Tesauro's encoding is the reference for
scale (a gather and a copy per position; gnubg_nn has no encoder API to compare with).  ``--encoders`` adds
``contact`` and ``race`` (gnubg's inputs; ``race`` on the race positions among the afterstates only).  With
compiled kernels available (numba, :mod:`bgai.util.jit`) every encoder is timed twice, interleaved:
``compiled=False`` (the numpy reference, "numpy") and ``compiled=True`` (the kernel), with the speedup, after
one untimed call that loads the kernel; the outputs are checked to be bit-identical.  With ``--old FILE``
(a saved copy of an earlier bgai/model/features.py) that module's encoders are timed too, interleaved round by round
with the current ones so that both see the same machine load, and their outputs are checked to be identical.

The clock is process CPU time by default (steadier than wall time on a shared machine; the encoders are
single-threaded numpy), ``--wall`` for wall time.  Other jobs on the machine still change the figures, so only
compare figures of the same run.

Usage: ``python scripts/bench_features.py [--batches 1000 10000 50000] [--repeat 9] [--seed 1] [--wall]
[--encoders tesauro198 extended contact race] [--old /tmp/features_old.py]``
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import time

import numpy as np

from bgai.cli.args import BgaiArgumentParser
from bgai.core.board import flip, is_game_over, starting_board
from bgai.core.movegen import afterstates
from bgai.model.features import ENCODERS, extended, tesauro198
from bgai.util import jit


def selfplay_afterstates(total: int, seed: int, games: int = 512) -> np.ndarray:
    """``total`` afterstates (side on roll in row 0) of random-move self-play, shuffled."""
    rng = np.random.default_rng(seed)
    boards = np.broadcast_to(starting_board(), (games, 2, 25)).copy()
    parts, have, step = [], 0, 0
    while have < total:
        after, src = afterstates(boards, rng.integers(1, 7, size=(games, 2)), validate=False)
        if step >= 10:  # leave the openings
            parts.append(flip(after))
            have += after.shape[0]
        # each game plays a random one of its afterstates (src is sorted: rows of game i are a block)
        starts = np.searchsorted(src, np.arange(games))
        counts = np.diff(np.append(starts, src.size))
        boards = flip(after[starts + (rng.random(games) * counts).astype(np.int64)])
        boards[is_game_over(boards)] = starting_board()
        step += 1
    out = np.concatenate(parts)
    return np.ascontiguousarray(out[rng.permutation(out.shape[0])[:total]])


def load_module(path: str):
    spec = importlib.util.spec_from_file_location("features_old", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["features_old"] = mod  # dataclasses look the module up
    spec.loader.exec_module(mod)
    return mod


def time_rounds(fns: dict, x: np.ndarray, repeat: int, clock) -> dict[str, list[float]]:
    """Seconds per position of each function, ``repeat`` rounds, the functions interleaved within a round."""
    n = x.shape[0]
    calls = max(1, 20000 // n)  # about 20,000 positions per timed block
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = clock()
            for _ in range(calls):
                fn(x)
            times[name].append((clock() - t0) / (calls * n))
    return times


def main() -> None:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--wall", action="store_true", help="time wall clock instead of process CPU time")
    ap.add_argument("--encoders", nargs="+", default=["tesauro198", "extended"], choices=sorted(ENCODERS))
    ap.add_argument("--old", default=None, help="a saved copy of an earlier bgai/model/features.py to time beside")
    args = ap.parse_args()

    boards = selfplay_afterstates(max(args.batches), args.seed)
    race = np.ascontiguousarray(boards[(boards[:, :, 23:] == 0).all(axis=(1, 2))])
    if args.old:
        old = load_module(args.old)
        fns = {
            "old tesauro198": old.tesauro198,
            "tesauro198": tesauro198,
            "old extended": old.extended,
            "extended": extended,
        }
        for name in ("tesauro198", "extended"):
            same = np.array_equal(getattr(old, name)(boards), fns[name](boards))
            print(f"{name}: output identical to --old on {boards.shape[0]} positions: {same}")
    elif jit.AVAILABLE:
        fns = {}
        for name in args.encoders:
            enc = ENCODERS[name].encode
            fns[f"{name} numpy"] = functools.partial(enc, compiled=False)
            fns[name] = functools.partial(enc, compiled=True)
            x = race if ENCODERS[name].races_only else boards
            same = np.array_equal(fns[name](x).view(np.int32), fns[f"{name} numpy"](x).view(np.int32))
            print(f"{name}: compiled output bit-identical to numpy on {x.shape[0]} positions: {same}")
    else:
        fns = {name: ENCODERS[name].encode for name in args.encoders}
    clock = time.perf_counter if args.wall else time.process_time
    print(
        f"{boards.shape[0]} self-play afterstates ({race.shape[0]} races); {'wall' if args.wall else 'CPU'} us per "
        f"position, best / median of {args.repeat} rounds"
    )
    for n in args.batches:
        t = {}
        for group in ("main", "race"):
            part = {k: f for k, f in fns.items() if ENCODERS[k.split()[0]].races_only == (group == "race")}
            x = (race if group == "race" else boards)[:n]
            if part and x.shape[0]:
                t.update(time_rounds(part, x, args.repeat, clock))
        best = {k: min(v) * 1e6 for k, v in t.items()}
        med = {k: float(np.median(v)) * 1e6 for k, v in t.items()}
        cells = "  ".join(f"{k} {best[k]:.3f} / {med[k]:.3f}" for k in t)
        line = f"batch {n:6d}: {cells}"
        if "extended" in best and "tesauro198" in best:
            line += f"  extended/tesauro198 {best['extended'] / best['tesauro198']:.2f}"
        if args.old:
            line += "  speedup tesauro198 {:.2f}x extended {:.2f}x".format(
                best["old tesauro198"] / best["tesauro198"], best["old extended"] / best["extended"]
            )
        elif jit.AVAILABLE:
            line += "  compiled speedup (median) " + " ".join(
                f"{k} {med[k + ' numpy'] / med[k]:.2f}x" for k in t if k + " numpy" in med
            )
        print(line)


if __name__ == "__main__":
    main()
