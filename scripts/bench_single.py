"""Benchmark the best play of ONE position and roll at 0-ply in-process, beside the batched path and gnubg-nn.

Rows (the shipped model by default, 0-ply, one thread; each a median over the calls of every round):

* ``rank_plays``: :func:`bgai.analysis.api.rank_plays` for one (position, roll) -- every legal play ranked, with
  steps and notation -- and the best play's notation read (what ``/api/plays`` and ``bgai hint`` compute);
* ``choose``: :meth:`bgai.agents.neural.NeuralAgent.choose` for one (position, roll): the agent API's best
  afterstate (no notation);
* ``batched``: the same pairs in one call each, :func:`~bgai.analysis.api.rank_plays_batch` (and every best
  play's notation read) and ``NeuralAgent.choose`` on all pairs of a round, divided by the number of pairs (what
  one position costs when a caller batches);
* ``gnubg``: ``gnubg_nn.best_move(board, d1, d2, 0)`` per call on the same pairs (GNU Backgammon's 0-ply best
  play; when gnubg-nn is installed).

Pairs: seeded pubeval-vs-pubeval self-play positions (``scripts/positions.py``) with a seeded random roll, kept
when the roll leaves at least one play; every round uses fresh pairs (gnubg-nn caches evaluations), the same for
all rows, and the order of the rows alternates between rounds.  Clock: the process CPU time (``--wall`` for wall
time), so a busy machine's waits do not count.

The script uses only public APIs that older checkouts have too: ``PYTHONPATH=/other/checkout python
scripts/bench_single.py`` measures that checkout (run both alternately for a before/after).

``--compiled`` loads the compiled move generator and input encoders first, as ``bgai serve http`` does
(:meth:`bgai.serve.bot.Bot.prepare_to_serve`); without it the process runs as a short command does (numpy until the
kernels' warm-up, the move generator's after half a second of work).

Usage: ``python scripts/bench_single.py [--model checkpoints/bgai-td128.pt] [--pairs 300] [--rounds 3] [--seed 1]
[--wall] [--compiled]``
"""

from __future__ import annotations

import os
import time

import numpy as np
from positions import selfplay_positions  # scripts/positions.py

from bgai.agents.neural import NeuralAgent
from bgai.analysis.api import rank_plays, rank_plays_batch
from bgai.cli.args import BgaiArgumentParser
from bgai.core import movegen
from bgai.core.movegen import afterstates
from bgai.util.threads import limit_threads

try:
    import gnubg_nn
except ImportError:  # optional reference
    gnubg_nn = None

DEFAULT_MODEL = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "bgai-td128.pt")


def pairs_with_plays(boards: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random roll per position; the pairs where the roll moves a checker."""
    rng = np.random.default_rng(seed)
    dice = rng.integers(1, 7, size=(len(boards), 2))
    after, src = afterstates(boards, dice, validate=False)
    moved = np.zeros(len(boards), dtype=bool)
    moved[src[np.any(after != boards[src], axis=(1, 2))]] = True
    return boards[moved], dice[moved]


def main() -> None:
    ap = BgaiArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--pairs", type=int, default=300, help="(position, roll) pairs per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--wall", action="store_true", help="wall-clock time instead of the process CPU time")
    ap.add_argument("--compiled", action="store_true", help="load the compiled move generator and input encoders "
                    "first, as a server does (bgai.serve.bot.Bot.prepare_to_serve); default: as a short command has them")
    args = ap.parse_args()
    clock = time.perf_counter if args.wall else time.process_time

    limit_threads(1)
    agent = NeuralAgent.load(args.model, ply=0)
    if args.compiled:  # (older checkouts: the move generator's kernel only, or nothing)
        getattr(movegen, "use_compiled", lambda: None)()
        getattr(agent.bundle, "use_compiled_encoders", lambda: None)()
    rng = np.random.default_rng(args.seed)
    pool = selfplay_positions(3 * args.pairs * args.rounds + 100, args.seed, games=64)
    boards, dice = pairs_with_plays(pool, args.seed)
    if len(boards) < args.pairs * args.rounds + 50:
        raise SystemExit("not enough pairs: lower --pairs or --rounds")
    for b, d in zip(boards[-50:], dice[-50:]):  # warm-up (imports, caches), untimed
        rank_plays(agent, b, d)[0].notation
        agent.choose(b[None], d[None], rng)

    def single(fn, bs, ds) -> list[float]:
        ts = []
        for b, d in zip(bs, ds):
            t = clock()
            fn(b, d)
            ts.append(clock() - t)
        return ts

    rows = {
        "rank_plays": lambda bs, ds: single(lambda b, d: rank_plays(agent, b, d)[0].notation, bs, ds),
        "choose": lambda bs, ds: single(lambda b, d: agent.choose(b[None], d[None], rng), bs, ds),
        "batched rank_plays_batch": lambda bs, ds: _per_pair(
            clock, lambda: [r[0].notation for r in rank_plays_batch(agent, bs, ds)], len(bs)),
        "batched choose": lambda bs, ds: _per_pair(clock, lambda: agent.choose(bs, ds, rng), len(bs)),
    }
    if gnubg_nn is not None:
        def gnubg(bs, ds):
            gbs = [[b[1].tolist(), b[0].tolist()] for b in bs]  # gnubg-nn's rows: opponent, side on roll
            return single(lambda g, d: gnubg_nn.best_move(g, d[0], d[1], 0), gbs, ds.tolist())
        rows["gnubg_nn.best_move"] = gnubg
    times: dict[str, list[float]] = {k: [] for k in rows}
    for r in range(args.rounds):
        bs = boards[r * args.pairs : (r + 1) * args.pairs]
        ds = dice[r * args.pairs : (r + 1) * args.pairs]
        order = list(rows) if r % 2 == 0 else list(rows)[::-1]
        for name in order:
            times[name].extend(rows[name](bs, ds))

    print(f"-- one (position, roll) at 0-ply, {os.path.basename(args.model)}, {args.rounds} rounds x {args.pairs} "
          f"pairs, {'wall' if args.wall else 'process CPU'} clock, 1 thread"
          f"{', compiled kernels loaded first' if args.compiled else ''}; load average {os.getloadavg()[0]:.2f}")
    ref = float(np.median(times["gnubg_nn.best_move"])) if gnubg_nn is not None else None
    for name, ts in times.items():
        med = float(np.median(ts))
        p90 = float(np.percentile(ts, 90))
        what = "per pair (median of the rounds)" if name.startswith("batched") else f"median, p90 {1e3 * p90:.3f} ms"
        ratio = f"   gnubg/bgai {ref / med:5.2f}x" if ref is not None and name != "gnubg_nn.best_move" else ""
        print(f"{name:<26} {1e3 * med:8.3f} ms  ({what}){ratio}")


def _per_pair(clock, fn, n: int) -> list[float]:
    t = clock()
    fn()
    return [(clock() - t) / n]


if __name__ == "__main__":
    main()
