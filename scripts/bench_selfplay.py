#!/usr/bin/env python
"""Benchmark: self-play training speed and network evaluation speed, beside GNU Backgammon in the same run.

Prints, for the given config (default: the shipped one, configs/tdgammon.yaml):

1. self-play **training** games per second (wall clock): the real trainer (move generation, encoding, 0-ply
   choice of every move of ``parallel_games`` games, TD(lambda) updates), after a warm-up, for ``--seconds``
   seconds, for each number of self-play processes in ``--workers`` (default: 1 and the config's), with the
   config's network and with an 80-hidden one when the config's differs (the issue's reference figure);
   beside the reference of the speed issue, measured in the same run just before: Open Sage's C++ self-play
   trainer ``bgbot_cpp.td_train`` (PyPI ``bgsage``, one thread, TD(0), Tesauro's inputs) at the same hidden size
   (80 and 128 hidden units), and the ratios bgai / bgsage for 1 and 2 processes (skipped, with a message, when
   bgsage is not installed: ``pip install 'bgai[bgsage]'``); with ``--backend local ray``
   also with the workers as Ray actors (``td.backend: ray`` on a private local Ray cluster of this machine's
   CPUs, its workers at nice 0 like the local ones; on a machine busy with other sessions the wall-clock figures
   of the two backends follow the load, measured minutes apart);
2. network evaluations per second (one thread): bgai's encoder + network on a batch of positions from self-play, and
   ``gnubg_nn.probabilities(board, 0)`` (GNU Backgammon's 0-ply evaluator, one call per position, as its Python
   API offers) on the same positions, and the ratio.

Usage: ``python scripts/bench_selfplay.py [--config configs/tdgammon.yaml] [--seconds 20] [--workers 1 2]
[--backend local ray] [--profile]`` (``--profile`` prints where the time of a one-process trainer goes, by cProfile).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from bgai.cli.args import BgaiArgumentParser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def selfplay_rate(cfg, seconds: float, warmup_steps: int = 100) -> tuple[float, float, float]:
    """(games/s, positions trained/s, games per CPU second of this process) of the trainer on ``cfg``, wall clock,
    after ``warmup_steps`` steps (the CPU figure counts the whole work only with one process: ``workers: 1``)."""
    from bgai.train.td import SelfPlayTrainer

    with SelfPlayTrainer(cfg) as tr:
        for _ in range(warmup_steps):
            tr.step()
        g0, p0 = tr.games, tr.positions_trained
        t0, c0 = time.perf_counter(), time.process_time()
        while time.perf_counter() - t0 < seconds:
            tr.step()
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        return (tr.games - g0) / dt, (tr.positions_trained - p0) / dt, (tr.games - g0) / max(cpu, 1e-9)


def bgsage_td_rate(hidden: int, seconds: float, warmup_games: int = 200) -> tuple[float, float] | None:
    """(games/s wall clock, games per CPU second) of Open Sage's single-thread C++ TD trainer ``bgbot_cpp.td_train``
    with ``hidden`` hidden units, from fresh weights: a warm-up of ``warmup_games`` games sizes one timed run of
    about ``seconds`` seconds.  None when bgsage is not installed.  Its weight files go to a temporary folder and
    its progress lines (printed by the C++ code on file descriptor 1) are discarded."""
    try:
        import bgbot_cpp
    except ImportError:
        return None
    import tempfile

    def run(n: int, folder: str) -> tuple[float, float]:
        sys.stdout.flush()
        saved = os.dup(1)
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                t0, c0 = time.perf_counter(), time.process_time()
                bgbot_cpp.td_train(n_games=n, n_hidden=hidden, seed=1, benchmark_interval=10**9,
                                   model_name="bench", models_dir=folder)
                return time.perf_counter() - t0, time.process_time() - c0
            finally:
                os.dup2(saved, 1)
                os.close(saved)

    with tempfile.TemporaryDirectory() as folder:
        wall, _ = run(warmup_games, folder)
        n = max(warmup_games, int(seconds * warmup_games / max(wall, 1e-9)))
        wall, cpu = run(n, folder)
    return n / wall, n / max(cpu, 1e-9)


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
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
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

    # 1. self-play training speed, each hidden size just after bgsage's td_train at that size
    hiddens = [cfg.model.hidden] + ([[80]] if cfg.model.hidden != [80] else [])
    table = []
    for hidden in hiddens:
        ref = bgsage_td_rate(hidden[0], args.seconds) if len(hidden) == 1 else None
        if ref is not None:
            print(f"bgsage td_train (C++, one thread, TD(0)), hidden {hidden[0]}: {ref[0]:8.1f} games/s "
                  f"({ref[1]:,.0f} games per CPU second)")
        row = {}
        for w in workers:
            c = load_config(args.config, [f"hidden={hidden}", f"workers={w}"])
            gps, pps, gpc = selfplay_rate(c, args.seconds)
            row[w] = gps
            if w == 1:
                row["cpu"] = gpc
            print(f"self-play training, hidden {hidden}, {w} process(es): {gps:8.1f} games/s  "
                  f"({pps:,.0f} positions trained/s, TD updates included)")
        if "ray" in args.backend:
            import ray
        for w in workers if "ray" in args.backend else []:
            if w > 1:  # workers - 1 Ray actors (one worker: none, the same as local)
                if not ray.is_initialized():  # a private local cluster (not one another user started here)
                    # its workers at nice 0, as bgai.util.ray_backend.connect starts a local cluster's
                    os.environ.setdefault("RAY_worker_niceness", "0")
                    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
                             configure_logging=False)
                c = load_config(args.config, [f"hidden={hidden}", f"workers={w}", "backend=ray"])
                gps, pps, _ = selfplay_rate(c, args.seconds)
                print(f"self-play training, hidden {hidden}, {w} process(es), workers on Ray: {gps:8.1f} games/s  "
                      f"({pps:,.0f} positions trained/s, TD updates included)")
        table.append((hidden, row, ref))
    if all(ref is None for _, _, ref in table):
        print("bgsage not installed (pip install 'bgai[bgsage]'): no td_train reference figure")
    else:
        print("self-play training, games/s (wall clock, this run; on a busy machine the wall-clock ratios follow the "
              "load, the per-CPU-second one does not):")
        print("  hidden  " + "".join(f"bgai {w} proc  " for w in workers) + "bgsage td_train  "
              + "".join(f"ratio {w} proc  " for w in workers) + "| per CPU second: bgai 1 proc  bgsage  ratio")
        for hidden, row, ref in table:
            if ref is None:
                continue
            cpu = (f"| {row['cpu']:27.1f}  {ref[1]:6.1f}  {row['cpu'] / ref[1]:4.2f}x" if "cpu" in row else "")
            print(f"  {hidden[0]:>6}  " + "".join(f"{row[w]:11.1f}  " for w in workers) + f"{ref[0]:15.1f}  "
                  + "".join(f"{row[w] / ref[0]:11.2f}x " for w in workers) + cpu)

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
