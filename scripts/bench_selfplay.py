#!/usr/bin/env python
"""Benchmark: self-play training speed and network evaluation speed, beside GNU Backgammon in the same run.

Prints, for the given config (default: the shipped one, configs/tdgammon.yaml):

1. self-play **training** games per second (wall clock): the real trainer (move generation, encoding, 0-ply
   choice of every move of ``parallel_games`` games, TD(lambda) updates), after a warm-up, for ``--seconds``
   seconds, for each number of self-play processes in ``--workers`` (default: 1 and the config's), with the
   config's network and with an 80-hidden one when the config's differs (the issue's reference figure), and the
   CPU time it took (games per CPU-second of all its processes: on a busy machine the wall-clock rate of two
   processes in lock-step suffers most); with ``--backend local ray`` also with the workers as Ray actors
   (``td.backend: ray`` on a local Ray cluster of this machine's CPUs);
2. network evaluations per second (one thread): bgai's encoder + network on a batch of positions from self-play, and
   ``gnubg_nn.probabilities(board, 0)`` (GNU Backgammon's 0-ply evaluator, one call per position, as its Python
   API offers) on the same positions, and the ratio.

Usage: ``python scripts/bench_selfplay.py [--config configs/tdgammon.yaml] [--seconds 20] [--workers 1 2]
[--backend local ray] [--profile]`` (``--profile`` prints where the time of a one-process trainer goes, by
cProfile).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by the processes ``pids`` (Linux ``/proc``; 0.0 elsewhere)."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def selfplay_rate(cfg, seconds: float, warmup_steps: int = 100) -> tuple[float, float, float]:
    """(games/s, positions trained/s, games per CPU-second of the trainer's processes, 0 when unknown: Ray) of
    the trainer on ``cfg``, wall clock, after ``warmup_steps`` steps."""
    from bgai.train.td import SelfPlayTrainer

    with SelfPlayTrainer(cfg) as tr:
        pids = [os.getpid()] + [s.proc.pid for s in tr._remote if hasattr(s, "proc")]
        for _ in range(warmup_steps):
            tr.step()
        g0, p0, c0 = tr.games, tr.positions_trained, cpu_seconds(pids)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            tr.step()
        dt = time.perf_counter() - t0
        cpu = cpu_seconds(pids) - c0 if len(pids) == cfg.td.workers else 0.0
        return (tr.games - g0) / dt, (tr.positions_trained - p0) / dt, (tr.games - g0) / cpu if cpu > 0 else 0.0


#: Parts of a training step, by the function that does them (cumulative time; they do not overlap).
PARTS = [
    ("move generation", "movegen.py", "afterstates"),
    ("encoding afterstates + positions", "features.py", "_encode"),
    ("network forward (0-ply choice)", "nets.py", "__call__"),
    ("gradient: forward + backward", "selfplay.py", "gradient"),
    ("optimiser step", "optimizer.py", "wrapper"),
]


def print_shares(stats) -> None:
    """Where a one-process trainer's time goes, as shares of the profiled time."""
    total = stats.total_tt
    cum = {}
    for (fname, _, func), (_, _, _, ct, _) in stats.stats.items():
        for label, file_end, name in PARTS:
            if fname.endswith(file_end) and func == name:
                cum[label] = cum.get(label, 0.0) + ct
    # the gradient encodes the finished games' positions itself: count that part once, under the gradient
    print("where a training step's time goes (one process, cProfile):")
    for label, _, _ in PARTS:
        print(f"  {label:34s} {100 * cum.get(label, 0.0) / total:5.1f}%")
    print(f"  {'(encoding is counted in both rows above for the finished games)'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "tdgammon.yaml"))
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--workers", type=int, nargs="+", default=None,
                    help="self-play process counts to time (default: 1 and the config's)")
    ap.add_argument("--positions", type=int, default=20000)
    ap.add_argument("--backend", nargs="+", choices=["local", "ray"], default=["local"],
                    help="where the self-play workers run (td.backend); 'ray' starts a local Ray cluster")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)

    from bgai.errors import BgaiError
    from bgai.model.features import get_encoder
    from bgai.model.nets import FastForward, NetSpec, ValueNet
    from bgai.train.config import load_config
    from bgai.train.td import SelfPlayTrainer
    from bgai.util.threads import limit_threads

    how = limit_threads(1)
    try:
        cfg = load_config(args.config)
        workers = args.workers or sorted({1, cfg.td.workers})
        for w in workers:
            load_config(args.config, [f"workers={w}"])
    except BgaiError as exc:
        print(f"bench_selfplay: error: {exc}", file=sys.stderr)
        return 2
    print(f"config {os.path.relpath(args.config, ROOT)}: encoding {cfg.model.encoding}, hidden {cfg.model.hidden}, "
          f"parallel_games {cfg.td.parallel_games}, workers {cfg.td.workers}; cpus {os.cpu_count()}; every process "
          f"single-threaded (numpy BLAS limited via {how})")

    # 1. self-play training speed
    if "ray" in args.backend:
        from bgai.util import ray_backend

        print(ray_backend.connect("auto", num_cpus=os.cpu_count()))
    hiddens = [cfg.model.hidden] + ([[80]] if cfg.model.hidden != [80] else [])
    for hidden in hiddens:
        for backend in args.backend:
            for w in workers:
                if backend == "ray" and w == 1:
                    continue  # no worker: the same as local
                c = load_config(args.config, [f"hidden={hidden}", f"workers={w}", f"backend={backend}"])
                gps, pps, per_cpu = selfplay_rate(c, args.seconds)
                cpu = f", {per_cpu:6.1f} games per CPU-s" if per_cpu else ""
                print(f"self-play training, hidden {hidden}, {w} process(es), {backend}: {gps:8.1f} games/s  "
                      f"({pps:,.0f} positions trained/s, TD updates included{cpu})")

    if args.profile:
        import cProfile
        import pstats

        tr = SelfPlayTrainer(load_config(args.config, ["workers=1"]))
        for _ in range(100):
            tr.step()
        pr = cProfile.Profile()
        pr.enable()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < args.seconds:
            tr.step()
        pr.disable()
        st = pstats.Stats(pr)
        st.sort_stats("tottime").print_stats(12)
        print_shares(st)

    # 2. network evaluations per second, beside gnubg 0-ply on the same positions
    tr = SelfPlayTrainer(load_config(args.config, ["workers=1"]))
    boards = []
    while sum(len(b) for b in boards) < args.positions:
        tr.step()
        boards.append(tr.shards[0].boards.copy())
    boards = np.concatenate(boards)[: args.positions]
    enc = get_encoder(cfg.model.encoding)
    net = ValueNet(NetSpec(enc.size, tuple(cfg.model.hidden), cfg.model.activation))
    ff = FastForward(net)
    ff(enc(boards[:1000]))
    t0 = time.perf_counter()
    reps = 0
    while time.perf_counter() - t0 < min(args.seconds, 10.0):
        ff(enc(boards))
        reps += 1
    bgai_rate = reps * len(boards) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    x = enc(boards)
    t_enc = time.perf_counter() - t0
    t0 = time.perf_counter()
    ff(x)
    t_net = time.perf_counter() - t0
    print(f"bgai encoder+net ({cfg.model.encoding}, hidden {cfg.model.hidden}), batch {len(boards)}: {bgai_rate:12,.0f} evals/s "
          f"(encoder {t_enc / len(boards) * 1e6:.2f} us, net {t_net / len(boards) * 1e6:.2f} us per position)")
    try:
        import gnubg_nn
    except ImportError:
        print("gnubg_nn not installed: no reference figure")
        return 0
    gb = [[list(map(int, b[1])), list(map(int, b[0]))] for b in boards]  # gnubg: [opponent, side on roll]
    n = min(len(gb), 5000)
    t0 = time.perf_counter()
    for b in gb[:n]:
        gnubg_nn.probabilities(b, 0)
    gnubg_rate = n / (time.perf_counter() - t0)
    print(f"gnubg_nn.probabilities(board, 0), one call per position:   {gnubg_rate:12,.0f} evals/s")
    print(f"ratio bgai / gnubg: {bgai_rate / gnubg_rate:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
